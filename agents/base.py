"""The agent protocol: every policy acts from ``(observation, action_mask)`` alone."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """A cribbage policy. ``act`` returns a card id whose ``action_mask`` entry is 1."""

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...

    def reset(self) -> None:
        """Forget per-game memory (called at the start of every game)."""


def legal_cards(action_mask: np.ndarray) -> np.ndarray:
    """Card ids allowed by ``action_mask``; raises ``ValueError`` if none is."""
    cards = np.flatnonzero(action_mask)
    if cards.size == 0:
        raise ValueError("action_mask allows no action: an agent was asked to act when it cannot")
    return cards


class RandomAgent:
    """A uniformly random legal card."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(legal_cards(action_mask)))

    def reset(self) -> None:
        pass
