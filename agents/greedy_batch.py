"""The greedy agent compiled for many rows at once (behind ``GreedyAgent.act_batch``).

``agents.greedy`` is the reference; this is the same rule read straight from the observation
vectors (``agents.batch_obs``): discard the pair whose kept four are worth most without a starter
(``crib_env.fast.points_without_starter``), peg the card that scores most now
(``crib_env.fast.sequence_points``), ties drawn uniformly. The rules themselves are the core's.

``tie_weights`` exposes the tie set: for each card, how many of the tied best options lead to it
(a discard is chosen as a pair, and at the first discard step two pairs may lay the same card), so
a uniform draw over the options is a draw over the cards with these weights.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, VALUE_ARRAY
from crib_env.fast import points_without_starter, popcount, sequence_points
from crib_env.game import HAND_SIZE
from crib_env.rule_kernels import count_after

from .batch_obs import (
    ERR_ILLEGAL,
    ERR_NOT_SIX,
    O_DISCARDS,
    O_HAND,
    P_DISCARD,
    cards_bits,
    count_of,
    phase_of,
    sequence_of,
    sole_legal,
)

_N_CARDS = N_CARDS
_HAND_SIZE = HAND_SIZE
_VALUE = VALUE_ARRAY.astype(np.int64)
_SEQ_ROOM = 12  # the longest count sequence (8) and the card laid, with room to spare


@njit(cache=True)
def _best_discards(row, weights):
    """Discard phase: the pairs of the six cards holding the discards made so far, whose kept four
    score most; each adds 1 to the weight of the card it lays now (the lower one not yet laid)."""
    discards = cards_bits(row, O_DISCARDS)
    six_bits = cards_bits(row, O_HAND) | discards
    if popcount(six_bits) != _HAND_SIZE:
        return 0
    six = np.empty(_HAND_SIZE, dtype=np.int64)
    n = 0
    for c in range(_N_CARDS):
        if (six_bits >> c) & 1:
            six[n] = c
            n += 1
    best = -1
    total = 0
    for i in range(_HAND_SIZE):
        for j in range(i + 1, _HAND_SIZE):
            pair = (np.int64(1) << six[i]) | (np.int64(1) << six[j])
            if discards & ~pair:
                continue
            worth = points_without_starter(six_bits & ~pair)
            if worth > best:
                best = worth
                total = 0
                weights[:] = 0
            if worth == best:
                weights[six[j] if (discards >> six[i]) & 1 else six[i]] += 1
                total += 1
    return total


@njit(cache=True)
def _best_plays(row, legal, weights, seq):
    """Play phase: the legal cards that score most now (one legal card: that card)."""
    only = sole_legal(legal)
    if only >= 0:
        weights[only] = 1
        return 1
    n = sequence_of(row, seq)
    count = count_of(row)
    best = -1
    total = 0
    for c in range(_N_CARDS):
        if not legal[c]:
            continue
        seq[n] = c
        points = sequence_points(seq, 0, n + 1, count_after(count, _VALUE[c]))
        if points > best:
            best = points
            total = 0
            weights[:] = 0
        if points == best:
            weights[c] = 1
            total += 1
    return total


@njit(cache=True)
def _row_weights(row, legal, weights, seq):
    weights[:] = 0
    if phase_of(row) == P_DISCARD:
        return _best_discards(row, weights)
    return _best_plays(row, legal, weights, seq)


@njit(cache=True)
def tie_weights(observations, legal, out):
    """``out`` int64 (k, 52): per row, how many of the tied best options lead to each card (all 0
    for a discard-phase row without six cards)."""
    seq = np.empty(_SEQ_ROOM, dtype=np.int64)
    for b in range(observations.shape[0]):
        _row_weights(observations[b], legal[b], out[b], seq)


@njit(cache=True)
def greedy_actions(observations, legal, uniforms, out):
    """One card per row into ``out`` int64 (k,): option ``floor(u * options)`` of the tie set for
    the row's uniform ``u`` in [0, 1), counted through the cards in id order by their weights.
    ``ERR_NOT_SIX`` / ``ERR_ILLEGAL`` (``agents.batch_obs``) mark rows it cannot act on."""
    seq = np.empty(_SEQ_ROOM, dtype=np.int64)
    weights = np.zeros(_N_CARDS, dtype=np.int64)
    for b in range(observations.shape[0]):
        total = _row_weights(observations[b], legal[b], weights, seq)
        if total == 0:
            out[b] = ERR_NOT_SIX
            continue
        pick = min(np.int64(uniforms[b] * total), total - 1)
        card = 0
        while pick >= weights[card]:
            pick -= weights[card]
            card += 1
        out[b] = card if legal[b, card] else ERR_ILLEGAL
