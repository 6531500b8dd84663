"""``crib stats``: the statistics of the games file (``crib_play.stats``) in the terminal or as
JSON: every player's, or one player's (``--player``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .db import default_db_path
from .saved import SavedStore
from .stats import game_summary, player_stats


def stats_by_player(store: SavedStore, player: str | None = None) -> dict[str, Any]:
    """``{player name: player_stats(...)}`` for every player with a finished game (or only
    ``player``, who must exist)."""
    wanted = None
    if player is not None:
        wanted = store.players.named(player)
        if wanted is None:
            raise ValueError(f"--player {player!r}: no such player in {store.path}")
    games: dict[str, list[dict[str, Any]]] = {}
    for g in store.finished(wanted.id if wanted else None):
        games.setdefault(g["player"], []).append(g["summary"] or game_summary(g["record"]))
    if wanted is not None:
        games.setdefault(wanted.name, [])
    return {name: player_stats(summaries) for name, summaries in sorted(games.items())}


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def stats_tables(name: str, figures: dict[str, Any]) -> list[Table]:
    """Two tables that fit 80 columns: the results, then the play (points per deal, regret)."""
    results = Table(title=Text(f"{name}: {figures['games']} games, {figures['wins']} won"))
    for column in ("opponent", "games", "wins", "win rate (95%)", "skunks +/-", "doubles +/-"):
        results.add_column(column, justify="left" if column == "opponent" else "right")
    play = Table(title="points per deal, discard regret (points), count practice")
    for column in ("opponent", "dealer peg/hand/crib", "pone peg/hand", "regret", "counts"):
        play.add_column(column, justify="left" if column == "opponent" else "right")
    for opponent, o in figures["opponents"].items():
        lo, hi = o["win_rate_ci95"]
        d, p = o["points_per_deal"]["dealer"], o["points_per_deal"]["pone"]
        practice = o["count_practice"]
        results.add_row(Text(opponent), str(o["games"]), str(o["wins"]),  # a name is not markup
                        f"{o['win_rate']:.1%} ({lo:.0%}-{hi:.0%})",
                        f"{o['skunks_given']}/{o['skunks_taken']}",
                        f"{o['double_skunks_given']}/{o['double_skunks_taken']}")
        play.add_row(Text(opponent), f"{_num(d['pegging'])}/{_num(d['hand'])}/{_num(d['crib'])}",
                     f"{_num(p['pegging'])}/{_num(p['hand'])}", _num(o["discard_regret"]),
                     f"{practice['right']}/{practice['claims']}" if practice["claims"] else "-")
    return [results, play]


def stats_command(db_path: Path | None = None, player: str | None = None,
                  json_out: bool = False) -> None:
    path = default_db_path() if db_path is None else Path(db_path)
    if not path.exists():  # reading statistics makes no games file
        raise FileNotFoundError(f"no games file at {path} yet: play a game (crib play, crib serve)"
                                f" or give --db")
    store = SavedStore(path)
    figures = stats_by_player(store, player)
    if json_out:
        print(json.dumps(figures, indent=2))
        return
    console = Console()
    console.print(f"games in {store.path}", markup=False, soft_wrap=True)
    if not figures:
        console.print("no finished games yet")
    for name, f in figures.items():
        for table in stats_tables(name, f):
            console.print(table)
