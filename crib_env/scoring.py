"""Show and pegging scoring, with the named events behind every score.

The rules themselves (the count, what each item pays) are ``crib_env.rules``; this module applies
them to cards. Show (four cards + starter, docs/RULES.md section 8): fifteens, pairs (three and four
of a kind), every longest run, a flush (hand: four or five cards; crib: five only), nobs. Pegging
(section 7): the card just laid scores a count of 15 or 31, the unbroken same-rank tail and the
longest run of the last n >= 3 cards.

Each kind of item is found by one function: ``_rank_items`` (fifteens, pairs and runs, which depend
only on the ranks), ``_suit_points`` (flush and nobs, from ``rules.flush_points`` and
``rules.nobs_points``) and ``_play_items`` (a card laid). Scores are the sums of the items, and the
fast paths are tables of those sums: ``RANK_POINTS`` holds ``_rank_items``' points for every
multiset of five ranks, keyed by the sorted ranks in base 13 (``FOUR_RANK_POINTS`` the same for
four ranks, behind ``score_without_starter``); ``score_hand`` and the numpy batch scorer
``score_hands`` read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, product
from typing import NamedTuple

import numpy as np

from .cards import (
    N_CARDS,
    N_RANKS,
    RANK,
    RANK_ARRAY,
    SUIT,
    SUIT_ARRAY,
    VALUE,
    as_card,
    card_id,
    cards_str,
)
from .rules import (
    COUNT_LIMIT,
    MAX_HAND_SCORE,
    MAX_SET,
    MIN_RUN,
    count_of,
    fifteen_points,
    flush_points,
    nobs_points,
    run_points,
    set_points,
    thirty_one_points,
)

# Event kinds: one name each, used by the engine's log, infos and the rendered board.
FIFTEEN = "fifteen"
PAIR = "pair"
PAIR_ROYAL = "pair royal"
DOUBLE_PAIR_ROYAL = "double pair royal"
RUN = "run"
FLUSH = "flush"
NOBS = "nobs"
HEELS = "heels"
GO = "go"
THIRTY_ONE = "thirty-one"
LAST_CARD = "last card"
EVENT_KINDS = (FIFTEEN, PAIR, PAIR_ROYAL, DOUBLE_PAIR_ROYAL, RUN, FLUSH, NOBS, HEELS, GO,
               THIRTY_ONE, LAST_CARD)

#: the event kind of a same-rank set of n cards, in the show and in the play
SET_KIND = {2: PAIR, 3: PAIR_ROYAL, 4: DOUBLE_PAIR_ROYAL}
#: ``rules.set_points`` by set size
SET_POINTS = {n: set_points(n) for n in SET_KIND}

__all__ = [
    "EVENT_KINDS", "FIFTEEN", "PAIR", "PAIR_ROYAL", "DOUBLE_PAIR_ROYAL", "RUN", "FLUSH", "NOBS",
    "HEELS", "GO", "THIRTY_ONE", "LAST_CARD", "SET_KIND", "SET_POINTS", "ScoreEvent",
    "RANK_POINTS", "FOUR_RANK_POINTS", "score_hand", "score_without_starter", "hand_events",
    "hand_events_of", "score_hands", "all_hands_with_starters", "show_score_distribution",
    "play_events", "play_events_of", "score_play", "play_points_of",
]


class ScoreEvent(NamedTuple):
    """One scoring item: ``kind`` (one of ``EVENT_KINDS``), its ``points`` and the ``cards`` behind it.

    A named tuple rather than a frozen dataclass: the engine builds several per deal and the
    tuple is about three times cheaper to make."""

    kind: str
    points: int
    cards: tuple[int, ...] = ()

    def describe(self) -> str:
        """Short text such as ``"run of 3 for 3 (5H 6S 7C)"``."""
        name = f"run of {len(self.cards)}" if self.kind == RUN else self.kind
        cards = f" ({cards_str(self.cards)})" if self.cards else ""
        return f"{name} for {self.points}{cards}"


# ----------------------------------------------------------------------------------------------
# The show


@cache
def _rank_items(ranks: tuple[int, ...]) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
    """The fifteens, pairs and runs of four or five cards sorted by rank, as (kind, points,
    positions): the one statement of those show items, behind the tables and the events.

    They depend only on the ranks, and only 6,188 five-rank multisets exist: building the tables
    at import fills this cache, so a show count never enumerates subsets."""
    values = [VALUE[card_id(r, 0)] for r in ranks]  # a rank's counting value, from any suit
    positions = range(len(ranks))
    items: list[tuple[str, int, tuple[int, ...]]] = []
    for n in range(2, len(ranks) + 1):
        for idx in combinations(positions, n):
            points = fifteen_points(sum([values[i] for i in idx]))
            if points:
                items.append((FIFTEEN, points, idx))
    by_rank: dict[int, list[int]] = {}
    for position, rank in enumerate(ranks):
        by_rank.setdefault(rank, []).append(position)
    for group in by_rank.values():
        if set_points(len(group)):
            items.append((SET_KIND[len(group)], set_points(len(group)), tuple(group)))
    distinct = sorted(by_rank)
    start = 0
    while start < len(distinct):  # split the held ranks into maximal consecutive stretches
        end = start + 1
        while end < len(distinct) and distinct[end] == distinct[end - 1] + 1:
            end += 1
        stretch = distinct[start:end]
        if run_points(len(stretch)):
            for run in product(*(by_rank[r] for r in stretch)):
                items.append((RUN, run_points(len(run)), run))
        start = end
    return tuple(items)


def _rank_points(ranks: Sequence[int]) -> int:
    """Fifteens + pairs + runs of four or five ranks (the part of a show score that ignores suits):
    the points of ``_rank_items``."""
    return sum([points for _, points, _ in _rank_items(tuple(sorted(ranks)))])


def _rank_key(sorted_ranks: Sequence[int]) -> int:
    key = 0
    for r in sorted_ranks:
        key = key * N_RANKS + r
    return key


def _build_rank_points(n: int = 5) -> np.ndarray:
    table = np.zeros(N_RANKS**n, dtype=np.int8)
    for ranks in combinations_with_replacement(range(N_RANKS), n):
        if max(map(ranks.count, ranks)) <= MAX_SET:  # five of one rank cannot be held
            table[_rank_key(ranks)] = _rank_points(ranks)
    return table


#: fifteens + pairs + runs for every five-rank multiset, indexed by the sorted ranks in base 13
RANK_POINTS: np.ndarray = _build_rank_points()
_RANK_POINTS_LIST: list[int] = RANK_POINTS.tolist()
#: the same for every four-rank multiset (four cards counted without a starter)
FOUR_RANK_POINTS: np.ndarray = _build_rank_points(4)
_FOUR_RANK_POINTS_LIST: list[int] = FOUR_RANK_POINTS.tolist()


def _check_show(hand: Sequence[int | str], starter: int | str) -> tuple[list[int], int]:
    cards = [as_card(c) for c in hand]
    starter_id = as_card(starter)
    if len(cards) != 4:
        raise ValueError(f"a hand or crib to count has 4 cards, got {len(cards)}: {list(hand)!r}")
    if len(set(cards + [starter_id])) != 5:
        raise ValueError(f"duplicate card in hand {cards_str(cards)} with starter "
                         f"{cards_str([starter_id])}")
    return cards, starter_id


def _suit_points(cards: list[int], starter: int, crib: bool) -> tuple[int, int]:
    """(flush points, nobs points) of four cards with the starter."""
    suit, starter_suit = SUIT[cards[0]], SUIT[starter]
    four_suited = SUIT[cards[1]] == suit and SUIT[cards[2]] == suit and SUIT[cards[3]] == suit
    flush = flush_points(four_suited, starter_suit == suit, crib)
    nobs = sum([nobs_points(RANK[c], SUIT[c], starter_suit) for c in cards])
    return flush, nobs


def score_hand(hand: Sequence[int | str], starter: int | str, crib: bool = False) -> int:
    """Show score of a 4-card ``hand`` (ids or text) counted with ``starter``; ``crib`` applies the
    crib flush rule. Range 0..29."""
    cards, starter_id = _check_show(hand, starter)
    ranks = sorted([RANK[c] for c in cards] + [RANK[starter_id]])
    flush, nobs = _suit_points(cards, starter_id, crib)
    return _RANK_POINTS_LIST[_rank_key(ranks)] + flush + nobs


def score_without_starter(hand: Sequence[int | str]) -> int:
    """Show points of a 4-card ``hand`` (ids or text) counted alone, before any starter: fifteens,
    pairs, runs and a four-card flush (4); no nobs without a starter. What the four are worth
    whatever is cut (the greedy agent's measure). Range 0..20."""
    cards = [as_card(c) for c in hand]
    if len(cards) != 4 or len(set(cards)) != 4:
        raise ValueError(f"a hand to count without a starter has 4 distinct cards, got "
                         f"{cards_str(cards)}")
    ranks = sorted([RANK[c] for c in cards])
    flush = flush_points(len({SUIT[c] for c in cards}) == 1, False, False)
    return _FOUR_RANK_POINTS_LIST[_rank_key(ranks)] + flush


# Cards sorted by this key come in rank order, suits C D H S within a rank.
_RANK_SUIT_ORDER: tuple[int, ...] = tuple(RANK[c] * 4 + SUIT[c] for c in range(N_CARDS))


def hand_events(hand: Sequence[int | str], starter: int | str,
                crib: bool = False) -> list[ScoreEvent]:
    """The named items of a show count, in table-talk order: fifteens, pairs, runs, flush, nobs."""
    cards, starter_id = _check_show(hand, starter)
    return hand_events_of(cards, starter_id, crib)


def hand_events_of(cards: list[int], starter_id: int, crib: bool) -> list[ScoreEvent]:
    """``hand_events`` for four trusted card ids and a starter id (no parsing, no checks): the
    engine's path, whose cards are valid by construction."""
    five = cards + [starter_id]
    ordered = sorted(five, key=_RANK_SUIT_ORDER.__getitem__)
    events = [ScoreEvent(kind, points, tuple([ordered[i] for i in positions]))
              for kind, points, positions in _rank_items(tuple([RANK[c] for c in ordered]))]
    flush, nobs = _suit_points(cards, starter_id, crib)
    if flush:
        suit = SUIT[cards[0]]
        events.append(ScoreEvent(FLUSH, flush, tuple([c for c in five if SUIT[c] == suit])))
    if nobs:
        jack = next(c for c in cards if nobs_points(RANK[c], SUIT[c], SUIT[starter_id]))
        events.append(ScoreEvent(NOBS, nobs, (jack,)))
    return events


def score_hands(hands: np.ndarray, starters: np.ndarray, crib: bool = False) -> np.ndarray:
    """Batch show scores: ``hands`` int array (N, 4) of card ids, ``starters`` (N,). Returns int8 (N,).

    Inputs are trusted (no duplicate check) so millions of hands score in well under a second.
    """
    hands = np.asarray(hands)
    starters = np.asarray(starters)
    ranks = RANK_ARRAY[hands]
    cols = [ranks[:, 0], ranks[:, 1], ranks[:, 2], ranks[:, 3], RANK_ARRAY[starters]]
    # A sorting network over the five rank columns: far faster than np.sort on narrow rows.
    for i, j in ((0, 1), (3, 4), (2, 4), (2, 3), (0, 3), (0, 2), (1, 4), (1, 3), (1, 2)):
        cols[i], cols[j] = np.minimum(cols[i], cols[j]), np.maximum(cols[i], cols[j])
    key = cols[0].astype(np.int32)
    for col in cols[1:]:
        key = key * N_RANKS + col
    score = RANK_POINTS[key]
    suits = SUIT_ARRAY[hands]
    starter_suits = SUIT_ARRAY[starters]
    four_suited = (suits[:, 0] == suits[:, 1]) & (suits[:, 0] == suits[:, 2]) & (
        suits[:, 0] == suits[:, 3])
    score += flush_points(four_suited, suits[:, 0] == starter_suits, crib).astype(np.int8)
    nobs = nobs_points(ranks, suits, starter_suits[:, None]).sum(axis=1)
    return score + nobs.astype(np.int8)


def all_hands_with_starters() -> tuple[np.ndarray, np.ndarray]:
    """Every 4-card hand (C(52,4) = 270,725) with each of its 48 starters.

    Returns int8 arrays of shape (12994800, 4) and (12994800,)."""
    hands = np.array(list(combinations(range(N_CARDS), 4)), dtype=np.int8)
    candidates = np.broadcast_to(np.arange(N_CARDS, dtype=np.int8), (len(hands), N_CARDS))
    in_hand = np.zeros((len(hands), N_CARDS), dtype=bool)
    np.put_along_axis(in_hand, hands.astype(np.intp), True, axis=1)
    starters = candidates[~in_hand].reshape(len(hands), N_CARDS - 4)
    return np.repeat(hands, N_CARDS - 4, axis=0), starters.reshape(-1)


def show_score_distribution(crib: bool = False) -> np.ndarray:
    """Counts of each show score 0..29 over all 12,994,800 hand + starter combinations."""
    hands, starters = all_hands_with_starters()
    return np.bincount(score_hands(hands, starters, crib), minlength=MAX_HAND_SCORE + 1)


# ----------------------------------------------------------------------------------------------
# The play


def _play_parts(sequence: Sequence[int]) -> tuple[int, int, int]:
    """(count, same-rank tail length, run length) for the last card of ``sequence``."""
    if len(sequence) == 1:  # a lead: no pair, no run, and a count of at most 10
        return VALUE[sequence[0]], 1, 0
    tail, run = _tail_and_run([RANK[c] for c in sequence])
    return count_of(sequence), tail, run


def _tail_and_run(ranks: Sequence[int]) -> tuple[int, int]:
    """(same-rank tail length, longest run, 0 if none) ending at the last of ``ranks`` (oldest
    first)."""
    n = len(ranks)
    last_rank = ranks[-1]
    tail = 1
    while tail < n and tail < MAX_SET and ranks[-1 - tail] == last_rank:
        tail += 1
    for length in range(n, MIN_RUN - 1, -1):
        window = ranks[n - length:]
        if max(window) - min(window) == length - 1 and len(set(window)) == length:
            return tail, length
    return tail, 0


def _play_items(count: int, tail: int, run: int) -> list[tuple[str, int, int]]:
    """What the card laid scores, as (kind, points, how many of the last cards it takes): the one
    statement of the pegging items, behind ``play_events`` and ``score_play``."""
    items = []
    fifteen = fifteen_points(count)
    if fifteen:
        items.append((FIFTEEN, fifteen, 0))  # 0: the whole sequence
    thirty_one = thirty_one_points(count)
    if thirty_one:
        items.append((THIRTY_ONE, thirty_one, 0))
    pairs = set_points(tail)
    if pairs:
        items.append((SET_KIND[tail], pairs, tail))
    run_score = run_points(run)
    if run_score:
        items.append((RUN, run_score, run))
    return items


def _play_points(count: int, tail: int, run: int) -> int:
    return sum([points for _, points, _ in _play_items(count, tail, run)])


def _check_sequence(sequence: Sequence[int | str]) -> list[int]:
    cards = [as_card(c) for c in sequence]
    if not cards:
        raise ValueError("a play sequence needs at least one card")
    if len(set(cards)) != len(cards):
        raise ValueError(f"duplicate card in play sequence {cards_str(cards)}")
    count = count_of(cards)
    if count > COUNT_LIMIT:
        raise ValueError(f"play sequence {cards_str(cards)} counts {count}, past {COUNT_LIMIT}")
    return cards


def play_events(sequence: Sequence[int | str]) -> list[ScoreEvent]:
    """Named points earned by the last card of the current count ``sequence`` (oldest first, cards
    since the last reset). Go and last card are not included: the engine awards them."""
    return play_events_of(_check_sequence(sequence))


def play_events_of(cards: list[int]) -> list[ScoreEvent]:
    """``play_events`` for a trusted sequence of card ids (no parsing, no checks): the engine's
    path, whose sequences are valid by construction."""
    # cards[-0:] is every card: a count of 15 or 31 is made by the whole sequence
    return [ScoreEvent(kind, points, tuple(cards[-last:]))
            for kind, points, last in _play_items(*_play_parts(cards))]


def score_play(sequence: Sequence[int | str]) -> int:
    """Points earned by the last card of the current count ``sequence`` (see ``play_events``)."""
    return _play_points(*_play_parts(_check_sequence(sequence)))


def play_points_of(cards: Sequence[int]) -> int:
    """``score_play`` for a trusted sequence of card ids (no parsing, no checks): for loops that
    score many candidate lines, such as the card features' pegging and reply columns."""
    return _play_points(*_play_parts(cards))
