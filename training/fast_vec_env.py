"""Deprecated: ``training.fast_vec_env.FastVecEnv`` is now ``training.sb3_vec_env.SB3VecEnv``.

Kept importable for one release; each use of the old name warns (``DeprecationWarning``).
"""

from __future__ import annotations

from crib_env.deprecation import renamed_names

#: old name -> new name in ``training.sb3_vec_env``
DEPRECATED_NAMES = {"FastVecEnv": "SB3VecEnv"}
__getattr__ = renamed_names(__name__, DEPRECATED_NAMES, "training.sb3_vec_env")
