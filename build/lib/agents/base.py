"""The agent protocol: every policy acts from ``(observation, action_mask)`` alone."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """A cribbage policy. ``act`` returns a card id whose ``action_mask`` entry is 1.

    Optional: ``stateless = True`` declares that the action depends only on the observation (and
    the agent's random stream), never on earlier calls, so evaluation may interleave many games
    (``training.batch_play``); ``act_batch(observations, masks) -> cards`` acts on many rows at
    once (e.g. one network forward pass).
    """

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


def random_legal_cards(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal card per row of ``masks`` (rows, 52): the largest of independent
    uniform draws over the legal cards is equally likely to be any of them. Every row must allow
    a card."""
    return np.argmax(np.where(masks > 0, rng.random(masks.shape), -1.0), axis=1)


class RandomAgent:
    """A uniformly random legal card."""

    name = "random"
    stateless = True

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(legal_cards(action_mask)))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A uniformly random legal card per row (``random_legal_cards``)."""
        masks = np.asarray(action_masks)
        if masks.ndim != 2:
            raise ValueError(f"action_masks must have shape (rows, 52), got {masks.shape}")
        if not masks.any(axis=1).all():
            raise ValueError("action_mask allows no action in some row")
        return random_legal_cards(masks, self.rng)

    def reset(self) -> None:
        pass
