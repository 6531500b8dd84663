"""The card features of many decisions in one compiled call: ``card_features_batch``.

Each kernel reads the observation vector itself (with the compiled readers of ``agents.batch_obs``,
which round as ``decode`` does) and follows ``agents.card_features`` step by step, in the same order
and float64 arithmetic, so that every value rounds to the same float32: that module is the
reference and its docstring says what the columns mean. The rules are not restated here: show
points come from ``fast.show_points`` and pegging points from ``fast.sequence_points``, the core's
own kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS, RANK_ARRAY, VALUE_ARRAY
from crib_env.fast import nth_card, popcount, sequence_points, show_points
from crib_env.observation import COUNT_SCALE, MAX_SEQUENCE, OBS_SIZE
from crib_env.rule_kernels import count_after, count_restarts, fits, ten_card_scores_at

from .batch_obs import (
    O_DISCARDS,
    O_HAND,
    O_PLAYED_OPP,
    O_PLAYED_OWN,
    O_STARTER,
    P_DISCARD,
    P_PLAY,
    cards_bits,
    count_of,
    is_dealer,
    opp_cards_left,
    phase_of,
    sequence_of,
)
from .card_features import FEATURE_NAMES, N_CARD_FEATURES, PEG_POINTS_SCALE, crib_table

_COUNT_SCALE = float(COUNT_SCALE)
_MAX_SEQUENCE = MAX_SEQUENCE
_N_CARDS = N_CARDS
_N_RANKS = N_RANKS
_RANK = RANK_ARRAY.astype(np.int64)
_VALUE = VALUE_ARRAY.astype(np.int64)

# -- feature columns (one source of truth: card_features.FEATURE_NAMES) ------------------------
_LEGAL = FEATURE_NAMES.index("legal")
_KEEP_EV = FEATURE_NAMES.index("keep_ev")
_CRIB_EV = FEATURE_NAMES.index("crib_ev")
_TOTAL_EV = FEATURE_NAMES.index("total_ev")
_TOTAL_REGRET = FEATURE_NAMES.index("total_regret")
_IS_BEST = FEATURE_NAMES.index("is_best")
_PEG_POINTS = FEATURE_NAMES.index("peg_points")
_NEW_COUNT = FEATURE_NAMES.index("new_count")
_LEAVES_5_21 = FEATURE_NAMES.index("leaves_5_21")
_REPLY_MEAN = FEATURE_NAMES.index("reply_mean")
_REPLY_RISK = FEATURE_NAMES.index("reply_risk")
_IS_BEST_PEG = FEATURE_NAMES.index("is_best_peg")


@njit(cache=True)
def _discard_features(out, hand, discards, legal, is_dealer, table):
    """The discard columns of one decision (``card_features._discard_features``)."""
    starters = ~(hand | discards) & ((np.int64(1) << _N_CARDS) - 1)
    n_starters = popcount(starters)
    # The candidate discards in the reference's order: with one card already thrown, that card
    # and each legal card; else every pair of held cards in ascending order. ``away`` holds the
    # cards thrown at this step (one or two), ``crib_a`` / ``crib_b`` the pair the crib receives.
    n_hand = popcount(hand)
    n_options = popcount(legal) if discards else n_hand * (n_hand - 1) // 2
    away = np.zeros(n_options, dtype=np.int64)
    crib_a = np.zeros(n_options, dtype=np.int64)
    crib_b = np.zeros(n_options, dtype=np.int64)
    i = 0
    if discards:
        first = nth_card(discards, 0)  # the lowest: the reference's discards[0]
        for c in range(_N_CARDS):
            if legal >> c & 1:
                away[i] = np.int64(1) << c
                crib_a[i] = first
                crib_b[i] = c
                i += 1
    else:
        for c in range(_N_CARDS):
            if hand >> c & 1:
                for d in range(c + 1, _N_CARDS):
                    if hand >> d & 1:
                        away[i] = (np.int64(1) << c) | (np.int64(1) << d)
                        crib_a[i] = c
                        crib_b[i] = d
                        i += 1
    sign = 1.0 if is_dealer else -1.0
    evs = np.zeros(n_options)
    cribs = np.zeros(n_options)
    totals = np.zeros(n_options)
    best = 0
    for i in range(n_options):
        keep = hand & ~away[i]
        points = 0  # an integer sum, exact as the reference's float64 mean of int8 scores
        for s in range(_N_CARDS):
            if starters >> s & 1:
                points += show_points(keep, s, False)
        evs[i] = points / n_starters
        cribs[i] = sign * table[_RANK[crib_a[i]], _RANK[crib_b[i]]]
        totals[i] = evs[i] + cribs[i]
        if totals[i] > totals[best]:
            best = i
    best_total = totals[best]
    for c in range(_N_CARDS):
        if not legal >> c & 1:
            continue
        bit = np.int64(1) << c
        pick = -1  # the first best option that throws c (Python's max keeps the first)
        for i in range(n_options):
            if away[i] & bit and (pick < 0 or totals[i] > totals[pick]):
                pick = i
        if pick < 0:
            continue
        out[c, _KEEP_EV] = evs[pick] / 10.0
        out[c, _CRIB_EV] = cribs[pick] / 10.0
        out[c, _TOTAL_EV] = totals[pick] / 10.0
        out[c, _TOTAL_REGRET] = (totals[pick] - best_total) / 5.0
        out[c, _IS_BEST] = 1.0 if away[best] & bit else 0.0


@njit(cache=True)
def _play_features(out, line, n_seq, count, unseen, opp_cards, legal):
    """The play columns of one decision (``card_features._play_features``): ``line`` holds the
    count sequence in ``line[:n_seq]`` and room for the card laid and the reply after it."""
    # The opponent's reply depends on rank only: one representative card per unseen rank.
    rank_count = np.zeros(_N_RANKS, dtype=np.int64)
    rep = np.full(_N_RANKS, -1, dtype=np.int64)
    for u in range(_N_CARDS):
        if unseen >> u & 1:
            r = _RANK[u]
            rank_count[r] += 1
            if rep[r] < 0:
                rep[r] = u
    n_unseen = max(popcount(unseen), 1)
    # The reference scores a line at the sum of its values, the count it shows at the observed count.
    seq_sum = 0
    for j in range(n_seq):
        seq_sum = count_after(seq_sum, _VALUE[line[j]])
    points = np.full(_N_CARDS, -1, dtype=np.int64)
    best = -1
    for c in range(_N_CARDS):
        if not legal >> c & 1:
            continue
        line[n_seq] = c
        line_count = count_after(seq_sum, _VALUE[c])
        pts = sequence_points(line, 0, n_seq + 1, line_count)
        points[c] = pts
        best = max(best, pts)
        new_count = count_after(count, _VALUE[c])
        total_reply = 0
        scoring = 0
        if not count_restarts(new_count):
            for r in range(_N_RANKS):
                u = rep[r]
                if u >= 0 and fits(new_count, _VALUE[u]):
                    line[n_seq + 1] = u
                    reply = sequence_points(line, 0, n_seq + 2, count_after(line_count, _VALUE[u]))
                    total_reply += reply * rank_count[r]
                    if reply > 0:
                        scoring += rank_count[r]
        p = scoring / n_unseen
        out[c, _PEG_POINTS] = pts / PEG_POINTS_SCALE
        out[c, _NEW_COUNT] = new_count / _COUNT_SCALE
        out[c, _LEAVES_5_21] = 1.0 if ten_card_scores_at(new_count) else 0.0
        out[c, _REPLY_MEAN] = total_reply / n_unseen / 2.0
        # A float exponent: libm's pow, as the reference's float ** int uses (numba multiplies
        # out an integer power by squaring, which can differ in the last bit).
        out[c, _REPLY_RISK] = 1.0 - (1.0 - p) ** np.float64(opp_cards) if opp_cards else 0.0
    for c in range(_N_CARDS):
        if points[c] >= 0:
            out[c, _IS_BEST_PEG] = 1.0 if points[c] == best else 0.0


@njit(cache=True)
def _row_features(obs, mask, table, out, line):
    """``card_features(obs, mask)`` into ``out`` (52, N_CARD_FEATURES), zeroed by the caller."""
    legal = np.int64(0)
    for c in range(_N_CARDS):
        if mask[c]:
            legal |= np.int64(1) << c
            out[c, _LEGAL] = 1.0
    if legal == 0:
        return
    phase = phase_of(obs)
    hand = cards_bits(obs, O_HAND)
    if phase == P_DISCARD and popcount(hand) >= 5:
        _discard_features(out, hand, cards_bits(obs, O_DISCARDS), legal, is_dealer(obs), table)
    elif phase == P_PLAY:
        seen = (hand | cards_bits(obs, O_DISCARDS) | cards_bits(obs, O_STARTER)
                | cards_bits(obs, O_PLAYED_OWN) | cards_bits(obs, O_PLAYED_OPP))
        unseen = ~seen & ((np.int64(1) << _N_CARDS) - 1)
        n_seq = sequence_of(obs, line)
        _play_features(out, line, n_seq, count_of(obs), unseen, opp_cards_left(obs), legal)


@njit(cache=True)
def features_rows(observations, masks, table, out):
    """``card_features`` of every row: ``observations`` float32 (k, OBS_SIZE), ``masks`` bool
    (k, 52), ``table`` the crib table float64 (13, 13), ``out`` zeroed float32 (k, 52, F)."""
    line = np.zeros(_MAX_SEQUENCE + 2, dtype=np.int64)  # the sequence, the card laid, the reply
    for b in range(observations.shape[0]):
        _row_features(observations[b], masks[b], table, out[b], line)


def card_features_batch(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``card_features`` of every row: ``observations`` (k, OBS_SIZE) float32 and ``action_masks``
    (k, 52) give (k, 52, N_CARD_FEATURES) float32, equal to ``card_features`` row by row."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (rows, {OBS_SIZE}), got {obs.shape}")
    if masks.shape != (obs.shape[0], N_CARDS):
        raise ValueError(f"action_masks must have shape ({obs.shape[0]}, {N_CARDS}) to match "
                         f"{obs.shape[0]} observations, got {masks.shape}")
    out = np.zeros((obs.shape[0], N_CARDS, N_CARD_FEATURES), dtype=np.float32)
    features_rows(obs, np.ascontiguousarray(masks != 0), crib_table(), out)
    return out
