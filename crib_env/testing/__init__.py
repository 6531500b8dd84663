"""Test and bench support for the rules engines (nothing here is used at run time).

``differential``: the move-by-move check of the compiled core against the plain engine.
"""
