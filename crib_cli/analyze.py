"""``crib analyze`` on the command line: the ranked table of a six-card hand's discards, and with
``--score`` each throw's chance to win at that board position."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents.analysis import analyze_discards
from crib_env.cards import card_str, cards_str, parse_cards
from crib_env.game import DEFAULT_TARGET


def analysis_rows(cards: Sequence[str] | str, dealer: bool, score: tuple[int, int] | None = None,
                  sims: int | None = None, seed: int = 0) -> dict[str, Any]:
    """The ``crib analyze`` figures as JSON values: ``hand``, ``dealer``, ``options`` (best net
    first: ``throw``, ``keep``, ``hand``, ``crib``, ``net``, and with ``score``
    ``win_probability`` and its ``stderr``, the keys of ``crib odds --json``), and with ``score``
    the ``score``, ``target``, ``sims`` and ``seed``. Bad cards, scores or ``sims`` raise
    ``ValueError`` before anything is simulated."""
    from crib_play.chances import THROW_SIMS, check_board, check_sims, throw_win_chances

    if isinstance(cards, str):
        cards = [cards]
    tokens = [t for text in cards for t in str(text).replace(",", " ").split()]
    hand = parse_cards(tokens)
    sims = THROW_SIMS if sims is None else sims
    if score is not None:
        check_board(*score)
        check_sims(sims)
    options = analyze_discards(hand, dealer)  # checks the six cards
    out: dict[str, Any] = {"hand": [card_str(c) for c in hand], "dealer": dealer}
    wins = None
    if score is not None:
        wins = throw_win_chances(hand, dealer, score[0], score[1], DEFAULT_TARGET, sims, seed)
        out.update(score=list(score), target=DEFAULT_TARGET, sims=sims, seed=seed)
    rows = []
    for option in options:
        row = {"throw": [card_str(c) for c in option.discard],
               "keep": [card_str(c) for c in option.keep],
               "hand": option.hand, "crib": option.crib, "net": option.net}
        if wins is not None:
            chance = wins[frozenset(option.discard)]
            row.update(win_probability=chance.chance, stderr=chance.stderr)
        rows.append(row)
    out["options"] = rows
    return out


def print_analysis(cards: Sequence[str] | str, dealer: bool, console=None,
                   score: tuple[int, int] | None = None, sims: int | None = None,
                   seed: int = 0, json_out: bool = False) -> dict[str, Any]:
    """Print ``analysis_rows`` as a rich table (``crib analyze``) or as JSON; returns them.

    ``cards`` may be six card texts or one string holding them. Bad input raises ``ValueError``.
    """
    from rich.console import Console
    from rich.table import Table

    figures = analysis_rows(cards, dealer, score, sims, seed)
    if json_out:
        print(json.dumps(figures, indent=2))
        return figures
    role = "dealer: own crib, added" if dealer else "pone: opponent's crib, subtracted"
    title = f"{cards_str(parse_cards(figures['hand']))} as {role}"
    if score is not None:
        title += f", at {score[0]} to {score[1]}"
    table = Table(title=title)
    columns = [("#", "right"), ("throw", "left"), ("keep", "left"), ("hand", "right"),
               ("crib", "right"), ("net", "right")]
    if score is not None:
        columns.append(("win (stderr)", "right"))
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for rank, option in enumerate(figures["options"], 1):
        style = "bold green" if rank == 1 else None
        cells = [str(rank), " ".join(option["throw"]), " ".join(option["keep"]),
                 f"{option['hand']:.2f}", f"{option['crib']:.2f}", f"{option['net']:+.2f}"]
        if score is not None:
            cells.append(f"{option['win_probability']:.1%} ({option['stderr']:.1%})")
        table.add_row(*cells, style=style)
    if score is not None:
        table.caption = (f"chance to win: the rest of the deal simulated {figures['sims']:,} "
                         f"times from each throw (the same deals for every throw), then the "
                         f"win-odds table")
    (console or Console()).print(table)
    return figures
