"""The opponent's next card chosen by the network instead of by the exact solve (``reply``).

In a sampled deal both hands are known, so the exact solve lets the opponent answer each candidate
card as if it could see the player's hand. A real opponent cannot. With ``reply`` set, the
opponent's first card after each candidate is taken from the policy network sitting in its seat,
with the observation it would have in that sampled deal (``crib_env.fast.encode_obs`` of the
opponent's seat: its sampled hand and discards, the public plays); the value of the candidate is
the network's probability of each answer times the exact solve after it. The rest of the play is
solved as before.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS, RANK_ARRAY
from crib_env.fast import (
    N_FIELDS,
    P_PLAY,
    PHASE,
    TO_MOVE,
    apply_action,
    encode_obs,
    legal_bits,
    nth_card,
)
from crib_env.observation import OBS_SIZE

from .sampling import deal_opponent
from .solve import new_stack, solve, solve_after

_RANK = RANK_ARRAY.astype(np.int64)
_N_CARDS = N_CARDS
_OBS_SIZE = OBS_SIZE
_N_RANKS = N_RANKS


@njit(cache=True)
def after_candidates(position: np.ndarray, candidates: np.ndarray, kept: np.ndarray,
                     discards: np.ndarray, n_laid: int):
    """Rows (C * S, N_FIELDS) of each sampled deal (as in ``sampling.solved_values``) after each
    candidate card, row ``c * S + s``; with ``answer`` True where the opponent is then to move
    with cards of two ranks or more, its observation ``obs`` and legal cards ``masks`` there."""
    n_c, n_s = candidates.size, kept.shape[0]
    rows = np.zeros((n_c * n_s, N_FIELDS), dtype=np.int64)
    answer = np.zeros(n_c * n_s, dtype=np.bool_)
    obs = np.zeros((n_c * n_s, _OBS_SIZE), dtype=np.float32)
    masks = np.zeros((n_c * n_s, _N_CARDS), dtype=np.int8)
    row = position.copy()
    for s in range(n_s):
        deal_opponent(row, kept[s], discards[s], n_laid)
        for c in range(n_c):
            r = c * n_s + s
            rows[r, :] = row
            apply_action(rows, r, candidates[c])
            if rows[r, PHASE] != P_PLAY or rows[r, TO_MOVE] != 1:
                continue
            legal = legal_bits(rows, r)
            ranks = 0
            bits = legal
            while bits:
                card = nth_card(bits, 0)
                masks[r, card] = 1
                ranks |= np.int64(1) << _RANK[card]
                bits &= bits - 1
            if ranks & (ranks - 1):  # two ranks or more: a real choice
                answer[r] = True
                encode_obs(rows, r, 1, obs[r])
    return rows, answer, obs, masks


@njit(cache=True)
def answered_values(rows: np.ndarray, answer: np.ndarray, probs: np.ndarray,
                    wins: np.ndarray) -> np.ndarray:
    """Player 0's chance to win from each row: where ``answer``, the mean over the opponent's
    cards weighted by ``probs`` (rows, 52) of the exact solve after each; elsewhere the solve."""
    out = np.zeros(rows.shape[0])
    stack = new_stack()
    by_rank = np.zeros(_N_RANKS)
    for r in range(rows.shape[0]):
        if not answer[r]:
            stack[0, :] = rows[r]
            out[r] = solve(stack, wins)
            continue
        done = 0
        value = 0.0
        for card in range(_N_CARDS):
            p = probs[r, card]
            if p <= 0.0:
                continue
            bit = np.int64(1) << _RANK[card]
            if not done & bit:  # two cards of one rank are one move (see ``solve``)
                by_rank[_RANK[card]] = solve_after(rows[r], card, wins, stack)
                done |= bit
            value += p * by_rank[_RANK[card]]
        out[r] = value
    return out
