"""Reading observation vectors inside numba kernels: the one home of the compiled readers.

The compiled forms of the scripted agents (``agents.greedy_batch``, ``agents.standard_batch``,
``agents.pegging_batch``) and the card-features kernel (``agents.card_features_kernels``) read each
row of a ``(k, OBS_SIZE)`` batch themselves instead of calling ``crib_env.observation.decode`` once
per row. The offsets below are ``crib_env.observation.SLICES`` frozen as constants (as
``crib_env.fast`` does), and every reader rounds as ``decode`` does, so a kernel sees the same
values the one-row code sees. ``check_batch`` is the input check every ``act_batch`` shares.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS
from crib_env.game import HAND_SIZE, Phase
from crib_env.observation import COUNT_SCALE, MAX_SEQUENCE, OBS_SIZE, SCORE_SCALE, SLICES

O_HAND = SLICES["hand"].start
O_DISCARDS = SLICES["discards"].start
O_STARTER = SLICES["starter"].start
O_PLAYED_OWN = SLICES["played_own"].start
O_PLAYED_OPP = SLICES["played_opp"].start
O_SEQUENCE = SLICES["sequence"].start
O_COUNT = SLICES["count"].start
O_PHASE = SLICES["phase"].start
O_IS_DEALER = SLICES["is_dealer"].start
O_SCORES = SLICES["scores"].start
O_TARGET = SLICES["target"].start
O_OPP_LEFT = SLICES["opp_cards_left"].start
O_OPP_GO = SLICES["opp_said_go"].start
N_PHASES = len(Phase)
P_DISCARD = int(Phase.DISCARD)
P_PLAY = int(Phase.PLAY)
_N_CARDS = N_CARDS
_MAX_SEQUENCE = MAX_SEQUENCE
_SCORE_SCALE = float(SCORE_SCALE)
_COUNT_SCALE = float(COUNT_SCALE)
_HAND_SCALE = float(HAND_SIZE)


@njit(cache=True)
def cards_bits(row, start):
    """Bitmask of the card ids whose entry in the 52 slots from ``start`` is nonzero."""
    bits = np.int64(0)
    for c in range(_N_CARDS):
        if row[start + c] != 0:
            bits |= np.int64(1) << c
    return bits


@njit(cache=True)
def scaled_int(row, offset, scale):
    """``round(row[offset] * scale)`` as ``decode`` reads counts and scores (ties to even)."""
    return np.int64(np.rint(np.float64(row[offset]) * scale))


@njit(cache=True)
def phase_of(row):
    """The phase value: the first largest of the phase one-hot (``argmax`` as ``decode``)."""
    best = 0
    for i in range(1, N_PHASES):
        if row[O_PHASE + i] > row[O_PHASE + best]:
            best = i
    return best


@njit(cache=True)
def sequence_of(row, out):
    """The current count sequence's card ids, oldest first, into ``out``; returns how many. As
    ``decode``: rows with no nonzero entry are skipped, a filled row gives its first largest."""
    n = 0
    for i in range(_MAX_SEQUENCE):
        start = O_SEQUENCE + i * _N_CARDS
        filled = False
        best = 0
        for c in range(_N_CARDS):
            if row[start + c] != 0:
                filled = True
            if row[start + c] > row[start + best]:
                best = c
        if filled:
            out[n] = best
            n += 1
    return n


@njit(cache=True)
def sole_legal(legal):
    """The one card the mask ``legal`` (bool (52,)) allows, or -1 when it allows more (or none):
    an agent with a single legal card lays it without weighing anything."""
    only = -1
    for c in range(_N_CARDS):
        if legal[c]:
            if only >= 0:
                return -1
            only = c
    return only


@njit(cache=True)
def count_of(row):
    return scaled_int(row, O_COUNT, _COUNT_SCALE)


@njit(cache=True)
def own_score(row):
    return scaled_int(row, O_SCORES, _SCORE_SCALE)


@njit(cache=True)
def opp_score(row):
    return scaled_int(row, O_SCORES + 1, _SCORE_SCALE)


@njit(cache=True)
def target_of(row):
    return scaled_int(row, O_TARGET, _SCORE_SCALE)


@njit(cache=True)
def opp_cards_left(row):
    return scaled_int(row, O_OPP_LEFT, _HAND_SCALE)


@njit(cache=True)
def is_dealer(row):
    return row[O_IS_DEALER] > 0.5


@njit(cache=True)
def opp_said_go(row):
    return row[O_OPP_GO] > 0.5


def check_batch(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inputs of an ``act_batch`` as contiguous float32 (k, OBS_SIZE) and bool (k, 52) arrays.

    Raises ``ValueError`` naming the problem: a wrong shape, different row counts, or a row whose
    mask allows no card (the agent was asked to act when it cannot).
    """
    obs = np.asarray(observations)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (rows, {OBS_SIZE}), got {obs.shape}")
    if masks.ndim != 2 or masks.shape[1] != N_CARDS:
        raise ValueError(f"action_masks must have shape (rows, {N_CARDS}), got {masks.shape}")
    if obs.shape[0] != masks.shape[0]:
        raise ValueError(f"observations and action_masks must have the same rows, got "
                         f"{obs.shape[0]} and {masks.shape[0]}")
    legal = np.ascontiguousarray(masks != 0)
    empty = np.flatnonzero(~legal.any(axis=1))
    if empty.size:
        raise ValueError(f"action_mask allows no action in row {int(empty[0])} ({empty.size} such "
                         f"rows): an agent was asked to act when it cannot")
    return np.ascontiguousarray(obs, dtype=np.float32), legal


#: what a batch kernel writes in place of a card for a row it cannot act on
ERR_NOT_SIX = -1  # a discard-phase row without six cards in hand and discards together
ERR_ILLEGAL = -2  # the rule chose a card the row's mask does not allow


def raise_row_errors(agent: str, cards: np.ndarray) -> np.ndarray:
    """``cards`` back if every row got a card; else the error of the first bad row: ``ValueError``
    for a malformed observation, ``RuntimeError`` for an illegal choice (as ``ScriptedAgent.act``)."""
    bad = np.flatnonzero(cards < 0)
    if bad.size:
        row, code = int(bad[0]), int(cards[bad[0]])
        if code == ERR_NOT_SIX:
            raise ValueError(f"{agent}: observation row {row} is in the discard phase without six "
                             f"cards in hand and discards together")
        raise RuntimeError(f"{agent}: the card chosen in row {row} is not allowed by its mask")
    return cards


def decides_as(agent: object, cls: type, methods: tuple[str, ...]) -> bool:
    """True if ``type(agent)`` takes ``methods`` (those behind ``cls.act``) from ``cls`` unchanged,
    so that ``cls``'s compiled batch form decides as the agent's own ``act``. A subclass that
    changes one (the expert is a standard agent with other choices and a memory) must not inherit
    the batch form's decisions."""
    return all(getattr(type(agent), name) is getattr(cls, name) for name in methods)


def act_each_row(agent, observations: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``agent.act`` on every row: the batch form of an agent without a compiled one."""
    return np.array([agent.act(o, m) for o, m in zip(observations, legal, strict=True)],
                    dtype=np.int64)
