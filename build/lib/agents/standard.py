"""Standard: expected-value discards and the known pegging tactics.

Discards: the option with the best expected hand over the possible starters plus the expected crib
when dealing (minus it when not), from the exact analyzer (``agents.analysis``). Near the end of the
game the option most likely to win is kept instead (``agents.endgame.choose_discard``).
Pegging: the highest ``agents.pegging.tactic_values`` (which also turn to "what wins" near the end).
``act_batch`` makes the same choices for many rows in one compiled call (``agents.standard_batch``).
"""

from __future__ import annotations

import numpy as np

from crib_env.observation import SCORE_SCALE, SLICES, ObservationView

from .analysis import DiscardTable, discard_table
from .batch_obs import act_each_row, check_batch, decides_as, raise_row_errors
from .endgame import choose_discard, win_table
from .pegging import Board, best_card, tactic_values
from .scripted import ScriptedAgent
from .standard_batch import standard_actions

_TARGET = SLICES["target"].start
#: the methods behind ``StandardAgent.act``: a subclass that changes one (the expert) acts row by
#: row in act_batch
_DECISIONS = ("act", "observe", "choose_discard", "choose_play", "discard_table")


class StandardAgent(ScriptedAgent):
    name = "standard"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._table: tuple[tuple[int, ...], DiscardTable] | None = None
        self._choice: tuple[tuple, int] | None = None  # the discard chosen at the first step

    def discard_table(self, hand6: tuple[int, ...]) -> DiscardTable:
        """The analyzer's arrays for ``hand6``, computed once for the two discard steps."""
        if self._table is None or self._table[0] != hand6:
            self._table = (hand6, discard_table(hand6))
        return self._table[1]

    def choose_discard(self, view: ObservationView, hand6: tuple[int, ...]) -> tuple[int, int]:
        table = self.discard_table(hand6)
        board = Board.of(view)
        key = (hand6, board)
        if self._choice is None or self._choice[0] != key:
            self._choice = (key, choose_discard(table, board))
        pair = table.discard(self._choice[1])
        if not set(view.discards) <= set(pair):  # not our own first choice: choose again
            pair = table.discard(choose_discard(table, board, view.discards))
        return pair

    def choose_play(self, view: ObservationView, legal: list[int]) -> int:
        return best_card(tactic_values(view, legal))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act`` for every row of ``observations`` (k, OBS_SIZE) with ``action_masks`` (k, 52):
        int64 (k,) cards. Raises ``ValueError`` for bad shapes or a row with no legal card."""
        obs, legal = check_batch(observations, action_masks)
        if not decides_as(self, StandardAgent, _DECISIONS):
            return act_each_row(self, obs, legal)
        cards = np.empty(obs.shape[0], dtype=np.int64)
        targets = np.rint(obs[:, _TARGET].astype(np.float64) * SCORE_SCALE).astype(np.int64)
        for target in np.unique(targets):  # one win table per target (rows usually share one)
            if target < 1:
                raise ValueError(f"{self.name}: observation row {int(np.argmax(targets == target))} "
                                 f"has target {int(target)}, expected a positive score")
            rows = np.flatnonzero(targets == target)
            if rows.size == len(targets):
                standard_actions(obs, legal, win_table(int(target)), cards)
            else:
                part = np.empty(rows.size, dtype=np.int64)
                standard_actions(obs[rows], legal[rows], win_table(int(target)), part)
                cards[rows] = part
        return raise_row_errors(self.name, cards)
