"""Policy-based inference: how likely a sampled opponent hand makes the plays it was seen making.

For each sampled deal (the opponent's four kept cards and its two discards) and each play the
opponent made this deal (``agents.opponent_model.OpponentPlays``, read off the player's own
observations), ``opponent_observations`` rebuilds the observation the opponent had then, as
``crib_env.observation`` lays it out, and the legal mask it had. A policy network's probability of
the card it actually laid, over those rows, gives each sample its weight (``play_likelihood``):
hands under which the opponent's plays look natural count for more. Only what the player has seen
goes in: the sampled cards, the player's own cards and the public plays.

The opponent's score at each past play is taken as the one at the player's current observation
(the few points pegged since then move the network's input by a few hundredths).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, VALUE_ARRAY
from crib_env.game import HAND_SIZE, Phase
from crib_env.observation import COUNT_SCALE, OBS_SIZE, SCORE_SCALE, SLICES, phase_column
from crib_env.rule_kernels import fits

from ..learned import legal_softmax
from ..opponent_model import PlayHistory

_VALUE = VALUE_ARRAY.astype(np.int64)
_N_CARDS = N_CARDS
_HAND_SIZE = HAND_SIZE
_OBS_SIZE = OBS_SIZE
_PLAY_COLUMN = phase_column(Phase.PLAY)
_HAND0, _DISC0, _STARTER0 = SLICES["hand"].start, SLICES["discards"].start, SLICES["starter"].start
_OWN0, _OPP0, _SEQ0 = (SLICES["played_own"].start, SLICES["played_opp"].start,
                       SLICES["sequence"].start)
_COUNT, _DEALER = SLICES["count"].start, SLICES["is_dealer"].start
_SCORES0, _TARGET = SLICES["scores"].start, SLICES["target"].start
_LEFT, _GO = SLICES["opp_cards_left"].start, SLICES["opp_said_go"].start
_COUNT_SCALE = COUNT_SCALE
_SCORE_SCALE = SCORE_SCALE


@njit(cache=True)
def opponent_observations(kept: np.ndarray, discards: np.ndarray, history: PlayHistory,
                          starter: int, opp_deals: bool, opp_score: int, own_score: int,
                          target: int, obs: np.ndarray, masks: np.ndarray,
                          chosen: np.ndarray) -> np.ndarray:
    """Fill ``obs`` (S * D, OBS_SIZE) and ``masks`` (S * D, 52) with the opponent's observation
    and legal cards at each of its D past plays, for each of S samples (``kept`` (S, 4) and
    ``discards`` (S, 2)); ``chosen`` (S * D,) gets the card it laid. Returns a bool array over the
    rows: True where it had a choice (two or more legal cards), the only rows that say anything."""
    n_dec = history.card.size
    informative = np.zeros(kept.shape[0] * n_dec, dtype=np.bool_)
    obs[:, :] = 0.0
    masks[:, :] = 0
    for s in range(kept.shape[0]):
        for d in range(n_dec):
            r = s * n_dec + d
            chosen[r] = history.card[d]
            count = history.count[d]
            legal = 0
            for i in range(kept.shape[1]):
                c = kept[s, i]
                laid = False
                for j in range(history.n_before[d]):
                    if history.before[d, j] == c:
                        laid = True
                if laid:
                    obs[r, _OWN0 + c] = 1.0
                else:
                    obs[r, _HAND0 + c] = 1.0
                    if fits(count, _VALUE[c]):
                        masks[r, c] = 1
                        legal += 1
            for j in range(history.n_before[d]):  # the player's cards laid before it
                c = history.before[d, j]
                if obs[r, _OWN0 + c] == 0.0:
                    obs[r, _OPP0 + c] = 1.0
            for i in range(discards.shape[1]):
                obs[r, _DISC0 + discards[s, i]] = 1.0
            for j in range(history.n[d]):
                obs[r, _SEQ0 + j * _N_CARDS + history.seq[d, j]] = 1.0
            obs[r, _STARTER0 + starter] = 1.0
            obs[r, _COUNT] = count / _COUNT_SCALE
            obs[r, _PLAY_COLUMN] = 1.0
            obs[r, _DEALER] = 1.0 if opp_deals else 0.0
            obs[r, _SCORES0] = opp_score / _SCORE_SCALE
            obs[r, _SCORES0 + 1] = own_score / _SCORE_SCALE
            obs[r, _TARGET] = target / _SCORE_SCALE
            obs[r, _LEFT] = history.left[d] / _HAND_SIZE
            # it laid twice running while the player still held cards: the player had said go
            obs[r, _GO] = 1.0 if history.k[d] == 0 and history.left[d] > 0 else 0.0
            informative[r] = legal >= 2
    return informative


def play_likelihood(logits: np.ndarray, masks: np.ndarray, chosen: np.ndarray,
                    informative: np.ndarray, n_samples: int, floor: float,
                    temperature: float) -> np.ndarray:
    """Per sample: the product over its informative rows of ``floor + (1 - floor) * p(chosen)``,
    ``p`` the softmax of the legal logits at ``temperature``; ``logits``, ``masks`` and ``chosen``
    hold the informative rows only (``informative`` marks them among all rows, sample by sample).
    The floor keeps an opponent that plays unlike the network from ruling out its true hand."""
    p = legal_softmax(logits, masks, temperature)
    return choice_likelihood(p[np.arange(len(chosen)), chosen], informative, n_samples, floor)


def choice_likelihood(p_chosen: np.ndarray, informative: np.ndarray, n_samples: int,
                      floor: float) -> np.ndarray:
    """Per sample: the product over its informative rows of ``floor + (1 - floor) * p_chosen``
    (``p_chosen``: a model's probability of the card the opponent laid, informative rows only)."""
    factor = np.ones(informative.size)
    factor[informative] = floor + (1.0 - floor) * p_chosen
    return factor.reshape(n_samples, -1).prod(axis=1)


def new_rows(n_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Buffers for ``opponent_observations``: observations, masks, chosen cards."""
    return (np.zeros((n_rows, _OBS_SIZE), dtype=np.float32),
            np.zeros((n_rows, _N_CARDS), dtype=np.int8), np.zeros(n_rows, dtype=np.int64))
