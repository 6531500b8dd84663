"""The end of a run: its best checkpoint against each evaluation opponent, for ``summary.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.checkpoint import resolve_checkpoint
from agents.learned import load_learned_agent

from .config import RunConfig


def final_evaluations(cfg: RunConfig, run_dir: Path) -> list[dict[str, Any]]:
    """The run's best checkpoint against each of ``eval.opponents`` (``eval.final_games`` games,
    ``eval.seed``): each report's JSON, in the config's order, for ``summary.json["final"]``
    (``crib_cli.train`` prints them as a table)."""
    from .evaluate import evaluate

    best = resolve_checkpoint(run_dir)
    agent = load_learned_agent(best, name=best.name)
    return [evaluate(agent, opponent, games=cfg.eval.final_games, seed=cfg.eval.seed,
                     progress=True).to_dict()
            for opponent in cfg.eval.opponents]
