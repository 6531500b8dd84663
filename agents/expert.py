"""Expert: exact discards checked by simulated pegging, simulated pegging, play for the win.

Discards: the exact analyzer (``agents.analysis``) ranks the 15 discards by net expected points;
the options within ``discard_window`` points of the best (at most six) are then played out
``discard_sims`` times each (``agents.rollout.keep_pegging``: a starter and the opponent's hand drawn
from the unseen cards, the whole play simulated) and the option with the best net value plus mean
pegging margin is kept. Near the end of the game the discard most likely to win is kept instead
(``agents.endgame.choose_discard``), as the standard agent does.

Pegging: for each legal card, play the rest of the deal ``sims`` times (default 200) over opponent
hands drawn from the cards not seen (``agents.rollout.rollout_values``), both sides following the
standard tactics from their own view. Cards whose mean result (own pegging points minus the
opponent's over the rest of the play) is more than ``tolerance`` (half a point) worse than the best
are dropped; the standard tactics (``agents.pegging``) choose among the rest. Near the end of the
game (either player within ``win_need`` points of the target) the simulations also count the show,
and the cards are first filtered by their chance of winning the game (within ``win_tolerance`` of the
best) before the points filter: what wins before what scores.

Reading the opponent (all from observations, never from the environment):

* ``model=True``: the opponent's unseen six cards are drawn at random and it is assumed to keep the
  four an expected-value player keeps (hand over the starters, plus or minus a crib estimate);
  draws inconsistent with what it has played, or with a go it said, are redrawn. With
  ``model=False`` its cards are a uniform draw of the unseen cards.
* ``miss < 1``: the agent remembers the opponent's plays of this deal (``rollout.OpponentPlays``,
  rebuilt from its successive observations) and weights each sampled deal by ``miss`` for every
  play the standard tactics would not have made holding those cards. ``miss=1`` turns this off.

Measured against the standard agent (docs/experiments/2026-11-30-scripted-agents.md), each of
the pegging-checked discards, the opponent model and the play reading adds points per game.
"""

from __future__ import annotations

import numpy as np

from crib_env.observation import ObservationView

from .analysis import DiscardTable, net_order
from .endgame import ENDGAME_NEED, choose_discard, near_the_end
from .pegging import Board, best_card, tactic_values
from .rollout import POLICY_TACTICS, OpponentPlays, keep_pegging, rollout_values
from .standard import StandardAgent

DEFAULT_SIMS = 200
MAX_DISCARD_CANDIDATES = 6


class ExpertAgent(StandardAgent):
    name = "expert"
    stateless = False  # it remembers the opponent's plays of the deal

    def __init__(self, seed: int | None = None, sims: int = DEFAULT_SIMS, tolerance: float = 0.5,
                 win_need: int = 31, win_tolerance: float = 0.02,
                 policy: int = POLICY_TACTICS, discard_sims: int = DEFAULT_SIMS,
                 discard_window: float = 2.5, model: bool = True, miss: float = 0.1) -> None:
        super().__init__(seed)
        if sims < 1:
            raise ValueError(f"sims must be at least 1, got {sims}")
        self.sims = sims
        self.tolerance = tolerance
        self.win_need = win_need
        self.win_tolerance = win_tolerance
        self.policy = policy
        self.discard_sims = discard_sims
        self.discard_window = discard_window
        self.model = model
        self.miss = miss
        self.history = OpponentPlays()
        #: card -> mean simulated pegging margin, of the last decision if it was a play decided by
        #: points (empty for discards, forced plays and the end game's win filter); a distilled
        #: network can learn these values as well as the chosen card (``training.algos.distill``)
        self.last_margins: dict[int, float] = {}

    def reset(self) -> None:
        self.history.clear()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.last_margins = {}
        return super().act(observation, action_mask)

    def observe(self, view: ObservationView) -> None:
        self.history.update(view)

    def choose_discard(self, view: ObservationView, hand6: tuple[int, ...]) -> tuple[int, int]:
        board = Board.of(view)
        if not self.discard_sims:
            return super().choose_discard(view, hand6)
        table = self.discard_table(hand6)
        key = (hand6, board)
        if self._choice is None or self._choice[0] != key:
            self._choice = (key, self._simulated_discard(table, board))
        pair = table.discard(self._choice[1])
        if not set(view.discards) <= set(pair):
            pair = table.discard(choose_discard(table, board, view.discards))
        return pair

    def _simulated_discard(self, table: DiscardTable, board: Board) -> int:
        """Index of the discard to make: near the end the standard's choice for the win, else the
        best net value plus simulated pegging margin among the options close to the best net."""
        if near_the_end(board.need_own, board.need_opp, ENDGAME_NEED):
            return choose_discard(table, board)
        order = net_order(table, board.dealer)
        net = table.hand_points.mean(axis=1) + (1 if board.dealer else -1) * table.crib
        close = [i for i in order if net[i] >= net[order[0]] - self.discard_window]
        close = close[:MAX_DISCARD_CANDIDATES]
        if len(close) == 1:
            return close[0]
        seed = int(self.rng.integers(2**31 - 1))
        peg = keep_pegging(table.hand6, [table.keep(i) for i in close], table.unseen,
                           board.dealer, self.discard_sims, seed, self.policy, self.model)
        return close[max(range(len(close)), key=lambda j: net[close[j]] + peg[j])]

    def choose_play(self, view: ObservationView, legal: list[int]) -> int:
        board = Board.of(view)
        endgame = min(board.need_own, board.need_opp) <= self.win_need
        seed = int(self.rng.integers(2**31 - 1))
        margin, win = rollout_values(view, legal, self.sims, seed, with_show=endgame,
                                     policy=self.policy, model=self.model,
                                     history=self.history, miss=self.miss)
        keep = list(range(len(legal)))
        if endgame:
            best = max(win[i] for i in keep)
            keep = [i for i in keep if win[i] >= best - self.win_tolerance]
        else:
            self.last_margins = {card: float(m) for card, m in zip(legal, margin, strict=True)}
        best = max(margin[i] for i in keep)
        keep = [i for i in keep if margin[i] >= best - self.tolerance]
        candidates = [legal[i] for i in keep]
        if len(candidates) == 1:
            return candidates[0]
        return best_card(tactic_values(view, candidates, board))
