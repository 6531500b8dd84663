"""``crib analyze`` on the command line: the ranked table of a six-card hand's discards."""

from __future__ import annotations

from collections.abc import Sequence

from agents.analysis import DiscardOption, analyze_discards
from crib_env.cards import cards_str, parse_cards


def print_analysis(cards: Sequence[str] | str, dealer: bool, console=None) -> list[DiscardOption]:
    """Print the ranked table of ``analyze_discards`` with rich (``crib analyze``); returns it.

    ``cards`` may be six card texts or one string holding them. Bad input raises ``ValueError``.
    """
    from rich.console import Console
    from rich.table import Table

    if isinstance(cards, str):
        cards = [cards]
    tokens = [t for text in cards for t in str(text).replace(",", " ").split()]
    hand = parse_cards(tokens)
    options = analyze_discards(hand, dealer)
    role = "dealer: own crib, added" if dealer else "pone: opponent's crib, subtracted"
    table = Table(title=f"{cards_str(hand)} as {role}")
    for name, justify in (("#", "right"), ("throw", "left"), ("keep", "left"),
                          ("hand", "right"), ("crib", "right"), ("net", "right")):
        table.add_column(name, justify=justify)
    for rank, option in enumerate(options, 1):
        style = "bold green" if rank == 1 else None
        table.add_row(str(rank), cards_str(option.discard), cards_str(option.keep),
                      f"{option.hand:.2f}", f"{option.crib:.2f}", f"{option.net:+.2f}", style=style)
    (console or Console()).print(table)
    return options
