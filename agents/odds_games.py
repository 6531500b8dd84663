"""Standard against standard on the compiled core: deal traces for the win-odds table, and whole
games from any board position to check it.

A **deal trace** is the order in which one deal's points are scored, as signed int8 events: ``+k``
the dealer pegs ``k`` points, ``-k`` the pone does. Events come in the order of the rules: his heels
(at the cut), each card laid in the play (the points it makes together with the go or last card it
earns: the same player, so merging them never moves the moment someone reaches the target), then
the pone's hand, the dealer's hand and the crib. Zero-point events are left out; a trace has at most
``MAX_EVENTS`` events (heels + 8 cards + 3 counts).

Traces are played at 0-0 (target 121), where nobody is within ``agents.endgame.ENDGAME_NEED`` of the
target, so they record standard's *neutral* play. Near the end standard changes its discards and
pegging to play for the win (``agents.endgame``, ``agents.pegging``); the table built from neutral
traces does not know that. ``play_games_from`` plays real games (the endgame logic included), which is
how ``bench/odds_check.py`` measures what this approximation costs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env import fast
from crib_env.cards import N_CARDS
from crib_env.observation import OBS_SIZE

from .endgame import win_table
from .standard_batch import standard_actions

#: heels + 8 cards laid + pone's hand, dealer's hand, crib
MAX_EVENTS = 12
_TARGET = 121


@njit(cache=True)
def _standard_move(S, b, obs, legal, out, table):
    """Standard's card for the player to move in row ``b`` (scratch arrays ``obs`` (1, OBS),
    ``legal`` (1, 52), ``out`` (1,))."""
    fast.encode_obs(S, b, S[b, fast.TO_MOVE], obs[0])
    bits = fast.legal_bits(S, b)
    for c in range(N_CARDS):
        legal[0, c] = (bits >> c) & 1
    standard_actions(obs, legal, table, out)
    return out[0]


@njit(cache=True)
def _push(events, t, n, points):
    if points != 0:
        events[t, n] = points
        n += 1
    return n


@njit(cache=True)
def record_traces(seeds, table, events):
    """Play one deal of standard vs standard at 0-0 per seed (``seeds`` int64 (n,), the deal drawn
    from the seed, dealer ``seed % 2``) and write its trace into ``events`` int8 (n, MAX_EVENTS)
    (0 = no event). ``table``: ``agents.endgame.win_table(121)``. Returns the number of moves."""
    S = fast.new_state(1)
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    legal = np.zeros((1, N_CARDS), dtype=np.int8)
    out = np.zeros(1, dtype=np.int64)
    moves = 0
    for t in range(seeds.shape[0]):
        events[t, :] = 0
        fast.init_game(S, 0, seeds[t], _TARGET, seeds[t] % 2, True)
        dealer = S[0, fast.DEALER]
        pone = 1 - dealer
        n = 0
        while S[0, fast.PHASE] <= fast.P_PLAY:
            mover = S[0, fast.TO_MOVE]
            heels = S[0, fast.HEELS_PTS]
            peg = S[0, fast.PEG + mover]
            hand_pone = S[0, fast.HAND_PTS + pone]
            hand_dealer = S[0, fast.HAND_PTS + dealer]
            crib = S[0, fast.CRIB_PTS]
            card = _standard_move(S, 0, obs, legal, out, table)
            if fast.apply_action(S, 0, card) != fast.OK:
                raise ValueError("standard chose an illegal card while recording a trace")
            moves += 1
            sign = 1 if mover == dealer else -1
            # the rules' order within one move: heels at the cut, the card's points, then the show
            n = _push(events, t, n, S[0, fast.HEELS_PTS] - heels)
            n = _push(events, t, n, sign * (S[0, fast.PEG + mover] - peg))
            n = _push(events, t, n, -(S[0, fast.HAND_PTS + pone] - hand_pone))
            n = _push(events, t, n, S[0, fast.HAND_PTS + dealer] - hand_dealer)
            n = _push(events, t, n, S[0, fast.CRIB_PTS] - crib)
        if S[0, fast.PHASE] != fast.P_DEAL_OVER:
            raise ValueError("a trace deal ended the game from 0-0")
    return moves


@njit(cache=True)
def play_games_from(own, opp, own_deals, seeds, target, table, winners):
    """Whole games of standard vs standard from a board position: player 0 on ``own``, player 1 on
    ``opp``, player 0 deals the first deal if ``own_deals``; game ``i`` seeded ``seeds[i]``. Writes
    each winner (0 / 1) into ``winners``. ``table``: ``agents.endgame.win_table(target)``."""
    S = fast.new_state(1)
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    legal = np.zeros((1, N_CARDS), dtype=np.int8)
    out = np.zeros(1, dtype=np.int64)
    for i in range(seeds.shape[0]):
        fast.init_game(S, 0, seeds[i], target, 0 if own_deals else 1, False)
        S[0, fast.SCORE] = own
        S[0, fast.SCORE + 1] = opp
        S[0, fast.PREV] = own
        S[0, fast.PREV + 1] = opp
        while S[0, fast.PHASE] != fast.P_GAME_OVER:
            card = _standard_move(S, 0, obs, legal, out, table)
            if fast.step_game(S, 0, card) != fast.OK:
                raise ValueError("standard chose an illegal card in a game")
        winners[i] = S[0, fast.WINNER]


def traces(seeds: np.ndarray) -> np.ndarray:
    """Deal traces (int8 (n, MAX_EVENTS)) of standard vs standard, one per seed."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    events = np.zeros((seeds.size, MAX_EVENTS), dtype=np.int8)
    record_traces(seeds, win_table(_TARGET), events)
    return events


def games_from(own: int, opp: int, own_deals: bool, seeds: np.ndarray,
               target: int = _TARGET) -> np.ndarray:
    """Winners (int64, 0 = the player on ``own``) of standard-vs-standard games from a position."""
    if not (0 <= own < target and 0 <= opp < target):
        raise ValueError(f"scores must be in 0..{target - 1}, got {own} and {opp}")
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    winners = np.empty(seeds.size, dtype=np.int64)
    play_games_from(int(own), int(opp), bool(own_deals), seeds, int(target), win_table(int(target)),
                    winners)
    return winners
