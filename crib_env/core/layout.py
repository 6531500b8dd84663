"""The state array: one int64 row per game, its columns named here (the table of what each holds
is in ``crib_env.fast``), and the codes the kernels return."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..game import Phase

# -- columns of the state array ----------------------------------------------------------------
HAND = 0
DISC = 2
PLAYED = 4
NDISC = 6
NHAND = 8
SCORE = 10
PREV = 12
SAID_GO = 14
SEQ = 16  # 8 columns
SEQ_LEN = 24
COUNT = 25
STARTER = 26
NEXT_STARTER = 27
TO_MOVE = 28
DEALER = 29
PHASE = 30
WINNER = 31
TARGET = 32
SINGLE_DEAL = 33
DEAL_NO = 34
LAST_PLAYER = 35
DEALT = 36
PEG = 38
HAND_PTS = 40
CRIB_PTS = 42
HEELS_PTS = 43
COMPLETED = 44
FIRST_DEALER = 45
RNG = 46
N_FIELDS = 48

#: column offsets by name (per-player columns: add the player, 0 or 1)
COLUMNS = {name: offset for name, offset in (
    ("HAND", HAND), ("DISC", DISC), ("PLAYED", PLAYED), ("NDISC", NDISC), ("NHAND", NHAND),
    ("SCORE", SCORE), ("PREV", PREV), ("SAID_GO", SAID_GO), ("SEQ", SEQ), ("SEQ_LEN", SEQ_LEN),
    ("COUNT", COUNT), ("STARTER", STARTER), ("NEXT_STARTER", NEXT_STARTER), ("TO_MOVE", TO_MOVE),
    ("DEALER", DEALER), ("PHASE", PHASE), ("WINNER", WINNER), ("TARGET", TARGET),
    ("SINGLE_DEAL", SINGLE_DEAL), ("DEAL_NO", DEAL_NO), ("LAST_PLAYER", LAST_PLAYER),
    ("DEALT", DEALT), ("PEG", PEG), ("HAND_PTS", HAND_PTS), ("CRIB_PTS", CRIB_PTS),
    ("HEELS_PTS", HEELS_PTS), ("COMPLETED", COMPLETED), ("FIRST_DEALER", FIRST_DEALER),
    ("RNG", RNG))}

P_DISCARD = int(Phase.DISCARD)
P_PLAY = int(Phase.PLAY)
P_DEAL_OVER = int(Phase.DEAL_OVER)
P_GAME_OVER = int(Phase.GAME_OVER)

# Error codes of step_game.
OK = 0
ERR_OVER = 1  # the game is over
ERR_DEAL_OVER = 2  # the deal is over: call next_deal
ERR_NOT_LEGAL = 3  # not a card the player to move may choose now


@njit(cache=True)
def new_state(n):
    """A zeroed state array for ``n`` games (initialise rows with ``init_game``)."""
    return np.zeros((n, N_FIELDS), dtype=np.int64)
