"""Run folders: their names (``{env}__{config}__{seed}__{time}``) and finding the one to resume."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import RunConfig


def run_name(cfg: RunConfig) -> str:
    return f"{cfg.env_id}__{cfg.name}__{cfg.seed}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def _runs_of(output_dir: Path, name: str) -> list[Path]:
    """The run folders under ``output_dir`` made by config ``name``."""
    if not output_dir.exists():
        return []
    return [run for run in output_dir.iterdir()
            if run.is_dir() and len(run.name.split("__")) == 4 and run.name.split("__")[1] == name]


def has_run(output_dir: Path, name: str) -> bool:
    """Whether ``output_dir`` holds a run of config ``name`` (``--resume`` would find one)."""
    return bool(_runs_of(output_dir, name))


def find_run_to_resume(output_dir: Path, name: str) -> Path:
    """The newest run folder under ``output_dir`` made by config ``name`` (it may have no
    ``latest/`` yet if it was killed before its first save)."""
    candidates = _runs_of(output_dir, name)
    if not candidates:
        raise FileNotFoundError(f"--resume: no run of config {name!r} under {output_dir}")
    return max(candidates, key=lambda p: p.name.split("__")[3])
