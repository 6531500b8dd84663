"""Exact discard analysis: all 15 ways to lay away two of six cards, by expected value.

For each discard the analyzer gives

* ``hand``: the kept four's expected show score over every starter the player has not seen
  (46 of them at the deal);
* ``crib``: the crib's expected show score (crib rules) over every starter *and* every pair the
  opponent could throw from the unseen cards, all such (starter, pair) deals equally likely;
* ``net``: ``hand + crib`` when the player deals (own crib), ``hand - crib`` when not.

Both expectations are exact, not sampled, and computed in one compiled kernel, ``discard_arrays``
(which the compiled standard agent, ``agents.standard_batch``, calls too): the hand part scores the
15 x 46 hands with the core's ``crib_env.fast.show_points``, the crib part is
``crib_env.expected.expected_cribs`` (the crib's fifteens, pairs and runs by rank multisets, its
flush and nobs in closed form, instead of 15 x 46 x 990 = 683,100 crib counts).

That makes one hand well under a millisecond (``bench/bench_analysis.py``); ``tests/test_analysis.py``
checks it against a brute-force enumeration with ``crib_env.scoring.score_hand``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, as_card, cards_str
from crib_env.expected import expected_cribs
from crib_env.fast import show_points
from crib_env.game import HAND_SIZE

#: the 15 (discard pair, kept four) index splits of a six-card hand, in a fixed order
DISCARD_SPLITS: tuple[tuple[tuple[int, int], tuple[int, int, int, int]], ...] = tuple(
    (pair, tuple(i for i in range(HAND_SIZE) if i not in pair))  # type: ignore[misc]
    for pair in combinations(range(HAND_SIZE), 2)
)
#: ``DISCARD_SPLITS`` as int64 arrays for the kernels: the discarded pair's and the kept four's
#: positions in the six-card hand, row i for split i
SPLIT_PAIRS = np.array([p for p, _ in DISCARD_SPLITS], dtype=np.int64)
SPLIT_KEEPS = np.array([k for _, k in DISCARD_SPLITS], dtype=np.int64)

_N_SPLITS = len(DISCARD_SPLITS)


@njit(cache=True)
def discard_arrays(hand6, unseen):
    """The analyzer's arrays for six card ids ``hand6`` (int64 (6,)) and the cards the player has
    not seen ``unseen`` (int64 (U,), ascending; U >= 3): the kept four's show score with each
    unseen starter, int64 (15, U), and the exact expected crib of each discard, float64 (15,), rows
    in ``DISCARD_SPLITS`` order (see the module docstring for the crib's three parts)."""
    n_unseen = unseen.size
    hand_points = np.empty((_N_SPLITS, n_unseen), dtype=np.int64)
    for i in range(_N_SPLITS):
        keep = np.int64(0)
        for j in SPLIT_KEEPS[i]:
            keep |= np.int64(1) << hand6[j]
        for s in range(n_unseen):
            hand_points[i, s] = show_points(keep, unseen[s], False)
    first = np.empty(_N_SPLITS, dtype=np.int64)
    second = np.empty(_N_SPLITS, dtype=np.int64)
    for i in range(_N_SPLITS):
        first[i], second[i] = hand6[SPLIT_PAIRS[i, 0]], hand6[SPLIT_PAIRS[i, 1]]
    crib = expected_cribs(first, second, unseen)
    return hand_points, crib


@njit(cache=True)
def discard_order(hand_points, crib, dealer):
    """Indexes into ``DISCARD_SPLITS`` (int64 (15,)), best net expected points first: net is the
    mean of ``hand_points`` plus ``crib`` when ``dealer``, minus it when not. Ties: the higher
    expected hand, then the split order. Values are compared at 1e-9 points so that float noise
    never splits equal options."""
    net_key = np.empty(_N_SPLITS)
    hand_key = np.empty(_N_SPLITS)
    sign = 1.0 if dealer else -1.0
    for i in range(_N_SPLITS):
        hand = hand_points[i].sum() / hand_points.shape[1]
        net_key[i] = np.rint((hand + sign * crib[i]) * 1e9)
        hand_key[i] = np.rint(hand * 1e9)
    order = np.arange(_N_SPLITS)
    for i in range(1, _N_SPLITS):  # insertion sort: stable, so equal keys keep the split order
        j = i
        while j > 0 and (net_key[order[j]] > net_key[order[j - 1]]
                         or (net_key[order[j]] == net_key[order[j - 1]]
                             and hand_key[order[j]] > hand_key[order[j - 1]])):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    return order


@dataclass(frozen=True, slots=True)
class DiscardOption:
    """One way to lay away two cards: expected points of the kept hand and of the crib.

    ``hand`` and ``crib`` are expected show points (hand rules / crib rules); ``net`` is
    ``hand + crib`` for the dealer and ``hand - crib`` for the pone.
    """

    discard: tuple[int, int]
    keep: tuple[int, int, int, int]
    hand: float
    crib: float
    net: float

    def describe(self) -> str:
        return (f"throw {cards_str(self.discard)}, keep {cards_str(self.keep)}: hand {self.hand:.2f}"
                f", crib {self.crib:.2f}, net {self.net:+.2f}")


@dataclass(frozen=True, slots=True)
class DiscardTable:
    """The raw arrays behind an analysis, for callers that need more than the means.

    ``hand6``: the six cards; ``unseen``: the possible starters (U,); ``hand_points``: int (15, U),
    the kept four's show score with each starter, row i for ``DISCARD_SPLITS[i]``;
    ``crib``: float (15,), the exact expected crib score of each discard.
    """

    hand6: tuple[int, ...]
    unseen: np.ndarray
    hand_points: np.ndarray
    crib: np.ndarray

    def discard(self, i: int) -> tuple[int, int]:
        a, b = DISCARD_SPLITS[i][0]
        return (self.hand6[a], self.hand6[b])

    def keep(self, i: int) -> tuple[int, int, int, int]:
        return tuple(self.hand6[j] for j in DISCARD_SPLITS[i][1])  # type: ignore[return-value]


def check_hand6(hand6: Iterable[int | str], seen: Iterable[int | str] = ()) -> tuple[list[int],
                                                                                   list[int]]:
    """Validate six distinct cards (ids or text) and the other seen cards; return both as ids.

    Raises ``ValueError`` naming the problem: bad card text, not six cards, a duplicate, or a seen
    card that is also in the hand.
    """
    cards = [as_card(c) for c in hand6]
    if len(cards) != HAND_SIZE:
        raise ValueError(f"a hand to analyze has {HAND_SIZE} cards, got {len(cards)}"
                         + (f" ({cards_str(cards)})" if cards else ""))
    duplicates = sorted({c for c in cards if cards.count(c) > 1})
    if duplicates:
        raise ValueError(f"duplicate card {cards_str(duplicates)} in hand {cards_str(cards)}")
    seen_ids = sorted({as_card(c) for c in seen})
    clash = sorted(set(seen_ids) & set(cards))
    if clash:
        raise ValueError(f"seen cards {cards_str(clash)} are also in the hand {cards_str(cards)}")
    if N_CARDS - HAND_SIZE - len(seen_ids) < 3:
        raise ValueError("fewer than 3 unseen cards: no starter and opponent's pair to count")
    return cards, seen_ids


def discard_table(hand6: Sequence[int], seen: Sequence[int] = ()) -> DiscardTable:
    """Exact arrays for the 15 discards of six valid card ids (see ``check_hand6``)."""
    known = np.zeros(N_CARDS, dtype=bool)
    known[np.asarray(hand6, dtype=np.intp)] = True
    known[np.asarray(seen, dtype=np.intp)] = True
    unseen = np.flatnonzero(~known)
    hand_points, crib = discard_arrays(np.asarray(hand6, dtype=np.int64), unseen.astype(np.int64))
    return DiscardTable(tuple(int(c) for c in hand6), unseen, hand_points, crib)


def net_order(table: DiscardTable, dealer: bool) -> list[int]:
    """Indexes into ``DISCARD_SPLITS``, best net expected points first (ties: the higher expected
    hand, then the fixed split order)."""
    return [int(i) for i in discard_order(table.hand_points, table.crib, dealer)]


def options_from_table(table: DiscardTable, dealer: bool) -> list[DiscardOption]:
    """The 15 options of ``table``, in ``net_order``."""
    hand_mean = table.hand_points.mean(axis=1)
    sign = 1.0 if dealer else -1.0
    return [DiscardOption(table.discard(i), table.keep(i), float(hand_mean[i]),
                          float(table.crib[i]), float(hand_mean[i] + sign * table.crib[i]))
            for i in net_order(table, dealer)]


def analyze_discards(hand6: Iterable[int | str], dealer: bool,
                     seen: Iterable[int | str] = ()) -> list[DiscardOption]:
    """All 15 discards of a six-card hand, best first by net expected points.

    ``hand6``: six distinct cards (ids or text). ``dealer``: True if the crib is the player's own.
    ``seen``: other cards the player has seen (they can be neither starter nor opponent's card).
    Raises ``ValueError`` naming the problem for bad input.
    """
    cards, seen_ids = check_hand6(hand6, seen)
    return options_from_table(discard_table(cards, seen_ids), dealer)
