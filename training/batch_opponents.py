"""Training opponents for the fast engine: the members of the vector env's mixture.

``batch_mixture(specs, ...)`` turns the config's ``opponents`` into the ``[(member, weight), ...]``
mixture that ``crib_env.vector.CribbageVectorEnv`` takes. A member acts on many games with one
call where it can (``act_batch``: the scripted levels' compiled forms ``random``, ``greedy``,
``standard``, a checkpoint's single forward pass ``champion`` or a path, or ``self``); one that keeps
memory between moves (the expert) plays one copy per game row (``training.per_row.PerRowAgent``),
deciding as it does in a game of its own. The vector env draws a member per row per episode.

``self`` is split into ``pool_size`` equally weighted slots: slot ``j`` plays the ``j``-th newest
snapshot of the pool (cycling when the pool holds fewer) and the fallback while the pool is empty.
``SelfPlaySlots.refresh()`` re-reads the pool after the trainer adds a snapshot; rows that face a
slot at that moment continue their game against its new snapshot, the only place where an episode
can change opponent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned import LearnedAgent, load_learned_agent
from agents.registry import make_agent

from .config import SELF, STATEFUL_OPPONENTS
from .per_row import PerRowAgent, is_stateless
from .selfplay import pool_snapshots

#: row ``b`` of a per-row member with seed ``s`` starts from ``s * ROW_SEED_STRIDE + b``
ROW_SEED_STRIDE = 1 << 16


class SelfPlaySlots:
    """The ``self`` member's slots and the snapshots they play (see the module docstring)."""

    def __init__(self, pool_dir: Path, slots: int, fallback: Any) -> None:
        self.pool_dir = Path(pool_dir)
        self.fallback = fallback
        self.agents: list[Any] = [fallback] * slots
        self.loaded: dict[str, LearnedAgent] = {}

    def refresh(self) -> None:
        keep: dict[str, LearnedAgent] = {}
        for path in reversed(pool_snapshots(self.pool_dir)):  # newest first
            keep[path.name] = self.loaded.get(path.name) or load_learned_agent(path)
        self.loaded = keep
        newest = list(keep.values())
        self.agents = [newest[j % len(newest)] if newest else self.fallback
                       for j in range(len(self.agents))]

    def slot(self, j: int) -> SelfSlot:
        return SelfSlot(self, j)


class SelfSlot:
    """One slot of ``self``: whatever snapshot the slots give it now."""

    def __init__(self, slots: SelfPlaySlots, index: int) -> None:
        self.slots = slots
        self.index = index
        self.name = f"self[{index}]"

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.slots.agents[self.index].act_batch(observations, action_masks)


def batch_member(spec: str, seed: int) -> Any:
    """The mixture member for the scripted level or checkpoint ``spec``: the agent itself where it
    acts from the observation alone, else one copy of it per row."""
    agent = make_agent(spec, seed=seed)
    if spec in STATEFUL_OPPONENTS or not is_stateless(agent):
        # the vector env reseeds every row's copy at its reset; these seeds serve until then
        return PerRowAgent(agent, lambda row: seed * ROW_SEED_STRIDE + row)
    return agent


def batch_mixture(specs: Sequence[tuple[str, float]], pool_dir: Path | None, pool_size: int,
                  fallback: str, seed: int) -> tuple[list[tuple[Any, float]], SelfPlaySlots | None]:
    """The vector env's mixture for ``specs`` (agent, weight) and the ``self`` slots if any."""
    members: list[tuple[Any, float]] = []
    slots = None
    for i, (spec, weight) in enumerate(specs):
        member_seed = seed * 1000 + i
        if spec == SELF:
            if pool_dir is None:
                raise ValueError("opponent 'self' needs a pool folder")
            stand_in = batch_member(fallback, member_seed)
            if isinstance(stand_in, PerRowAgent):
                raise ValueError(f"selfplay.fallback: {fallback!r} keeps memory between moves; a "
                                 f"self-play slot plays its rows in one batch")
            slots = SelfPlaySlots(pool_dir, pool_size, stand_in)
            slots.refresh()
            for j in range(pool_size):
                members.append((slots.slot(j), weight / pool_size))
        else:
            members.append((batch_member(spec, member_seed), weight))
    return members, slots
