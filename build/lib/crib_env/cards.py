"""Cards: ids, text forms and counting values (the card contract of DESIGN.md).

A card is an int 0..51 = ``suit * 13 + rank``; suits in the order C, D, H, S and rank 0 = Ace ...
12 = King. Text is rank char + suit char (``"AC"``, ``"TD"``, ``"KS"``); parsing also accepts
``10``, lower case and the suit symbols. Every table here is the single source of truth for the rest
of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

N_CARDS = 52
N_RANKS = 13
N_SUITS = 4
RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
JACK = 10  # rank index of the jack (nobs and heels)

DECK: tuple[int, ...] = tuple(range(N_CARDS))
#: rank (0..12), suit (0..3) and counting value (1..10) of each card id, as tuples for the
#: pure-Python hot paths and as numpy arrays for batch code.
RANK: tuple[int, ...] = tuple(c % N_RANKS for c in DECK)
SUIT: tuple[int, ...] = tuple(c // N_RANKS for c in DECK)
VALUE: tuple[int, ...] = tuple(min(r + 1, 10) for r in RANK)
RANK_ARRAY = np.array(RANK, dtype=np.int8)
SUIT_ARRAY = np.array(SUIT, dtype=np.int8)
VALUE_ARRAY = np.array(VALUE, dtype=np.int8)

_SUIT_BY_TEXT = {**{s: i for i, s in enumerate(SUIT_CHARS)}, **{s: i for i, s in enumerate(SUIT_SYMBOLS)}}
# Both the white and black suit symbols are accepted.
_SUIT_BY_TEXT.update({s: i for i, s in enumerate("♧♢♡♤")})
_RANK_BY_TEXT = {**{r: i for i, r in enumerate(RANK_CHARS)}, "10": 9}


def card_id(rank: int, suit: int) -> int:
    """The id of the card of ``rank`` (0 = Ace .. 12 = King) and ``suit`` (0..3 = C, D, H, S)."""
    if not (0 <= rank < N_RANKS and 0 <= suit < N_SUITS):
        raise ValueError(f"no card with rank {rank} and suit {suit}: rank must be 0..12, suit 0..3")
    return suit * N_RANKS + rank


def parse_card(text: str) -> int:
    """Parse one card such as ``"5H"``, ``"10h"``, ``"T♥"`` or ``"ks"`` into its id."""
    if not isinstance(text, str):
        raise ValueError(f"card text must be a string, got {text!r}")
    token = text.strip().upper()
    rank, suit = _RANK_BY_TEXT.get(token[:-1]), _SUIT_BY_TEXT.get(token[-1:])
    if rank is None or suit is None:
        raise ValueError(
            f"bad card {text!r}: expected a rank ({RANK_CHARS} or 10) followed by a suit "
            f"({SUIT_CHARS} or {SUIT_SYMBOLS}), e.g. '5H', '10D', 'KS'"
        )
    return suit * N_RANKS + rank


def parse_cards(text: str | Iterable[str | int]) -> list[int]:
    """Parse ``"5H 5D JS"`` (spaces or commas) or a list of texts / ids into card ids."""
    tokens: Iterable[str | int] = re.split(r"[\s,]+", text.strip()) if isinstance(text, str) else text
    return [as_card(t) for t in tokens if t != ""]


def as_card(card: int | str) -> int:
    """Accept a card id or card text and return the id; anything else raises ``ValueError``."""
    if isinstance(card, str):
        return parse_card(card)
    if isinstance(card, (int, np.integer)) and not isinstance(card, bool) and 0 <= card < N_CARDS:
        return int(card)
    raise ValueError(f"bad card {card!r}: expected an id 0..51 or text such as '5H'")


#: the text of every card id, e.g. ``CARD_NAMES[0] == "AC"``
CARD_NAMES: tuple[str, ...] = tuple(RANK_CHARS[RANK[c]] + SUIT_CHARS[SUIT[c]] for c in DECK)


def card_str(card: int) -> str:
    """The two-character text of a card id, e.g. ``card_str(0) == "AC"``."""
    return CARD_NAMES[as_card(card)]


def cards_str(cards: Iterable[int]) -> str:
    """Space-separated text of several cards (ids, trusted)."""
    return " ".join(CARD_NAMES[c] for c in cards)
