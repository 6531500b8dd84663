"""The kernels of ``crib_env.vector.CribbageVectorEnv``: a step of every row (the learner's card,
the random opponent's replies, rewards, episode ends and restarts) in a few compiled calls, so the
env's Python runs once per step and not once per row."""

from __future__ import annotations

import numpy as np
from numba import njit

from .fast import (
    CRIB_PTS,
    DEALER,
    HAND_PTS,
    HEELS_PTS,
    OK,
    P_DEAL_OVER,
    P_GAME_OVER,
    P_PLAY,
    PEG,
    PHASE,
    SCORE,
    SINGLE_DEAL,
    TO_MOVE,
    WINNER,
    apply_action,
    encode_obs,
    init_game,
    legal_bits,
    next_deal,
    rand_below,
    random_action,
    seed_row,
)

#: what ``infos["deal_points"]`` holds per row for a deal that ended in the step (player terms),
#: in the order ``_step`` writes them
DEAL_POINT_FIELDS = ("peg0", "peg1", "hand0", "hand1", "crib", "heels", "dealer")
REWARD_MODES = ("win", "points", "winprob")
R_WIN, R_POINTS, R_WINPROB = range(len(REWARD_MODES))  # the reward modes as the kernels read them


@njit(cache=True)
def _step(S, b, card, deal_points, deal_ended):
    """``crib_env.fast.step_game``, keeping the points of a deal that ends (``deal_points[b]``) before the
    next deal clears them."""
    err = apply_action(S, b, card)
    if err != OK:
        return err
    phase = S[b, PHASE]
    if phase == P_DEAL_OVER or phase == P_GAME_OVER:
        deal_ended[b] = 1
        out = deal_points[b]
        out[0] = S[b, PEG]
        out[1] = S[b, PEG + 1]
        out[2] = S[b, HAND_PTS]
        out[3] = S[b, HAND_PTS + 1]
        out[4] = S[b, CRIB_PTS]
        out[5] = S[b, HEELS_PTS]
        out[6] = S[b, DEALER]
        if phase == P_DEAL_OVER and S[b, SINGLE_DEAL] == 0:
            next_deal(S, b)
    return OK


@njit(cache=True)
def first_illegal(S, actions):
    for b in range(S.shape[0]):
        a = actions[b]
        if a < 0 or a >= 52 or not (legal_bits(S, b) >> a) & 1:
            return b
    return -1


@njit(cache=True)
def _live(S, b):
    return S[b, PHASE] <= P_PLAY


@njit(cache=True)
def _opponent_random(S, seats, b, deal_points, deal_ended):
    while _live(S, b) and S[b, TO_MOVE] != seats[b]:
        _step(S, b, random_action(S, b), deal_points, deal_ended)


@njit(cache=True)
def apply_learner(S, seats, actions, before, opp_random, deal_points, deal_ended):
    """Learner moves (already checked legal), then random opponent replies; remember the scores
    before the move for the reward."""
    for b in range(S.shape[0]):
        seat = seats[b]
        before[b, 0] = S[b, SCORE + seat]
        before[b, 1] = S[b, SCORE + 1 - seat]
        _step(S, b, actions[b], deal_points, deal_ended)
        if opp_random:
            _opponent_random(S, seats, b, deal_points, deal_ended)


@njit(cache=True)
def opponent_rows(S, seats, rows):
    """Rows where the opponent is to move; returns how many (written to ``rows``)."""
    k = 0
    for b in range(S.shape[0]):
        if _live(S, b) and S[b, TO_MOVE] != seats[b]:
            rows[k] = b
            k += 1
    return k


@njit(cache=True)
def encode_rows(S, rows, k, players, obs, masks):
    for i in range(k):
        b = rows[i]
        encode_obs(S, b, players[b], obs[i])
        bits = legal_bits(S, b)
        for c in range(52):
            masks[i, c] = (bits >> c) & 1


@njit(cache=True)
def opponent_moves(S, rows, k, actions, deal_points, deal_ended):
    """Apply the opponent's chosen cards; returns the index of the first illegal one or -1."""
    for i in range(k):
        if _step(S, rows[i], actions[i], deal_points, deal_ended) != OK:
            return i
    return -1


@njit(cache=True)
def _deal_margin(S, b, seat):
    dealer = S[b, DEALER]
    margin = 0
    for p in range(2):
        points = S[b, PEG + p] + S[b, HAND_PTS + p]
        if p == dealer:
            points += S[b, HEELS_PTS] + S[b, CRIB_PTS]
        margin += points if p == seat else -points
    return margin


@njit(cache=True)
def finish_step(S, seats, before, reward_mode, phi, potential, target, single_deal, seat_mode,
            opp_random, opp_ids, cumulative, deal_points, deal_ended, rewards, done, final_obs,
            final_scores):
    """Rewards and episode ends; finished rows are encoded into ``final_obs`` and restarted.
    ``phi``: the winprob potential table (``crib_env.odds.winprob_potential``); ``potential``: each
    row's learner potential at its last reward (0 for a new game)."""
    for b in range(S.shape[0]):
        seat = seats[b]
        own = S[b, SCORE + seat]
        opp = S[b, SCORE + 1 - seat]
        phase = S[b, PHASE]
        ended = phase == P_GAME_OVER or phase == P_DEAL_OVER
        if reward_mode == R_POINTS:
            rewards[b] = (own - before[b, 0]) - (opp - before[b, 1])
        elif reward_mode == R_WINPROB:
            now = phi[own, opp, 1 if S[b, DEALER] != seat else 0]
            rewards[b] = now - potential[b]
            potential[b] = 0.0 if ended else now
        elif phase == P_GAME_OVER:
            rewards[b] = 1.0 if S[b, WINNER] == seat else -1.0
        elif phase == P_DEAL_OVER:
            rewards[b] = np.sign(_deal_margin(S, b, seat))
        else:
            rewards[b] = 0.0
        done[b] = ended
        if ended:
            encode_obs(S, b, seat, final_obs[b])
            final_scores[b, 0] = own
            final_scores[b, 1] = opp
            _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids,
                     cumulative, deal_points, deal_ended)


#: resolution of the weighted draw of a row's opponent
DRAW_UNITS = 1 << 30


@njit(cache=True)
def _draw_member(S, b, cumulative):
    """An index drawn with probabilities given by the increasing ``cumulative`` weights (int64
    units of ``DRAW_UNITS``, the last equal to it)."""
    u = rand_below(S, b, DRAW_UNITS)
    i = 0
    while cumulative[i] <= u:
        i += 1
    return i


@njit(cache=True)
def _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
             deal_points, deal_ended):
    """A new game in row ``b`` from the row's own stream (``seat_mode`` -1: random seat); with
    more than one opponent, the row's opponent for the episode is drawn too."""
    if seat_mode < 0:
        seats[b] = rand_below(S, b, 2)
    if cumulative.shape[0] > 1:
        opp_ids[b] = _draw_member(S, b, cumulative)
    init_game(S, b, -1, target, -1, single_deal)
    if opp_random:
        _opponent_random(S, seats, b, deal_points, deal_ended)


@njit(cache=True)
def reset_all(S, seeds, seats, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
               deal_points, deal_ended):
    for b in range(S.shape[0]):
        seed_row(S, b, seeds[b])
        seats[b] = seat_mode
        opp_ids[b] = 0
        _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
                 deal_points, deal_ended)


@njit(cache=True)
def observe_all(S, seats, obs, masks):
    for b in range(S.shape[0]):
        encode_obs(S, b, seats[b], obs[b])
        bits = legal_bits(S, b)
        for c in range(52):
            masks[b, c] = (bits >> c) & 1
