"""The pegging tactics of ``agents.pegging`` compiled, read straight from an observation row.

``best_play(row, legal, scratch)`` is ``best_card(tactic_values(view, legal))`` for the decoded
``view`` of ``row``: the end-game mode of ``endgame_mode``, then the tactical value of every legal
card, the highest value winning and ties going to the lower card id. ``agents.pegging`` is the
reference and its docstring says what the values mean; this port follows it step by step, in the
same order of float operations (the opponent's reply ranks in the order ``view.unseen`` first shows
them, the reply levels from the best down), so that the values are the same floats and ties break
the same way. Pegging points come from the core's ``crib_env.fast.sequence_points`` (a reply of rank
``r`` is written as card id ``r``: only ranks score) and the show from ``crib_env.fast.show_points``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS, RANK_ARRAY, VALUE_ARRAY
from crib_env.fast import popcount, sequence_points, show_points
from crib_env.game import HAND_SIZE
from crib_env.scoring import MAX_COUNT

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
from .pegging import (
    ATTACK_RISK_WEIGHT,
    COUNTER_WEIGHT,
    GO_VALUE,
    LOW_CARD_BONUS,
    PONE_COUNT_OUT,
    WIN_VALUE,
)

MODE_SCORE, MODE_DEFEND, MODE_ATTACK = 0, 1, 2  # endgame_mode's "score", "defend", "attack"
_N_CARDS = N_CARDS
_N_RANKS = N_RANKS
_RANK = RANK_ARRAY.astype(np.int64)
_VALUE = VALUE_ARRAY.astype(np.int64)
_MAX_COUNT = MAX_COUNT
_KEPT = HAND_SIZE - 2
SEQ_ROOM = 12  # the longest count sequence (8), the card laid, a reply and a counter, to spare


@njit(cache=True)
def _comb(n, k):
    """math.comb(n, k) (0 when k > n), exact in int64 for the card counts used here."""
    if k < 0 or n < k:
        return np.int64(0)
    out = np.int64(1)
    for i in range(k):
        out = out * (n - i) // (i + 1)
    return out


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
def tactic_value(card, hand, seq, n, count, order, n_order, unseen, n_unseen, k, opp_left,
                 need_own, need_opp, mode, reply):
    """``tactic_values(view, legal)[card]``. ``seq[:n]``: the count sequence (card ids) at
    ``count``; ``hand``: the player's cards (bitmask); ``order[:n_order]``: the unseen ranks in
    ``view.unseen`` order, ``unseen[r]`` of rank ``r`` (``n_unseen`` in all); ``k``: the cards the
    opponent could lay, ``opp_left`` it holds; ``reply``: scratch (13,)."""
    rest = hand & ~(np.int64(1) << card)
    new_count = count + _VALUE[card]
    seq[n] = card
    gain = sequence_points(seq, 0, n + 1, new_count)
    if rest == 0 and opp_left == 0 and new_count != _MAX_COUNT:
        gain += 1  # the last card of the hand
    risk = 0.0
    counter = 0.0
    lose = 0.0
    p_go = 0.0
    if new_count != _MAX_COUNT:  # 31 resets the count: the opponent leads afresh
        room = _MAX_COUNT - new_count
        fitting = 0
        top = -1
        for j in range(n_order):
            r = order[j]
            reply[r] = -1
            if _VALUE[r] <= room:
                seq[n + 1] = r
                reply[r] = sequence_points(seq, 0, n + 2, new_count + _VALUE[r])
                fitting += unseen[r]
                top = max(top, reply[r])
        total = _comb(n_unseen, k)
        p_go = _comb(n_unseen - fitting, k) / total if k else 1.0
        if k != 0 and total != 0:
            # the chance that the opponent's best reply is of rank r, levels from the best down
            # (agents.pegging._reply_distribution), each reply's counter taken as it comes
            excluded = 0
            none_before = 1.0
            for level in range(top, -1, -1):
                cards = 0
                for j in range(n_order):
                    if reply[order[j]] == level:
                        cards += unseen[order[j]]
                if cards == 0:
                    continue
                none_after = _comb(n_unseen - excluded - cards, k) / total
                p_level = none_before - none_after
                for j in range(n_order):
                    r = order[j]
                    if reply[r] != level:
                        continue
                    p = p_level * unseen[r] / cards
                    if p == 0.0:
                        continue
                    risk += p * reply[r]
                    if reply[r] >= need_opp:
                        lose += p
                    after = new_count + _VALUE[r]
                    seq[n + 1] = r
                    best = 0
                    for m in range(_N_CARDS):
                        if (rest >> m) & 1 and after + _VALUE[m] <= _MAX_COUNT:
                            seq[n + 2] = m
                            best = max(best, sequence_points(seq, 0, n + 3, after + _VALUE[m]))
                    counter += p * best
                excluded += cards
                none_before = none_after
    win = gain >= need_own
    if mode == MODE_DEFEND:  # own points no longer matter, only denying the opponent's
        value = -risk
    elif mode == MODE_ATTACK:
        value = gain + counter + GO_VALUE * p_go - ATTACK_RISK_WEIGHT * risk
    else:
        value = (gain - risk + COUNTER_WEIGHT * counter + GO_VALUE * p_go
                 + LOW_CARD_BONUS * _VALUE[card])
    # Python's value + WIN_VALUE * (win - (not win) * lose), with the bools as 1.0 / 0.0
    return value + WIN_VALUE * ((1.0 if win else 0.0) - (0.0 if win else 1.0) * lose)


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
