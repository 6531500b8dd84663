"""Keeps numba's on-disk kernel cache honest.

Numba keys a cached kernel on its own source file only, but our kernels freeze module-level tables
and layouts from other files (``cards.VALUE_ARRAY``, ``scoring.RANK_POINTS``, the observation
offsets) into the compiled code. An edit to one of those files would leave stale machine code
running. So each package that holds kernels ties its cache to its own sources and to those of
the packages that feed its kernels: on import it calls ``invalidate_stale_kernels(itself, feeds)``,
a digest of those sources is compared with the one stored in its ``__pycache__``, and on any
difference every cached kernel of that package is deleted (numba then recompiles on first call).
``crib_env`` does so for itself; each package above it that holds kernels registers itself the
same way from its ``__init__``, so this module knows nothing of the packages that build on it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
from pathlib import Path

#: the digest file, in the owning package's own ``__pycache__``
DIGEST_NAME = "kernel-sources.sha256"
#: numba's cache files (index and compiled data)
CACHE_SUFFIXES = (".nbi", ".nbc")


def package_dirs(names: tuple[str, ...]) -> list[Path]:
    """Source folders of the packages ``names``, found without importing them."""
    dirs = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(Path(p) for p in spec.submodule_search_locations)
    return dirs


def sources_digest(dirs: list[Path]) -> str:
    """SHA-256 over the paths and text of every ``.py`` file in ``dirs`` and their subfolders
    (``crib_env/testing`` holds kernels too)."""
    digest = hashlib.sha256()
    for folder in dirs:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def invalidate_stale_kernels(package: str = "crib_env", feeds: tuple[str, ...] = ()) -> bool:
    """Delete every cached kernel of ``package`` if its sources, or those of the packages in
    ``feeds`` (whose tables and layouts its kernels freeze), changed since the cache was written.
    Returns True when it deleted. A read-only install is left alone."""
    owned = package_dirs((package,))
    if not owned:
        return False
    dirs = owned + package_dirs(tuple(f for f in feeds if f != package))
    cache = dirs[0] / "__pycache__"
    try:
        cache.mkdir(exist_ok=True)
        lock = open(cache / (DIGEST_NAME + ".lock"), "a")
    except OSError:
        return False
    with lock:
        # One process at a time: a second one waits and then sees the digest already current.
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest_file = cache / DIGEST_NAME
        current = sources_digest(dirs)
        try:
            if digest_file.read_text() == current:
                return False
        except OSError:
            pass
        for folder in owned:
            for path in folder.rglob("__pycache__/*"):
                if path.suffix in CACHE_SUFFIXES:
                    path.unlink(missing_ok=True)
        try:
            digest_file.write_text(current)
        except OSError:
            pass
        return True
