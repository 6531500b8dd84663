"""Exact play of the rest of a deal once every card is fixed (numba).

With both hands and the starter given by a sampled deal, the rest of the play is a small game of
perfect information: at most eight cards, each player choosing among at most four. ``solve``
searches it to the end with alpha-beta, the moves made by ``crib_env.fast.apply_action`` (so go,
31, the count restarting, the last card and the show come from the rules core, not from here),
and values every end by the chance that player 0 wins the game:

* 1 or 0 when a player reaches the target during the rest of the deal;
* else the win-odds table's chance from the scores the deal ends on, with the next deal's dealer
  (``agents.endgame.win_table``: ``crib_env.odds`` at its target, a per-deal model otherwise).

Two cards of one rank in one hand are the same move in the play (the points of a play depend on
ranks and counting values, and the show counts the same four cards whatever their order), so only
one of them is searched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import RANK_ARRAY
from crib_env.fast import (
    DEALER,
    N_FIELDS,
    P_DEAL_OVER,
    P_GAME_OVER,
    PHASE,
    SCORE,
    TARGET,
    TO_MOVE,
    WINNER,
    apply_action,
    legal_bits,
    nth_card,
)

_RANK = RANK_ARRAY.astype(np.int64)
#: moves left in a play at most (both players' four cards), plus the root
MAX_DEPTH = 9


@njit(cache=True)
def end_value(S, d, wins):
    """Player 0's chance to win from row ``d`` of ``S`` once its deal is over."""
    if S[d, PHASE] == P_GAME_OVER:
        return 1.0 if S[d, WINNER] == 0 else 0.0
    top = S[d, TARGET] - 1
    deals_next = 1 if S[d, DEALER] == 1 else 0  # the pone deals the next deal
    return wins[min(S[d, SCORE], top), min(S[d, SCORE + 1], top), deals_next]


@njit(cache=True, inline="always")
def _update(best, alpha, beta, maximizing, d, value):
    if maximizing[d]:
        if value > best[d]:
            best[d] = value
        if best[d] > alpha[d]:
            alpha[d] = best[d]
    else:
        if value < best[d]:
            best[d] = value
        if best[d] < beta[d]:
            beta[d] = best[d]


@njit(cache=True)
def solve(S, wins):
    """Value for player 0 of row 0 of the stack ``S`` (``new_stack``) under best play by both
    players; the rows below 0 are scratch. Alpha-beta, written as a loop over an explicit stack
    (numba's on-disk cache does not keep recursive functions)."""
    if S[0, PHASE] >= P_DEAL_OVER:
        return end_value(S, 0, wins)
    n = S.shape[0]
    remaining = np.zeros(n, dtype=np.int64)  # legal cards not yet tried, per depth
    ranks = np.zeros(n, dtype=np.int64)  # ranks tried, per depth
    maximizing = np.zeros(n, dtype=np.bool_)
    best = np.zeros(n)
    alpha = np.zeros(n)
    beta = np.zeros(n)
    d = 0
    remaining[0] = legal_bits(S, 0)
    maximizing[0] = S[0, TO_MOVE] == 0
    best[0] = -1.0 if maximizing[0] else 2.0
    alpha[0], beta[0] = -1.0, 2.0
    while True:
        if remaining[d] != 0 and alpha[d] < beta[d]:
            card = nth_card(remaining[d], 0)
            remaining[d] &= remaining[d] - 1
            rank_bit = np.int64(1) << _RANK[card]
            if ranks[d] & rank_bit:
                continue
            ranks[d] |= rank_bit
            S[d + 1, :] = S[d, :]
            apply_action(S, d + 1, card)
            if S[d + 1, PHASE] >= P_DEAL_OVER:
                _update(best, alpha, beta, maximizing, d, end_value(S, d + 1, wins))
                continue
            d += 1
            remaining[d] = legal_bits(S, d)
            ranks[d] = 0
            maximizing[d] = S[d, TO_MOVE] == 0
            best[d] = -1.0 if maximizing[d] else 2.0
            alpha[d], beta[d] = alpha[d - 1], beta[d - 1]
            continue
        if d == 0:
            return best[0]
        d -= 1
        _update(best, alpha, beta, maximizing, d, best[d + 1])


@njit(cache=True)
def solve_after(row, card, wins, stack):
    """Player 0's value of laying ``card`` in the full-information position ``row``."""
    stack[0, :] = row
    apply_action(stack, 0, card)
    return solve(stack, wins)


@njit(cache=True)
def solve_rows(rows, wins):
    """Player 0's value of each full-information row of ``rows`` (in the play, or its deal
    already over) under best play by both players to the end of its deal."""
    out = np.zeros(rows.shape[0])
    stack = new_stack()
    for i in range(rows.shape[0]):
        stack[0, :] = rows[i]
        out[i] = solve(stack, wins)
    return out


@njit(cache=True)
def new_stack():
    """Scratch rows for ``solve``."""
    return np.zeros((MAX_DEPTH + 1, N_FIELDS), dtype=np.int64)
