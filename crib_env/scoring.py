"""Show and pegging scoring, with the named events behind every score.

Show (four cards + starter, docs/RULES.md section 8): fifteens 2 each, pairs 2 each (three of a kind 6,
four 12), every longest run one point per card, flush 4 (hand only) or 5 (all five cards; the only
flush a crib scores), nobs 1. Pegging (section 7): the card just laid scores 15 (2), 31 (2), pairs
(2 / 6 / 12 for an unbroken same-rank tail) and the longest run of the last n >= 3 cards.

Fast paths: fifteens, pairs and runs depend only on the five ranks, so they are read from
``RANK_POINTS``, a table of every multiset of five ranks keyed by the sorted ranks in base 13.
``score_hand`` and the numpy batch scorer ``score_hands`` both use it (``FOUR_RANK_POINTS`` is the
same for four ranks, behind ``score_without_starter``); ``hand_events`` enumerates
the same points one by one, for the board and the logs, and is tested against the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, product
from typing import NamedTuple

import numpy as np

from .cards import (
    JACK,
    MAX_VALUE,
    N_CARDS,
    N_RANKS,
    RANK,
    RANK_ARRAY,
    SUIT,
    SUIT_ARRAY,
    VALUE,
    as_card,
    cards_str,
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

#: points for a same-rank group of n cards, in the show and in the play
SET_POINTS = {2: 2, 3: 6, 4: 12}
SET_KIND = {2: PAIR, 3: PAIR_ROYAL, 4: DOUBLE_PAIR_ROYAL}
FIFTEEN_COUNT = 15  # cards whose values add up to this score FIFTEEN_POINTS (show and play)
FIFTEEN_POINTS = 2
MAX_COUNT = 31
THIRTY_ONE_POINTS = 2
MAX_HAND_SCORE = 29
HAND_FLUSH_POINTS = 4  # four cards of one suit in a hand (never in the crib)
FIVE_CARD_FLUSH_POINTS = 5  # the four and the starter of one suit: a hand's or the crib's flush
NOBS_POINTS = 1  # the jack of the starter's suit in a hand or crib
GO_POINTS = 1  # to the player who laid the last card when neither can lay another
LAST_CARD_POINTS = 1  # to the player who lays the last card of the play, unless it makes 31


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


def _rank_points(ranks: Sequence[int]) -> int:
    """Fifteens + pairs + runs of four or five ranks (the part of a show score that ignores
    suits)."""
    values = [min(r + 1, MAX_VALUE) for r in ranks]
    fifteens = sum(
        1 for n in range(2, 6) for combo in combinations(values, n) if sum(combo) == FIFTEEN_COUNT
    )
    counts = [0] * N_RANKS
    for r in ranks:
        counts[r] += 1
    pairs = sum(c * (c - 1) for c in counts)  # n cards of a rank make n(n-1)/2 pairs of 2 points
    runs, start = 0, 0
    while start < N_RANKS:
        if counts[start] == 0:
            start += 1
            continue
        end, ways = start, 1
        while end < N_RANKS and counts[end]:
            ways *= counts[end]
            end += 1
        if end - start >= 3:
            runs += (end - start) * ways
        start = end
    return FIFTEEN_POINTS * fifteens + pairs + runs


def _rank_key(sorted_ranks: Sequence[int]) -> int:
    key = 0
    for r in sorted_ranks:
        key = key * N_RANKS + r
    return key


def _build_rank_points(n: int = 5) -> np.ndarray:
    table = np.zeros(N_RANKS**n, dtype=np.int8)
    for ranks in combinations_with_replacement(range(N_RANKS), n):
        if max(map(ranks.count, ranks)) <= 4:  # five of one rank cannot be held
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
    suit = SUIT[cards[0]]
    flush = 0
    if SUIT[cards[1]] == suit and SUIT[cards[2]] == suit and SUIT[cards[3]] == suit:
        if SUIT[starter] == suit:
            flush = FIVE_CARD_FLUSH_POINTS
        elif not crib:  # a four-card flush never scores in the crib
            flush = HAND_FLUSH_POINTS
    nobs = NOBS_POINTS * any(RANK[c] == JACK and SUIT[c] == SUIT[starter] for c in cards)
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
    flush = HAND_FLUSH_POINTS if len({SUIT[c] for c in cards}) == 1 else 0
    return _FOUR_RANK_POINTS_LIST[_rank_key(ranks)] + flush


# Cards sorted by this key come in rank order, suits C D H S within a rank.
_RANK_SUIT_ORDER: tuple[int, ...] = tuple(RANK[c] * 4 + SUIT[c] for c in range(N_CARDS))


@cache
def _rank_items(ranks: tuple[int, ...]) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
    """The fifteens, pairs and runs of five cards sorted by rank, as (kind, points, positions).

    They depend only on the ranks, and only 6,188 five-rank multisets exist, so after warm-up a
    show count never enumerates subsets."""
    values = [min(r + 1, MAX_VALUE) for r in ranks]
    items: list[tuple[str, int, tuple[int, ...]]] = [
        (FIFTEEN, FIFTEEN_POINTS, idx) for n in range(2, 6) for idx in combinations(range(5), n)
        if sum(values[i] for i in idx) == FIFTEEN_COUNT]
    by_rank: dict[int, list[int]] = {}
    for position, rank in enumerate(ranks):
        by_rank.setdefault(rank, []).append(position)
    for group in by_rank.values():
        if len(group) >= 2:
            items.append((SET_KIND[len(group)], SET_POINTS[len(group)], tuple(group)))
    distinct = sorted(by_rank)
    start = 0
    while start < len(distinct):  # split the held ranks into maximal consecutive stretches
        end = start + 1
        while end < len(distinct) and distinct[end] == distinct[end - 1] + 1:
            end += 1
        stretch = distinct[start:end]
        if len(stretch) >= 3:
            for run in product(*(by_rank[r] for r in stretch)):
                items.append((RUN, len(run), run))
        start = end
    return tuple(items)


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
        events.append(ScoreEvent(FLUSH, flush, tuple(five[:flush])))
    if nobs:
        jack = next(c for c in cards if RANK[c] == JACK and SUIT[c] == SUIT[starter_id])
        events.append(ScoreEvent(NOBS, NOBS_POINTS, (jack,)))
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
    four_flush = (suits[:, 0] == suits[:, 1]) & (suits[:, 0] == suits[:, 2]) & (
        suits[:, 0] == suits[:, 3])
    five_flush = four_flush & (suits[:, 0] == starter_suits)
    score += (FIVE_CARD_FLUSH_POINTS * five_flush).astype(np.int8)
    if not crib:
        score += (HAND_FLUSH_POINTS * (four_flush & ~five_flush)).astype(np.int8)
    nobs = ((ranks == JACK) & (suits == starter_suits[:, None])).any(axis=1)
    return score + (NOBS_POINTS * nobs).astype(np.int8)


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
    n = len(sequence)
    if n == 1:  # a lead: no pair, no run, and a count of at most 10
        return VALUE[sequence[0]], 1, 0
    tail, run = _tail_and_run([RANK[c] for c in sequence])
    return count_of(sequence), tail, run


def _tail_and_run(ranks: Sequence[int]) -> tuple[int, int]:
    """(same-rank tail length, longest run) ending at the last of ``ranks`` (oldest first)."""
    n = len(ranks)
    last_rank = ranks[-1]
    tail = 1
    while tail < n and tail < 4 and ranks[-1 - tail] == last_rank:
        tail += 1
    for length in range(n, 2, -1):
        window = ranks[n - length:]
        if max(window) - min(window) == length - 1 and len(set(window)) == length:
            return tail, length
    return tail, 0


def _play_points(count: int, tail: int, run: int) -> int:
    """Points of a card laid: 15 and 31 (2), the same-rank tail (2 / 6 / 12), the run."""
    return (FIFTEEN_POINTS * (count == FIFTEEN_COUNT) + THIRTY_ONE_POINTS * (count == MAX_COUNT)
            + SET_POINTS.get(tail, 0) + run)


def _check_sequence(sequence: Sequence[int | str]) -> list[int]:
    cards = [as_card(c) for c in sequence]
    if not cards:
        raise ValueError("a play sequence needs at least one card")
    if len(set(cards)) != len(cards):
        raise ValueError(f"duplicate card in play sequence {cards_str(cards)}")
    count = count_of(cards)
    if count > MAX_COUNT:
        raise ValueError(f"play sequence {cards_str(cards)} counts {count}, past 31")
    return cards


def play_events(sequence: Sequence[int | str]) -> list[ScoreEvent]:
    """Named points earned by the last card of the current count ``sequence`` (oldest first, cards
    since the last reset). Go and last card are not included: the engine awards them."""
    return play_events_of(_check_sequence(sequence))


def play_events_of(cards: list[int]) -> list[ScoreEvent]:
    """``play_events`` for a trusted sequence of card ids (no parsing, no checks): the engine's
    path, whose sequences are valid by construction."""
    count, tail, run = _play_parts(cards)
    events = []
    if count == FIFTEEN_COUNT:
        events.append(ScoreEvent(FIFTEEN, FIFTEEN_POINTS, tuple(cards)))
    if count == MAX_COUNT:
        events.append(ScoreEvent(THIRTY_ONE, THIRTY_ONE_POINTS, tuple(cards)))
    if tail >= 2:
        events.append(ScoreEvent(SET_KIND[tail], SET_POINTS[tail], tuple(cards[-tail:])))
    if run:
        events.append(ScoreEvent(RUN, run, tuple(cards[-run:])))
    return events


def score_play(sequence: Sequence[int | str]) -> int:
    """Points earned by the last card of the current count ``sequence`` (see ``play_events``)."""
    return _play_points(*_play_parts(_check_sequence(sequence)))


def count_of(cards: Sequence[int]) -> int:
    """The running count of a count sequence of card ids: their counting values added up."""
    return sum([VALUE[c] for c in cards])


def fits(card: int, count: int) -> bool:
    """Whether ``card`` may be laid at running ``count``: the count must stay at 31 or under. A
    player with no card that fits says go."""
    return count + VALUE[card] <= MAX_COUNT


def count_restarts(count: int, go_pegged: bool = False) -> bool:
    """Whether the count goes back to 0 after a card took it to ``count``: at 31, or when the
    card's go point was pegged (neither player could lay another)."""
    return count == MAX_COUNT or go_pegged


def last_card_points(count: int) -> int:
    """Points for laying the last card of the play at running ``count``: ``LAST_CARD_POINTS``,
    or none when that card makes 31 (the 31 already pays). Never more than one of go, 31 and last
    card for one card."""
    return 0 if count == MAX_COUNT else LAST_CARD_POINTS


def play_points_of(cards: Sequence[int]) -> int:
    """``score_play`` for a trusted sequence of card ids (no parsing, no checks): for loops that
    score many candidate lines, such as the card features' pegging and reply columns."""
    return _play_points(*_play_parts(cards))
