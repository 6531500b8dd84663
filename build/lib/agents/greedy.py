"""Greedy: keep the four cards worth the most on their own; peg the card that scores most now.

"On their own" is the show count of the four kept cards without a starter
(``crib_env.scoring.score_without_starter``): fifteens, pairs, runs and a four-card flush. The crib
is ignored. Ties are broken at random (seeded). ``act_batch`` makes the same choices for many rows
in one compiled call (``agents.greedy_batch``), drawing uniformly from the same tie sets.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from crib_env.cards import RANK
from crib_env.observation import ObservationView
from crib_env.scoring import score_without_starter

from .batch_obs import act_each_row, check_batch, decides_as, raise_row_errors
from .greedy_batch import greedy_actions
from .pegging import peg_points
from .scripted import ScriptedAgent

#: the methods behind ``GreedyAgent.act``: a subclass that changes one acts row by row in act_batch
_DECISIONS = ("act", "observe", "choose_discard", "choose_play", "discard_options", "play_options")


class GreedyAgent(ScriptedAgent):
    name = "greedy"

    def discard_options(self, view: ObservationView, hand6: tuple[int, ...]) -> list[tuple[int, int]]:
        """The tie set of discards: the pairs of ``hand6`` holding ``view.discards`` whose kept four
        are worth most on their own."""
        pairs = [p for p in combinations(hand6, 2) if set(view.discards) <= set(p)]
        worth = [score_without_starter([c for c in hand6 if c not in p]) for p in pairs]
        return [p for p, w in zip(pairs, worth, strict=True) if w == max(worth)]

    def play_options(self, view: ObservationView, legal: list[int]) -> list[int]:
        """The tie set of plays: the cards of ``legal`` that score most now."""
        seq = tuple(RANK[c] for c in view.sequence)
        points = [peg_points(seq + (RANK[c],)) for c in legal]
        return [c for c, p in zip(legal, points, strict=True) if p == max(points)]

    def choose_discard(self, view: ObservationView, hand6: tuple[int, ...]) -> tuple[int, int]:
        best = self.discard_options(view, hand6)
        return best[int(self.rng.integers(len(best)))]

    def choose_play(self, view: ObservationView, legal: list[int]) -> int:
        best = self.play_options(view, legal)
        return best[int(self.rng.integers(len(best)))]

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act`` for every row of ``observations`` (k, OBS_SIZE) with ``action_masks`` (k, 52):
        int64 (k,) cards, each drawn uniformly from the row's tie set with one uniform per row
        from this agent's generator. Raises ``ValueError`` for bad shapes or a row with no legal
        card."""
        obs, legal = check_batch(observations, action_masks)
        if not decides_as(self, GreedyAgent, _DECISIONS):
            return act_each_row(self, obs, legal)
        cards = np.empty(obs.shape[0], dtype=np.int64)
        greedy_actions(obs, legal, self.rng.random(obs.shape[0]), cards)
        return raise_row_errors(self.name, cards)
