"""The checkpoints ``crib serve`` offers as opponents: the shipped ones always, first, and every
other checkpoint folder found under the working folder's ``checkpoints/`` and ``runs/``, newest
first, a page at a time and searchable by any part of its path (no silent cap: the page says how
many there are and finds any of them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.registry import SHIPPED_CHECKPOINTS

CHECKPOINT_ROOTS = (Path("checkpoints"), Path("runs"))  # searched for checkpoints to offer
SHIPPED_ROOT = SHIPPED_CHECKPOINTS  # agents/checkpoints/: its direct folders are shipped
PAGE = 50  # other checkpoints listed per page (the page's list stays short; search finds the rest)


def _shown(path: Path) -> str:
    cwd = Path.cwd().resolve()
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


def shipped_checkpoints(root: Path = SHIPPED_ROOT) -> list[str]:
    """The checkpoints that come with the package (``agents/checkpoints/<name>/meta.json``)."""
    if not root.is_dir():
        return []
    return [_shown(p.parent.resolve()) for p in sorted(root.glob("*/meta.json"))]


def other_checkpoints(roots: tuple[Path, ...] = CHECKPOINT_ROOTS) -> list[str]:
    """Every other checkpoint folder (holding ``meta.json``) under ``roots``, newest first; run
    folders' ``latest/`` and self-play pool snapshots are left out, and so are the shipped ones."""
    shipped = {Path(p).resolve() for p in shipped_checkpoints()}
    found: set[Path] = set()
    for root in roots:
        if root.is_dir():
            for meta in root.glob("**/meta.json"):
                folder = meta.parent
                if folder.name == "latest" or "pool" in folder.parts:
                    continue
                resolved = folder.resolve()
                if resolved not in shipped:
                    found.add(resolved)
    newest = sorted(found, key=lambda p: (-p.stat().st_mtime, str(p)))
    return [_shown(p) for p in newest]


def find_checkpoints(roots: tuple[Path, ...] | None = None, limit: int | None = None) -> list[str]:
    """The shipped checkpoints, then the others under ``roots`` (default ``checkpoints/`` and
    ``runs/``), at most ``limit`` of those others (default: all of them)."""
    others = other_checkpoints(CHECKPOINT_ROOTS if roots is None else roots)
    return [*shipped_checkpoints(), *(others if limit is None else others[:limit])]


def checkpoint_page(roots: tuple[Path, ...], search: str = "", offset: int = 0,
                    limit: int = PAGE) -> dict[str, Any]:
    """What ``GET /api/opponents`` lists: ``checkpoints`` (every shipped one, then one page of the
    others whose path holds ``search``, case-insensitively), and of the others ``total`` (how many
    match), ``offset`` and ``limit``."""
    needle = search.casefold()
    others = [p for p in other_checkpoints(roots) if needle in p.casefold()]
    return {"checkpoints": [*shipped_checkpoints(), *others[offset:offset + limit]],
            "shipped": shipped_checkpoints(),
            "others": {"total": len(others), "offset": offset, "limit": limit, "search": search}}
