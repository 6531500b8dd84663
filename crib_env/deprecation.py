"""Old public names kept importable for one release after a rename, each use warning."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable


def renamed_names(old_module: str, renames: dict[str, str],
                  new_module: str) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``old_module``: each old name of ``renames`` (old -> new)
    returns ``new_module``'s object under its new name, with a ``DeprecationWarning`` that names
    both; any other name is an ``AttributeError`` as usual."""

    def __getattr__(name: str) -> object:
        if name not in renames:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        new = renames[name]
        warnings.warn(f"{old_module}.{name} is deprecated and will be removed in the next release; "
                      f"use {new_module}.{new}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(new_module), new)

    return __getattr__
