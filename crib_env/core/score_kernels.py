"""Scoring kernels: the show and pegging rules of ``crib_env.scoring`` over bitmasks and card ids,
with its tables frozen into the compiled code."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import JACK, N_CARDS, N_RANKS, N_SUITS, RANK_ARRAY, SUIT_ARRAY
from ..rule_kernels import fifteen_points, flush_points, run_points, set_points, thirty_one_points
from ..rules import (
    FIVE_CARD_FLUSH_POINTS,
    HAND_FLUSH_POINTS,
    MAX_HAND_SCORE,
    MAX_SET,
    MIN_RUN,
    NOBS_POINTS,
)
from ..scoring import FOUR_RANK_POINTS, RANK_POINTS
from .bits import four_cards
from .layout import COUNT, SEQ, SEQ_LEN

# -- tables (frozen into the compiled code) ----------------------------------------------------
_RANK = RANK_ARRAY.astype(np.int64)
_SUIT = SUIT_ARRAY.astype(np.int64)
_RANK_POINTS = RANK_POINTS.astype(np.int8)  # under 1 MB, so numba freezes it and can cache
_FOUR_RANK_POINTS = FOUR_RANK_POINTS.astype(np.int8)
#: bitmask of each suit's 13 cards
_SUIT_BITS = np.array([((1 << N_RANKS) - 1) << (N_RANKS * s) for s in range(N_SUITS)], dtype=np.int64)
_JACK = JACK
_MAX_SET = MAX_SET
_MIN_RUN = MIN_RUN
_HAND_FLUSH = HAND_FLUSH_POINTS
_FIVE_FLUSH = FIVE_CARD_FLUSH_POINTS
_NOBS = NOBS_POINTS
_N_CARDS = N_CARDS


@njit(cache=True)
def five_rank_points(a, b, c, d, e):
    """Fifteens, pairs and runs of five ranks (0..12, any order): the show score of four cards and
    the starter less flush and nobs (the ``scoring.RANK_POINTS`` table)."""
    # sorting network for five values
    if a > b:
        a, b = b, a
    if d > e:
        d, e = e, d
    if c > e:
        c, e = e, c
    if c > d:
        c, d = d, c
    if a > d:
        a, d = d, a
    if a > c:
        a, c = c, a
    if b > e:
        b, e = e, b
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return np.int64(_RANK_POINTS[(((a * N_RANKS + b) * N_RANKS + c) * N_RANKS + d) * N_RANKS + e])


@njit(cache=True)
def show_points(cards, starter, crib):
    """Show score of four cards (bitmask ``cards``) with ``starter`` (card id); ``crib`` applies the
    crib flush rule. Same as ``scoring.score_hand``."""
    c0, c1, c2, c3 = four_cards(cards)
    points = five_rank_points(_RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3], _RANK[starter])
    suit = _SUIT[c0]
    starter_suit = _SUIT[starter]
    points += flush_points(cards & _SUIT_BITS[suit] == cards, starter_suit == suit, crib)
    if cards & (np.int64(1) << (starter_suit * N_RANKS + _JACK)):
        points += _NOBS
    return points


@njit(cache=True)
def show_points_batch(hands, starters, crib, out):
    """``show_points`` for rows of four card ids ``hands`` (N, 4) with ``starters`` (N,) into
    ``out`` (N,)."""
    for i in range(hands.shape[0]):
        bits = np.int64(0)
        for j in range(4):
            bits |= np.int64(1) << np.int64(hands[i, j])
        out[i] = show_points(bits, np.int64(starters[i]), crib)


@njit(cache=True)
def points_without_starter(cards):
    """Show points of four cards (bitmask ``cards``) counted without a starter: fifteens, pairs,
    runs (the ``scoring.FOUR_RANK_POINTS`` table) and a four-card flush (4). Same as
    ``scoring.score_without_starter``."""
    c0, c1, c2, c3 = four_cards(cards)
    a, b, c, d = _RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3]
    # sorting network for four values
    if a > b:
        a, b = b, a
    if c > d:
        c, d = d, c
    if a > c:
        a, c = c, a
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    points = np.int64(_FOUR_RANK_POINTS[((a * N_RANKS + b) * N_RANKS + c) * N_RANKS + d])
    return points + flush_points(cards & _SUIT_BITS[_SUIT[c0]] == cards, False, False)


@njit(cache=True)
def show_points_over(cards, rank_left, suit_left):
    """Total show score (hand rules) of four cards (bitmask ``cards``) over a pool of starters
    given only by its counts: ``rank_left[r]`` starters of rank ``r`` and ``suit_left[s]`` of suit
    ``s`` (int64 (13,) and (4,), the four cards not among them). Equal to the sum of
    ``show_points(cards, s, False)`` over the pool, in closed form: fifteens, pairs and runs by the
    starter's rank, nobs by its suit, a four-card flush 4 with every starter and 5 with one of its
    suit. Divide by the pool's size for the expected hand over the unseen starters."""
    c0, c1, c2, c3 = four_cards(cards)
    total = np.int64(0)
    for r in range(N_RANKS):
        if rank_left[r] > 0:
            total += rank_left[r] * five_rank_points(_RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3], r)
    for c in (c0, c1, c2, c3):
        if _RANK[c] == _JACK:
            total += _NOBS * suit_left[_SUIT[c]]  # nobs with a starter of the jack's suit
    if cards & _SUIT_BITS[_SUIT[c0]] == cards:
        n_pool = np.int64(0)
        for r in range(N_RANKS):
            n_pool += rank_left[r]
        total += _HAND_FLUSH * n_pool + (_FIVE_FLUSH - _HAND_FLUSH) * suit_left[_SUIT[c0]]
    return total


