"""The standard agent compiled for many rows at once (behind ``StandardAgent.act_batch``).

``agents.standard`` is the reference. Discards: the analyzer's arrays (``analysis.discard_arrays``)
and order (``analysis.discard_order``), and near the end the win chances
(``endgame.win_chances_by_discard``) are the very kernels the one-row agent calls; only the choice
among them (``endgame.choose_discard`` and the agent's "choose again if the first discard was not
ours") is restated here. Pegging: ``agents.pegging_batch.best_play``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS
from crib_env.game import HAND_SIZE

from .analysis import SPLIT_PAIRS, discard_arrays, discard_order
from .batch_obs import (
    ERR_ILLEGAL,
    ERR_NOT_SIX,
    O_DISCARDS,
    O_HAND,
    P_DISCARD,
    cards_bits,
    is_dealer,
    opp_score,
    own_score,
    phase_of,
    target_of,
)
from .endgame import ENDGAME_NEED, WIN_TIE, near_the_end, win_chances_by_discard
from .pegging_batch import SEQ_ROOM, best_play

_N_CARDS = N_CARDS
_HAND_SIZE = HAND_SIZE


@njit(cache=True)
def _choose(order, chances, endgame, six, already):
    """``endgame.choose_discard``: the first discard in ``order`` holding the cards ``already``
    laid (bitmask), or near the end the first whose win chance is within ``WIN_TIE`` of the best
    of those."""
    best = -1.0
    first = -1
    for i in order:
        pair = (np.int64(1) << six[SPLIT_PAIRS[i, 0]]) | (np.int64(1) << six[SPLIT_PAIRS[i, 1]])
        if already & ~pair:
            continue
        if first < 0:
            first = i
        if endgame:
            best = max(best, chances[i])
    if not endgame:
        return first
    for i in order:
        pair = (np.int64(1) << six[SPLIT_PAIRS[i, 0]]) | (np.int64(1) << six[SPLIT_PAIRS[i, 1]])
        if not already & ~pair and chances[i] >= best - WIN_TIE:
            return i
    return first


@njit(cache=True)
def best_discard(row, win_table):
    """The standard agent's card in the discard phase of observation ``row`` (``ERR_NOT_SIX``
    without six cards); ``win_table``: ``endgame.win_table`` of the row's target."""
    discards = cards_bits(row, O_DISCARDS)
    six_bits = cards_bits(row, O_HAND) | discards
    six = np.empty(_HAND_SIZE, dtype=np.int64)
    unseen = np.empty(_N_CARDS, dtype=np.int64)
    n_six = 0
    n_unseen = 0
    for c in range(_N_CARDS):
        if (six_bits >> c) & 1:
            if n_six == _HAND_SIZE:
                return ERR_NOT_SIX
            six[n_six] = c
            n_six += 1
        else:
            unseen[n_unseen] = c
            n_unseen += 1
    if n_six != _HAND_SIZE:
        return ERR_NOT_SIX
    hand_points, crib = discard_arrays(six, unseen[:n_unseen])
    dealer = is_dealer(row)
    order = discard_order(hand_points, crib, dealer)
    own, opp, target = own_score(row), opp_score(row), target_of(row)
    endgame = near_the_end(target - own, target - opp, ENDGAME_NEED)
    chances = (win_chances_by_discard(hand_points, crib, dealer, own, opp, target, win_table)
               if endgame else np.zeros(0))
    choice = _choose(order, chances, endgame, six, np.int64(0))
    a, b = six[SPLIT_PAIRS[choice, 0]], six[SPLIT_PAIRS[choice, 1]]
    if discards & ~((np.int64(1) << a) | (np.int64(1) << b)):  # not our own first choice
        choice = _choose(order, chances, endgame, six, discards)
        a, b = six[SPLIT_PAIRS[choice, 0]], six[SPLIT_PAIRS[choice, 1]]
    return b if (discards >> a) & 1 else a  # the lower card of the pair not yet laid


@njit(cache=True)
def standard_actions(observations, legal, win_table, out):
    """One card per row into ``out`` int64 (k,): ``StandardAgent.act`` on each row.
    ``ERR_NOT_SIX`` / ``ERR_ILLEGAL`` (``agents.batch_obs``) mark rows it cannot act on."""
    seq = np.empty(SEQ_ROOM, dtype=np.int64)
    reply = np.empty(N_RANKS, dtype=np.int64)
    for b in range(observations.shape[0]):
        row = observations[b]
        if phase_of(row) == P_DISCARD:
            card = best_discard(row, win_table)
        else:
            card = best_play(row, legal[b], seq, reply)
        if card >= 0 and not legal[b, card]:
            card = ERR_ILLEGAL
        out[b] = card
