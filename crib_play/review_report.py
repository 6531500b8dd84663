"""``crib review``: the review of one recorded game (``crib_play.review``) in the terminal, the
biggest losses of win chance first, then every decision in the order made; or as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .chances import THROW_SIMS, check_sims
from .review import REVIEW_AGENT, check_seat, decision_text, review_record


def review_tables(review: dict[str, Any]) -> list[Table]:
    """The biggest losses, then the move list (a biggest loss marked with ``!``)."""
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    decisions = review["decisions"]
    biggest = Table(title="biggest losses of win chance")
    for column in ("#", "decision"):
        biggest.add_column(column, justify="right" if column == "#" else "left")
    for rank, n in enumerate(review["biggest"], 1):
        biggest.add_row(str(rank), Text(decision_text(decisions[n])))
    moves = Table(title="every decision")
    for column in ("", "deal", "move", "best", "win", "best's win", "loss"):
        moves.add_column(column, justify="left" if column in ("move", "best") else "right")
    marked = set(review["biggest"])
    for d in decisions:
        did = " ".join(d["chosen"]) if d["kind"] == "discard" else d["chosen"]
        best = " ".join(d["best"]) if d["kind"] == "discard" else d["best"]
        moves.add_row("!" if d["n"] in marked else "", str(d["deal"]),
                      f"{'throw' if d['kind'] == 'discard' else 'lay'} {did}", best,
                      pct(d["chosen_win"]), pct(d["best_win"]),
                      pct(d["loss"]) if d["loss"] else "-",
                      style="bold red" if d["n"] in marked else None)
    return [biggest, moves]


def review_command(path: Path, game: int = 0, seat: int = 0, sims: int = THROW_SIMS,
                   agent: str = REVIEW_AGENT, seed: int = 0, json_out: bool = False) -> None:
    """``crib review FILE --game N``: read the game, check the options, review, print."""
    from training.record import pick_record, read_record_file

    check_seat(seat)
    check_sims(sims)
    file = read_record_file(path)
    for number, problem in file.problems.items():
        if number != game:
            print(f"skipped game {number}: {problem}", file=sys.stderr)
    record = pick_record(file, game)
    review = review_record(record, seat=seat, sims=sims, agent=agent, seed=seed)
    if json_out:
        print(json.dumps(review, indent=2))
        return
    console = Console()
    names = review["players"]
    console.print(Text(f"review of {names[seat]} in game {game} of {path}: {names[0]} "
                       f"{review['scores'][0]} - {review['scores'][1]} {names[1]}; discards "
                       f"simulated {sims:,} times a throw, plays valued by {agent}"))
    for table in review_tables(review):
        console.print(table)
