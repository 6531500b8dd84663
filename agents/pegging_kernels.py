"""The pegging tactics' value of a card, compiled: the one implementation behind
``agents.pegging.tactic_values`` (the standard and expert agents), ``agents.pegging_batch`` (the
standard agent's batch form) and the rollouts' tactics policy (``agents.rollout_policy``).

``agents.pegging``'s docstring says what the value means; the constants that weigh its parts live
here so that every caller weighs them alike. Pegging points come from the core's
``crib_env.fast.sequence_points`` (a reply of rank ``r`` is written as card id ``r``: only ranks
score), the count and the last card's point from the rules (``crib_env.rule_kernels``). The float
operations run in one fixed order (the reply ranks in the order the caller lists them, the reply
levels from the best down), so the same position gives the same floats, and the same ties,
whoever asks.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from crib_env.cards import VALUE_ARRAY
from crib_env.fast import sequence_points
from crib_env.rule_kernels import count_after, count_restarts, fits, last_card_points

COUNTER_WEIGHT = 0.5  # a counter-score is worth less than a sure point: the opponent answers it
GO_VALUE = 1.0
LOW_CARD_BONUS = 0.03  # per counting value of the card laid: keep low cards for the go
WIN_VALUE = 100.0  # a won or lost game, in points, next to the few points a card can score
ATTACK_RISK_WEIGHT = 0.25  # a dealer playing for points now still minds the replies, a little
#: a pone's hand counts before the dealer's: a dealer facing a pone that needs this many points or
#: fewer (a median pone hand is about 7) is likely to be counted out and plays for points now
PONE_COUNT_OUT = 7
MODE_SCORE, MODE_DEFEND, MODE_ATTACK = 0, 1, 2  # agents.pegging.endgame_mode's three readings
#: need_own / need_opp that no card reaches: the plain scoring tactics, with no end-game term
NEVER = 1 << 30
SEQ_ROOM = 12  # the longest count sequence (8), the card laid, a reply and a counter, to spare
_VALUE = VALUE_ARRAY.astype(np.int64)


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
def tactic_value(card, hand, seq, n, count, order, n_order, unseen, n_unseen, k, opp_left,
                 need_own, need_opp, mode, reply):
    """``tactic_values(view, legal)[card]``. ``seq[:n]``: the count sequence (card ids) at
    ``count``; ``hand``: the player's cards (bitmask); ``order[:n_order]``: the unseen ranks in
    ``view.unseen`` order, ``unseen[r]`` of rank ``r`` (``n_unseen`` in all); ``k``: the cards the
    opponent could lay, ``opp_left`` it holds; ``reply``: scratch (13,)."""
    rest = hand & ~(np.int64(1) << card)
    new_count = count_after(count, _VALUE[card])
    seq[n] = card
    gain = sequence_points(seq, 0, n + 1, new_count)
    if rest == 0 and opp_left == 0:
        gain += last_card_points(new_count)  # the last card of the play
    risk = 0.0
    counter = 0.0
    lose = 0.0
    p_go = 0.0
    if not count_restarts(new_count):  # at 31 the opponent leads afresh: no reply to weigh
        fitting = 0
        top = -1
        for j in range(n_order):
            r = order[j]
            reply[r] = -1
            if fits(new_count, _VALUE[r]):
                seq[n + 1] = r
                reply[r] = sequence_points(seq, 0, n + 2, count_after(new_count, _VALUE[r]))
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
                    after = count_after(new_count, _VALUE[r])
                    seq[n + 1] = r
                    best = 0
                    left = rest
                    while left:  # the player's own cards, lowest id first (only the max counts)
                        m = np.int64(trailing_zeros(np.uint64(left)))
                        left &= left - 1
                        if fits(after, _VALUE[m]):
                            seq[n + 2] = m
                            best = max(best, sequence_points(seq, 0, n + 3,
                                                             count_after(after, _VALUE[m])))
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
