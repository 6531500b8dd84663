"""How crib writes files (checkpoints, runs, reports, records): every result appears whole or not
at all. It sits in ``agents``, the lowest package that writes files (its checkpoints,
``agents.checkpoint``); training, play and the command import it from here.

* ``atomic_write`` / ``atomic_write_text``: a file is written to a temporary name in its folder,
  flushed to disk, then moved onto its name with ``os.replace`` (atomic on POSIX and Windows).
* ``replace_folder``: a folder (a checkpoint) is filled complete under a hidden staging name
  (``.NAME.new``), then swapped with the old one in one atomic step (Linux ``renameat2`` with
  ``RENAME_EXCHANGE``; elsewhere two renames, which ``recover_folder`` completes after a crash).
  Nothing is ever replaced file by file, so a reader sees the old folder or the new one.
* ``append_line``: one line appended and flushed to disk (``evals.jsonl``); a line cut by a kill is
  dropped when the run resumes (``training.recovery``).
* ``check_output_file`` / ``check_output_folder``: refuse an output path that cannot be written, in
  one line naming the option and the path given, before any work is done: a file is created and
  removed in the target folder (the only honest test; permission bits say yes to root on
  ``/proc``).

File modes, one policy: every file written here ends ``FILE_MODE`` (0644: the owner writes,
everyone reads; nothing written by crib is secret), whatever the writer (``mkstemp`` would leave
0600).

Crash testing: with ``CRIB_CRASH_AT_FILE_OP=K`` in the environment the process kills itself
(``os._exit(137)``, like SIGKILL: no clean-up runs) just before its K-th file operation here, so a
test can stop a run at every step of a checkpoint save in turn.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

CRASH_ENV = "CRIB_CRASH_AT_FILE_OP"
NEW_SUFFIX = ".new"  # .NAME.new: a folder being filled (or, after a swap, the old one)
OLD_SUFFIX = ".old"  # .NAME.old: the old folder between the two renames of the fallback swap

FILE_MODE = 0o644

_file_ops = 0


def file_ops() -> int:
    """How many file operations this process has done here (what ``CRIB_CRASH_AT_FILE_OP``
    counts)."""
    return _file_ops


def _op() -> None:
    """Count one file operation; die here if the crash test asks for it."""
    global _file_ops
    _file_ops += 1
    crash_at = os.environ.get(CRASH_ENV)
    if crash_at and _file_ops == int(crash_at):
        os._exit(137)


def _fsync_dir(folder: Path) -> None:
    """Make a rename or new entry in ``folder`` durable (a no-op where folders cannot be
    opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp_path)`` for a temporary file next to ``path``, then move it onto ``path``
    atomically (the folder is created if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _op()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, FILE_MODE)
        _fsync_file(Path(tmp))
        _op()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def save_figure(fig, path: Path, **kwargs) -> None:
    """``fig.savefig`` to ``path`` atomically (the format follows the name, PNG if it has none)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, **kwargs))


def append_line(path: Path, line: str) -> None:
    """Append one line (no newline inside) and flush it to disk."""
    _op()
    with open(path, "a", encoding="utf-8") as f:
        if f.tell() == 0:
            os.chmod(path, FILE_MODE)
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def remove_folder(folder: Path) -> None:
    """Delete a folder so that it disappears whole: renamed away first (atomic), then emptied."""
    folder = Path(folder)
    if not folder.exists():
        return
    trash = folder.parent / f".{folder.name}.trash"
    _remove_tree(trash)
    _op()
    folder.rename(trash)
    _remove_tree(trash)


def _remove_tree(folder: Path) -> None:
    if folder.exists():
        _op()
        shutil.rmtree(folder)


def _staging(target: Path, suffix: str) -> Path:
    return target.parent / f".{target.name}{suffix}"


def recover_folder(target: Path) -> None:
    """Finish or undo a folder swap that a crash interrupted: afterwards ``target`` is the last
    complete folder (or absent if none was ever completed) and no staging folder is left."""
    target = Path(target)
    new, old = _staging(target, NEW_SUFFIX), _staging(target, OLD_SUFFIX)
    if not target.exists() and old.exists():
        # killed between the two renames of the fallback swap: .new was complete before .old
        # was made, so it is the newest complete folder
        _op()
        (new if new.exists() else old).rename(target)
    _remove_tree(new)
    _remove_tree(old)
    _remove_tree(_staging(target, ".trash"))


def replace_folder(target: Path, fill: Callable[[Path], None]) -> Path:
    """Replace ``target`` by a folder that ``fill(folder)`` writes, as a whole (see the module
    docstring). ``fill`` writes plain files into the empty folder it is given."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_folder(target)
    new = _staging(target, NEW_SUFFIX)
    _op()
    new.mkdir()
    fill(new)
    _op()
    for path in sorted(new.iterdir()):
        os.chmod(path, FILE_MODE)
        _fsync_file(path)
    _fsync_dir(new)
    if not target.exists():
        _op()
        new.rename(target)
    elif not _exchange(new, target):
        old = _staging(target, OLD_SUFFIX)
        _op()
        target.rename(old)
        _op()
        new.rename(target)
        _remove_tree(old)
    _fsync_dir(target.parent)
    _remove_tree(new)  # after an exchange it holds the replaced folder
    return target


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    _op()
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(errno, os.strerror(errno), str(a))


_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


# -- output paths, checked before any work --

PROBE_PREFIX = ".crib-probe-"


def _nearest_folder(path: Path) -> Path:
    """The nearest existing path at or above ``path`` (the folder a missing path would be made
    in)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _probe(folder: Path, path: Path, option: str) -> None:
    """Create and remove a file in ``folder``: the only honest test that ``path`` (in or below it)
    can be written, whoever runs this (``os.access`` says yes to root even on ``/proc``)."""
    if not folder.is_dir():
        raise ValueError(f"{option}: cannot write {path}: {folder} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=folder)
    except OSError as err:
        raise ValueError(f"{option}: cannot write {path}: cannot create a file in {folder} "
                         f"({err.strerror or err})") from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def check_output_file(path: Path | str, option: str) -> Path:
    """Refuse (``ValueError`` naming ``option`` and ``path``) a file path that cannot be written:
    a folder, a file that cannot be opened for writing, or a folder where no file can be created
    (tried by creating and removing one). Nothing is left behind; missing folders are not made."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option}: {path} is a folder; give a file path")
    if path.exists():
        try:  # opened for appending and closed: the file is not changed
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        except OSError as err:
            raise ValueError(f"{option}: cannot write {path} ({err.strerror or err})") from None
    _probe(_nearest_folder(path.parent), path, option)
    return path


def check_output_folder(path: Path | str, option: str) -> Path:
    """Refuse (``ValueError`` naming ``option`` and ``path``) a folder path that is a file or where
    no file can be created (tried by creating and removing one in it, or in the nearest existing
    folder above it). Nothing is left behind; missing folders are not made."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} is a file; give a folder")
    _probe(_nearest_folder(path), path, option)
    return path
