"""An agent that sees every game through its own random renaming of the suits: ``renamed:SPEC``.

The rules never name a suit (``crib_env.symmetry``), so a renamed game is the same game and the
agent plays exactly as well. What changes is any habit tied to the suits' names: the scripted
agents choose among cards of equal value by the lowest card id (``agents.pegging.best_card``),
so which card of a rank they lay says which suits of it they do not hold, and a network fitted
on their games can learn to read that. With a random renaming per game the habit follows a suit
order the opponent cannot know, so ``crib evaluate --opponent renamed:expert`` measures a player
against the expert's play without that tell.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crib_env.symmetry import CARD_SOURCE, N_RENAMINGS, rename_suits

#: before any agent spec (``agents.registry.make_agent``): ``renamed:expert`` is the expert
#: playing renamed games
RENAMED_PREFIX = "renamed:"


class SuitRenamedAgent:
    """``inner`` playing each game under a renaming drawn at ``reset`` from its random stream (its
    own if ``inner`` has none). Never stateless: one renaming holds for a whole game, so the
    evaluation gives each game its own copy (``training.per_row``)."""

    stateless = False

    def __init__(self, inner: Any, seed: int | None = None) -> None:
        if not callable(getattr(inner, "act", None)):
            raise ValueError(f"renamed: the agent to rename must act(observation, action_mask), "
                             f"got {inner!r}")
        self.inner = inner
        self.name = f"{RENAMED_PREFIX}{getattr(inner, 'name', type(inner).__name__)}"
        self._own_rng = np.random.default_rng(seed)
        self.renaming = 0

    @property
    def rng(self) -> Any:
        """The inner agent's random stream, so reseeding this agent (``per_row.copy_with_seed``)
        reseeds the agent it wraps; the renaming is drawn from it too."""
        return getattr(self.inner, "rng", self._own_rng)

    @rng.setter
    def rng(self, value: Any) -> None:
        if hasattr(self.inner, "rng"):
            self.inner.rng = value
        else:
            self._own_rng = value

    def reset(self) -> None:
        reset = getattr(self.inner, "reset", None)
        if reset is not None:
            reset()
        stream = self.rng if isinstance(self.rng, np.random.Generator) else self._own_rng
        self.renaming = int(stream.integers(N_RENAMINGS))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        renamings = np.array([self.renaming])
        obs, mask, _, _ = rename_suits(renamings, np.asarray(observation)[None],
                                       np.asarray(action_mask)[None], np.zeros(1))
        card = int(self.inner.act(obs[0], mask[0]))
        return int(CARD_SOURCE[self.renaming, card])