@njit(cache=True)
def show_distribution(crib):
    """Counts of each show score 0..29 over all 270,725 four-card hands x 48 starters."""
    counts = np.zeros(MAX_HAND_SCORE + 1, dtype=np.int64)
    for c0 in range(_N_CARDS):
        for c1 in range(c0 + 1, _N_CARDS):
            for c2 in range(c1 + 1, _N_CARDS):
                for c3 in range(c2 + 1, _N_CARDS):
                    bits = ((np.int64(1) << c0) | (np.int64(1) << c1) | (np.int64(1) << c2)
                            | (np.int64(1) << c3))
                    for s in range(_N_CARDS):
                        if not (bits >> s) & 1:
                            counts[show_points(bits, s, crib)] += 1
    return counts


@njit(cache=True, inline="always")
def sequence_points(cards, start, n, count):
    """Points earned by the last of the ``n`` cards ``cards[start:start + n]`` (card ids, oldest
    first; only their ranks count) at the running ``count``: fifteen, 31, pairs, runs (not go /
    last card). Same as ``scoring.score_play``; the pegging rule of ``peg_points`` and of
    ``agents.rollout``. Inlined into its callers (numba IR inlining): called out of line it would
    cost ``peg_points`` about 20%."""
    end = start + n - 1
    last_rank = _RANK[cards[end]]
    tail = 1
    while tail < n and tail < _MAX_SET and _RANK[cards[end - tail]] == last_rank:
        tail += 1
    points = set_points(tail) + fifteen_points(count) + thirty_one_points(count)
    # Longest run among the last L cards: L distinct ranks spanning L consecutive values.
    best = 0
    seen = 0
    lo = 99
    hi = -1
    for k in range(1, n + 1):
        r = _RANK[cards[end + 1 - k]]
        if seen & (1 << r):
            break  # a repeated rank: no longer tail can be a run
        seen |= 1 << r
        lo = min(lo, r)
        hi = max(hi, r)
        if k >= _MIN_RUN and hi - lo == k - 1:
            best = k
    return points + run_points(best)


@njit(cache=True)
def peg_points(S, b):
    """Points earned by the last card of row ``b``'s count sequence (fifteen, 31, pairs, runs;
    not go / last card). Same as ``scoring.score_play``."""
    return sequence_points(S[b], SEQ, S[b, SEQ_LEN], S[b, COUNT])
