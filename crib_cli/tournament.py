"""``crib tournament`` on the command line: play the round robin, print its tables, write its JSON
and heatmap. The library (``training.tournament``) prints nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from agents.files import atomic_write_text, check_output_folder
from training.limits import check_games
from training.tournament import TournamentResult, tournament


def result_tables(result: TournamentResult) -> list[Any]:
    """Rich tables of ``result``: the win-rate matrix and the ratings."""
    from rich.table import Table

    matrix = Table(title="win rate, row agent vs column agent", title_justify="left",
                   caption=f"{result.games} games per pairing, seed {result.seed}",
                   caption_justify="left")
    matrix.add_column("")
    for name in result.agents:
        matrix.add_column(name, justify="right")
    for name, row in zip(result.agents, result.win_rates, strict=True):
        matrix.add_row(name, *("-" if math.isnan(v) else f"{v:.1%}" for v in row))

    ratings = Table(title="Bradley-Terry ratings", title_justify="left",
                    caption="Elo scale, field mean 0; 95% interval",
                    caption_justify="left")
    for column in ("rank", "agent", "rating", "95% interval"):
        ratings.add_column(column, justify="left" if column == "agent" else "right")
    for rank, i in enumerate(np.argsort(-result.ratings), start=1):
        lo, hi = result.rating_ci95[i]
        ratings.add_row(str(rank), result.agents[i], f"{result.ratings[i]:+.0f}",
                        f"[{lo:+.0f}, {hi:+.0f}]")
    return [matrix, ratings]


def print_result(result: TournamentResult, console: Any = None) -> None:
    """Print ``result``'s tables to ``console`` (a new rich console by default)."""
    from rich.console import Console

    console = console or Console()
    for table in result_tables(result):
        console.print(table)


def tournament_command(agent_specs: list[str], games: int, seed: int = 0,
                       output: Path = Path("runs/tournament"),
                       workers: int = 1, ray: str | None = None) -> TournamentResult:
    """``crib tournament``: play, print the tables, write ``tournament.json`` and
    ``win_rates.png`` under ``output``."""
    from rich.console import Console

    output = check_output_folder(output, "--output")  # before any game is played
    check_games(games)
    result = tournament(agent_specs, games, seed=seed, workers=workers, progress=True, ray=ray)
    console = Console()
    print_result(result, console)
    atomic_write_text(output / "tournament.json", json.dumps(result.to_dict(), indent=2) + "\n")
    heatmap = result.save_heatmap(output / "win_rates.png")
    console.print(f"wrote {output / 'tournament.json'} and {heatmap}")
    return result
