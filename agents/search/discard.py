"""The search's discards: each throw valued by the chance to win after the whole deal, over sampled
deals (numba).

A sampled deal gives the opponent six cards from those the player has not seen, kept the way an
expected-value player would keep them (``agents.opponent_model.sample_opponent``), and a starter
from the rest. Every throw is valued on the same sampled deals (common random numbers): the deal
is set up on a ``crib_env.fast`` row, both players' discards are made by ``apply_action`` (so the
cut and his heels come from the rules core), and the whole play is solved exactly with both hands
known (``agents.search.solve``), the show and the crib counted, the board read from the win-odds
table.
"""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from crib_env.fast import DEALER, N_FIELDS, SCORE, TARGET, TO_MOVE, WINNER, apply_action, set_deal
from crib_env.game import DISCARDS_PER_PLAYER, KEEP_SIZE

from ..opponent_model import ModelTables, OpponentCards, sample_opponent
from ..rollout import _card_bits
from .solve import new_stack, solve

_KEEP_SIZE = KEEP_SIZE
_DISCARDS = DISCARDS_PER_PLAYER


def discard_position(own_score: int, opp_score: int, target: int, is_dealer: bool) -> np.ndarray:
    """A ``crib_env.fast`` row before the deal, the player as player 0: scores, target, dealer."""
    row = np.zeros(N_FIELDS, dtype=np.int64)
    row[SCORE] = own_score
    row[SCORE + 1] = opp_score
    row[TARGET] = target
    row[DEALER] = 0 if is_dealer else 1
    row[WINNER] = -1
    return row


@njit(cache=True)
def _discard_both(S, mine, theirs):
    """Make both players' discards on row 0 of ``S``, in the order the rules ask for them."""
    i_mine = 0
    i_theirs = 0
    for _ in range(2 * _DISCARDS):
        if S[0, TO_MOVE] == 0:
            apply_action(S, 0, mine[i_mine])
            i_mine += 1
        else:
            apply_action(S, 0, theirs[i_theirs])
            i_theirs += 1


@njit(cache=True)
def draw_deals(opponent: OpponentCards, n: int, seed: int, model: bool, opp_deals: bool,
               tables: ModelTables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` sampled deals: the opponent's kept four (n, 4), its throw (n, 2) and the starter (n,),
    from ``opponent`` (the unseen cards, ``held`` = 4, nothing laid)."""
    kept = np.zeros((n, _KEEP_SIZE), dtype=np.int64)
    thrown = np.zeros((n, _DISCARDS), dtype=np.int64)
    starters = np.zeros(n, dtype=np.int64)
    picks = np.arange(opponent.pool.size)
    used = np.zeros(opponent.pool.size, dtype=np.bool_)
    np.random.seed(seed)
    for s in range(n):
        sample_opponent(opponent, model, opp_deals, tables, kept[s], thrown[s], picks, used)
        starter = -1
        while starter < 0:
            card = opponent.pool[np.random.randint(opponent.pool.size)]
            if card not in kept[s] and card not in thrown[s]:
                starter = card
        starters[s] = starter
    return kept, thrown, starters


@njit(cache=True)
def throw_values(position: np.ndarray, hand: np.ndarray, throws: np.ndarray, kept: np.ndarray,
                 thrown: np.ndarray, starters: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """(throws, samples): player 0's chance to win after throwing ``throws[t]`` (two of its six
    cards ``hand``) in each sampled deal of ``draw_deals``; ``position`` is ``discard_position``'s
    row."""
    out = np.zeros((throws.shape[0], kept.shape[0]))
    mine = _card_bits(hand)
    stack = new_stack()
    for s in range(kept.shape[0]):
        theirs = _card_bits(kept[s]) | _card_bits(thrown[s])
        for t in range(throws.shape[0]):
            stack[0, :] = position
            set_deal(stack, 0, mine, theirs, starters[s])
            _discard_both(stack, throws[t], thrown[s])
            out[t, s] = solve(stack, wins)
    return out


def card_values(throws: Iterable[Iterable[int]], values: Iterable[float]) -> dict[int, float]:
    """Each card's value when a throw is laid card by card: that of the best throw holding it
    (``values[t]`` is throw ``throws[t]``'s)."""
    best: dict[int, float] = {}
    for throw, value in zip(throws, values, strict=True):
        for card in throw:
            best[int(card)] = max(best.get(int(card), -np.inf), float(value))
    return best
