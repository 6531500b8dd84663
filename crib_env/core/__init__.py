"""The compiled rules core, split by role: the state array's layout, random numbers, bit helpers,
scoring kernels, the rules, observation encoding, conversion to and from ``Game`` and the
``GameBatch`` class. ``crib_env.fast`` is its public face (documented there); import from it.
"""
