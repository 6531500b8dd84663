"""The standard agent's pegging read straight from an observation row (compiled, many rows).

``best_play(row, legal, scratch)`` is ``best_card(tactic_values(view, legal))`` for the decoded
``view`` of ``row``: the end-game mode of ``endgame_mode``, then the tactical value of every legal
card (``agents.pegging_kernels.tactic_value``, the one implementation ``agents.pegging`` also
calls), the highest value winning and ties going to the lower card id. The opponent's reply ranks
are listed in the order ``view.unseen`` first shows them, as ``agents.pegging`` lists them, so the
values are the same floats and ties break the same way. The show in ``endgame_mode`` comes from
``crib_env.fast.show_points``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS, RANK_ARRAY
from crib_env.fast import popcount, show_points
from crib_env.game import KEEP_SIZE

from .batch_obs import (
    O_DISCARDS,
    O_HAND,
    O_PLAYED_OPP,
    O_PLAYED_OWN,
    O_STARTER,
    cards_bits,
    count_of,
    is_dealer,
    opp_cards_left,
    opp_said_go,
    opp_score,
    own_score,
    sequence_of,
    sole_legal,
    target_of,
)
from .pegging_kernels import (
    MODE_ATTACK,
    MODE_DEFEND,
    MODE_SCORE,
    PONE_COUNT_OUT,
    SEQ_ROOM,
    tactic_value,
)

_N_CARDS = N_CARDS
_N_RANKS = N_RANKS
_RANK = RANK_ARRAY.astype(np.int64)
_KEPT = KEEP_SIZE


@njit(cache=True)
def _lowest(bits):
    """The lowest card id in ``bits``, or -1 for none (``decode``'s starter)."""
    for c in range(_N_CARDS):
        if (bits >> c) & 1:
            return c
    return -1


@njit(cache=True)
def endgame_mode(row, hand, starter, need_own, need_opp, dealer):
    """``agents.pegging.endgame_mode``: defend when the pone's kept four already reach its target
    in the show, attack when the dealer faces a pone within ``PONE_COUNT_OUT``, else score."""
    if starter < 0:
        return MODE_SCORE
    if not dealer:
        kept = hand | cards_bits(row, O_PLAYED_OWN)
        if popcount(kept) == _KEPT and show_points(kept, starter, False) >= need_own:
            return MODE_DEFEND
    elif need_opp <= PONE_COUNT_OUT:
        return MODE_ATTACK
    return MODE_SCORE


@njit(cache=True)
def best_play(row, legal, seq, reply):
    """The standard agent's card in the play phase of observation ``row`` with mask ``legal``
    (bool (52,)): the only legal card, or the highest ``tactic_value`` (ties: the lower card id).
    ``seq`` (``SEQ_ROOM``,) and ``reply`` (13,) are scratch."""
    only = sole_legal(legal)
    if only >= 0:
        return only
    hand = cards_bits(row, O_HAND)
    starter_bits = cards_bits(row, O_STARTER)
    starter = _lowest(starter_bits)
    seen = (hand | cards_bits(row, O_DISCARDS) | cards_bits(row, O_PLAYED_OWN)
            | cards_bits(row, O_PLAYED_OPP) | (np.int64(1) << starter if starter >= 0 else 0))
    order = np.empty(_N_RANKS, dtype=np.int64)
    unseen = np.zeros(_N_RANKS, dtype=np.int64)
    n_order = 0
    n_unseen = 0
    for c in range(_N_CARDS):
        if not (seen >> c) & 1:
            r = _RANK[c]
            if unseen[r] == 0:
                order[n_order] = r
                n_order += 1
            unseen[r] += 1
            n_unseen += 1
    target = target_of(row)
    need_own = target - own_score(row)
    need_opp = target - opp_score(row)
    dealer = is_dealer(row)
    mode = endgame_mode(row, hand, starter, need_own, need_opp, dealer)
    opp_left = opp_cards_left(row)
    k = 0 if opp_said_go(row) else opp_left
    n = sequence_of(row, seq)
    count = count_of(row)
    best = -1
    best_value = 0.0
    for c in range(_N_CARDS):
        if not legal[c]:
            continue
        value = tactic_value(c, hand, seq, n, count, order, n_order, unseen, n_unseen, k,
                             opp_left, need_own, need_opp, mode, reply)
        if best < 0 or value > best_value:
            best = c
            best_value = value
    return best


__all__ = ["MODE_ATTACK", "MODE_DEFEND", "MODE_SCORE", "SEQ_ROOM", "best_play", "endgame_mode",
           "tactic_value"]
