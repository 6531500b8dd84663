"""Observation encoding in the compiled core: ``crib_env.observation.encode`` of a state row, with
the observation's layout (its named slices) frozen into the kernel."""

from __future__ import annotations

from numba import njit

from ..cards import N_CARDS
from ..game import HAND_SIZE
from ..observation import COUNT_SCALE, SCORE_SCALE, SLICES
from .bits import low_card
from .layout import (
    COUNT,
    DEALER,
    DISC,
    HAND,
    NHAND,
    PHASE,
    PLAYED,
    SAID_GO,
    SCORE,
    SEQ,
    SEQ_LEN,
    STARTER,
    TARGET,
)

# Observation offsets (the layout of crib_env.observation; one source of truth).
_O_HAND = SLICES["hand"].start
_O_DISC = SLICES["discards"].start
_O_STARTER = SLICES["starter"].start
_O_PLAYED_OWN = SLICES["played_own"].start
_O_PLAYED_OPP = SLICES["played_opp"].start
_O_SEQ = SLICES["sequence"].start
_O_COUNT = SLICES["count"].start
_O_PHASE = SLICES["phase"].start
_O_DEALER = SLICES["is_dealer"].start
_O_SCORES = SLICES["scores"].start
_O_TARGET = SLICES["target"].start
_O_OPP_LEFT = SLICES["opp_cards_left"].start
_O_OPP_GO = SLICES["opp_said_go"].start
_SCORE_SCALE = SCORE_SCALE
_COUNT_SCALE = COUNT_SCALE
_HAND_SIZE = HAND_SIZE
_N_CARDS = N_CARDS


@njit(cache=True)
def _set_bits(out, offset, bits):
    while bits:
        out[offset + low_card(bits)] = 1.0
        bits &= bits - 1


@njit(cache=True)
def encode_obs(S, b, player, out):
    """Write ``player``'s observation of row ``b`` into ``out`` (float32, OBS_SIZE): identical to
    ``crib_env.observation.encode(game, player)``."""
    out[:] = 0.0
    opp = 1 - player
    _set_bits(out, _O_HAND, S[b, HAND + player])
    _set_bits(out, _O_DISC, S[b, DISC + player])
    if S[b, STARTER] >= 0:
        out[_O_STARTER + S[b, STARTER]] = 1.0
    _set_bits(out, _O_PLAYED_OWN, S[b, PLAYED + player])
    _set_bits(out, _O_PLAYED_OPP, S[b, PLAYED + opp])
    for i in range(S[b, SEQ_LEN]):
        out[_O_SEQ + i * _N_CARDS + S[b, SEQ + i]] = 1.0
    out[_O_COUNT] = S[b, COUNT] / _COUNT_SCALE
    out[_O_PHASE + S[b, PHASE]] = 1.0
    out[_O_DEALER] = 1.0 if S[b, DEALER] == player else 0.0
    out[_O_SCORES] = S[b, SCORE + player] / _SCORE_SCALE
    out[_O_SCORES + 1] = S[b, SCORE + opp] / _SCORE_SCALE
    out[_O_TARGET] = S[b, TARGET] / _SCORE_SCALE
    out[_O_OPP_LEFT] = S[b, NHAND + opp] / _HAND_SIZE
    out[_O_OPP_GO] = 1.0 if S[b, SAID_GO + opp] else 0.0


@njit(cache=True)
def encode_batch(S, players, out):
    """``encode_obs`` for every row: ``players`` int64 (B,), ``out`` float32 (B, OBS_SIZE)."""
    for b in range(S.shape[0]):
        encode_obs(S, b, players[b], out[b])
