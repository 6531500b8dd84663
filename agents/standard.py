"""Standard: expected-value discards and the known pegging tactics.

Discards: the option with the best expected hand over the possible starters plus the expected crib
when dealing (minus it when not), from the exact analyzer (``agents.analysis``). Near the end of the
game the option most likely to win is kept instead (``agents.endgame.choose_discard``).
Pegging: the highest ``agents.pegging.tactic_values`` (which also turn to "what wins" near the end).
"""

from __future__ import annotations

from crib_env.observation import ObservationView

from .analysis import DiscardTable, discard_table
from .endgame import choose_discard
from .pegging import Board, best_card, tactic_values
from .scripted import ScriptedAgent


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
