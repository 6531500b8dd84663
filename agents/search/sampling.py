"""Sampled deals for the search: the opponent's hidden cards drawn from what the player has not
seen, and every candidate card valued on the same draws (common random numbers)."""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.fast import DISC, HAND, NDISC, NHAND
from crib_env.game import DISCARDS_PER_PLAYER, KEEP_SIZE

from ..opponent_model import ModelTables, OpponentCards, sample_opponent
from ..rollout import _card_bits
from .solve import new_stack, solve_after

_KEEP_SIZE = KEEP_SIZE
_DISCARDS = DISCARDS_PER_PLAYER


@njit(cache=True)
def draw_opponents(opponent: OpponentCards, n: int, seed: int, model: bool, opp_deals: bool,
                   tables: ModelTables) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws of the opponent's cards: its four kept cards (those laid first, then those it
    still holds) and its two discards, by ``agents.opponent_model.sample_opponent``."""
    kept = np.zeros((n, _KEEP_SIZE), dtype=np.int64)
    discards = np.zeros((n, _DISCARDS), dtype=np.int64)
    held = np.zeros(_KEEP_SIZE, dtype=np.int64)
    picks = np.arange(opponent.pool.size)
    used = np.zeros(opponent.pool.size, dtype=np.bool_)
    m = opponent.played.size
    np.random.seed(seed)
    for s in range(n):
        sample_opponent(opponent, model, opp_deals, tables, held, discards[s], picks, used)
        for i in range(m):
            kept[s, i] = opponent.played[i]
        for i in range(opponent.held):
            kept[s, m + i] = held[i]
    return kept, discards


@njit(cache=True)
def deal_opponent(row: np.ndarray, kept: np.ndarray, discards: np.ndarray, n_laid: int) -> None:
    """Give the opponent of ``row`` one sampled deal: the cards of ``kept`` after the first
    ``n_laid`` (those it has laid) in its hand, and the discards ``discards``."""
    row[HAND + 1] = _card_bits(kept[n_laid:])
    row[NHAND + 1] = kept.size - n_laid
    row[DISC + 1] = _card_bits(discards)
    row[NDISC + 1] = discards.size


@njit(cache=True)
def solved_values(position: np.ndarray, candidates: np.ndarray, kept: np.ndarray,
                  discards: np.ndarray, n_laid: int, wins: np.ndarray) -> np.ndarray:
    """(candidates, samples): player 0's chance to win after laying each candidate in each
    sampled deal, the rest of the play solved exactly (``solve``). ``position`` is the play as the
    player sees it (``agents.rollout.play_position``); sample ``s`` gives the opponent the cards of
    ``kept[s]`` after the first ``n_laid`` (those it has laid) and the discards ``discards[s]``."""
    out = np.zeros((candidates.size, kept.shape[0]))
    row = position.copy()
    stack = new_stack()
    for s in range(kept.shape[0]):
        deal_opponent(row, kept[s], discards[s], n_laid)
        for c in range(candidates.size):
            out[c, s] = solve_after(row, candidates[c], wins, stack)
    return out
