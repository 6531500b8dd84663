"""Expected crib points of a throw, over every way the cards a player has not seen can fall.

``expected_cribs(first, second, unseen)`` is exact: the crib's mean show score (crib rules) over
every starter and every pair the opponent could throw from the ``unseen`` cards, all such deals
equally likely. Counting them one by one would be U x C(U - 1, 2) crib counts per throw (45,540 at
the deal); instead the score is split, as the show's rules allow, into

* fifteens, pairs and runs, which depend only on the five ranks: the three unseen crib cards
  (starter and opponent's pair) are grouped by rank multiset (at most 455), each weighted by how
  many card triples make it (``triple_weights``), and read from a table of
  ``scoring.RANK_POINTS`` (two thrown ranks with each multiset);
* the crib flush (``FIVE_CARD_FLUSH_POINTS``, five cards only): both thrown cards of one suit and
  the three unseen cards of that suit too;
* nobs (``NOBS_POINTS``): a jack in the crib of the starter's suit, one of the thrown cards or one
  of the opponent's, counted in closed form.

``crib_by_discard_ranks()`` is the cheap stand-in where the thrower's other cards are unknown (an
opponent model): the first part alone, with a full pack less the two thrown cards.
``tests/test_analysis.py`` checks both against brute-force enumeration with
``crib_env.scoring.score_hand``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np
from numba import njit

from .cards import JACK, N_RANKS, N_SUITS, RANK_ARRAY, SUIT_ARRAY
from .rules import FIVE_CARD_FLUSH_POINTS, NOBS_POINTS
from .scoring import RANK_POINTS

# Rank multisets of the three unseen crib cards (starter + opponent's pair): x <= y <= z.
_TRIPLES = np.array(list(combinations_with_replacement(range(N_RANKS), 3)), dtype=np.intp)
_TX, _TY, _TZ = (np.ascontiguousarray(_TRIPLES[:, i]) for i in range(3))  # numba caches contiguous globals
_ALL_SAME = (_TX == _TZ)
_LOW_PAIR = (_TX == _TY) & (_TY < _TZ)
_HIGH_PAIR = (_TX < _TY) & (_TY == _TZ)


def _crib_rank_table() -> np.ndarray:
    """``table[r1, r2, t]``: fifteens + pairs + runs of thrown ranks r1, r2 with triple ``t``
    (an index into ``_TRIPLES``); int16 (13, 13, 455). Impossible five-of-a-rank entries are 0 and
    always get weight 0."""
    r1, r2 = np.meshgrid(np.arange(N_RANKS), np.arange(N_RANKS), indexing="ij")
    five = np.stack(np.broadcast_arrays(r1[:, :, None], r2[:, :, None], _TX[None, None, :],
                                        _TY[None, None, :], _TZ[None, None, :]), axis=-1)
    five = np.sort(five, axis=-1)
    key = np.zeros(five.shape[:-1], dtype=np.int64)
    for i in range(5):
        key = key * N_RANKS + five[..., i]
    return RANK_POINTS[key].astype(np.int16)


_CRIB_RANKS = _crib_rank_table()  # frozen into the kernels below (150 kB)
_RANK = RANK_ARRAY.astype(np.int64)
_SUIT = SUIT_ARRAY.astype(np.int64)
_JACK = JACK
_FLUSH = FIVE_CARD_FLUSH_POINTS
_NOBS = NOBS_POINTS


@njit(cache=True)
def triple_weights(n):
    """How many card triples make each rank multiset of three cards (x <= y <= z, in
    ``combinations_with_replacement`` order: 455 of them), float64 (455,), when ``n[r]`` (float64
    (13,)) cards of rank ``r`` are left to draw from."""
    weight = np.empty(_TX.size)
    for t in range(_TX.size):
        x, y, z = _TX[t], _TY[t], _TZ[t]
        if _ALL_SAME[t]:
            weight[t] = n[x] * (n[x] - 1) / 2 * (n[x] - 2) / 3
        elif _LOW_PAIR[t]:
            weight[t] = n[x] * (n[x] - 1) / 2 * n[z]
        elif _HIGH_PAIR[t]:
            weight[t] = n[x] * (n[y] * (n[y] - 1) / 2)
        else:
            weight[t] = n[x] * n[y] * n[z]
    return weight


@njit(cache=True)
def expected_cribs(first, second, unseen):
    """The exact expected crib score of each throw ``(first[i], second[i])`` (card ids, int64
    (k,)) when the starter and the opponent's two cards are drawn from ``unseen`` (int64 (U,),
    U >= 3, none of them thrown): float64 (k,). See the module docstring for the three parts."""
    n_unseen = unseen.size
    n = np.zeros(N_RANKS)  # unseen cards of each rank
    u = np.zeros(N_SUITS)  # ... and of each suit
    for c in unseen:
        n[_RANK[c]] += 1.0
        u[_SUIT[c]] += 1.0
    weight = triple_weights(n)
    triples = n_unseen * (n_unseen - 1) * (n_unseen - 2) / 6
    # nobs over the ordered deals (starter s, unordered pair from the other U - 1 cards)
    deals = n_unseen * (n_unseen - 1) * (n_unseen - 2) / 2
    opp_jacks = 0.0
    for c in unseen:
        if _RANK[c] == _JACK:
            opp_jacks += (u[_SUIT[c]] - 1) * (n_unseen - 2)
    crib = np.empty(first.size)
    for i in range(first.size):
        a, b = first[i], second[i]
        ranks = _CRIB_RANKS[_RANK[a], _RANK[b]]
        total = 0.0
        for t in range(_TX.size):
            total += ranks[t] * weight[t]
        value = total / triples
        if _SUIT[a] == _SUIT[b]:  # five-card flush: the three unseen cards of that suit too
            u_s = u[_SUIT[a]]
            value += _FLUSH * u_s * (u_s - 1) * (u_s - 2) / 6 / triples
        own_jacks = 0.0
        if _RANK[a] == _JACK:
            own_jacks += u[_SUIT[a]]
        if _RANK[b] == _JACK:
            own_jacks += u[_SUIT[b]]
        value += _NOBS * own_jacks * ((n_unseen - 1) * (n_unseen - 2) / 2) / deals
        crib[i] = value + _NOBS * opp_jacks / deals
    return crib


@lru_cache(maxsize=1)
def crib_by_discard_ranks() -> np.ndarray:
    """Float (13, 13): the expected fifteens, pairs and runs of a crib holding two thrown cards of
    ranks ``r1``, ``r2``, the other three cards (the opponent's pair and the starter) drawn from
    a full pack less those two, everything else unknown. A cheap stand-in for ``expected_cribs``
    where the thrower's other cards are not known (the rollouts' opponent model): it leaves out
    the crib flush and nobs, so for two throws of different suits it is never above
    ``expected_cribs`` and at most half a point below it (a thrown jack's nobs;
    ``tests/test_analysis.py``). Exact under its own assumptions (integer points times integer
    triple counts, summed exactly)."""
    table = np.zeros((N_RANKS, N_RANKS))
    for r1 in range(N_RANKS):
        for r2 in range(N_RANKS):
            n = np.full(N_RANKS, float(N_SUITS))  # one card of each rank per suit
            n[r1] -= 1
            n[r2] -= 1
            weight = triple_weights(n)
            table[r1, r2] = _CRIB_RANKS[r1, r2] @ weight / weight.sum()
    return table
