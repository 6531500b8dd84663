"""Deprecated: ``training.fast_vec_env.FastVecEnv`` is now ``training.sb3_vec_env.SB3VecEnv``.

Kept importable for one release; each use of an old name warns (``DeprecationWarning``).
"""

from __future__ import annotations

import warnings

from . import sb3_vec_env

#: old name -> new name in ``training.sb3_vec_env``
DEPRECATED_NAMES = {"FastVecEnv": "SB3VecEnv"}


def __getattr__(name: str) -> object:
    if name in DEPRECATED_NAMES:
        new = DEPRECATED_NAMES[name]
        warnings.warn(f"training.fast_vec_env.{name} is deprecated and will be removed in the next "
                      f"release; use training.sb3_vec_env.{new}", DeprecationWarning, stacklevel=2)
        return getattr(sb3_vec_env, new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
