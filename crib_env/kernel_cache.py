"""Keeps numba's on-disk kernel cache honest.

Numba keys a cached kernel on its own source file only, but our kernels freeze module-level tables
and layouts from other files (``cards.VALUE_ARRAY``, ``scoring.RANK_POINTS``, the observation
offsets) into the compiled code. An edit to one of those files would leave stale machine code
running. So the cache is tied to the source of every package that holds or feeds a kernel: on
import, a digest of those sources is compared with the one stored beside the cache, and on any
difference every cached kernel of those packages is deleted (numba then recompiles on first call).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
from pathlib import Path

#: packages whose modules hold compiled kernels or the tables they freeze
KERNEL_PACKAGES = ("crib_env", "agents")
#: the digest file, in crib_env's own ``__pycache__``
DIGEST_NAME = "kernel-sources.sha256"
#: numba's cache files (index and compiled data)
CACHE_SUFFIXES = (".nbi", ".nbc")


def package_dirs() -> list[Path]:
    """Source folders of the kernel packages, found without importing them."""
    dirs = []
    for name in KERNEL_PACKAGES:
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


def invalidate_stale_kernels() -> bool:
    """Delete every cached kernel of the kernel packages if any of their sources changed since
    the cache was written. Returns True when it deleted. A read-only install is left alone."""
    dirs = package_dirs()
    if not dirs:
        return False
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
        for folder in dirs:
            for path in folder.rglob("__pycache__/*"):
                if path.suffix in CACHE_SUFFIXES:
                    path.unlink(missing_ok=True)
        try:
            digest_file.write_text(current)
        except OSError:
            pass
        return True
