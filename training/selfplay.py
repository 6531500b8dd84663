"""Training opponents: a weighted mixture of agents, and a self-play pool of frozen snapshots.

``MixtureOpponent`` is an ``Agent``: at every ``reset()`` (the single-agent env calls it at each
episode start) it draws one member by weight and plays that member for the whole episode.

``SelfPlayPool`` is the member behind ``agent: self``. The trainer saves a frozen copy of the policy
into ``RUN_DIR/pool/step_NNNNNNNNNN/`` every ``selfplay.snapshot_every`` steps (keeping the newest
``pool_size``). A snapshot folder appears whole (``agents.files.replace_folder``; writing the same
step again, as a resumed run does, replaces it) and is removed whole. Each environment process
re-reads the folder at episode start (cheap: a directory listing) and plays a snapshot drawn
uniformly from it, loaded through the same weights-only loader as any checkpoint; until the first
snapshot exists it plays ``fallback``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.checkpoint import META_FILE
from agents.files import remove_folder
from agents.learned import LearnedAgent, load_learned_agent
from agents.registry import make_agent

SNAPSHOT_PREFIX = "step_"


class MixtureOpponent:
    """Plays one member per episode, drawn with probability proportional to its weight."""

    def __init__(self, members: Sequence[Agent], weights: Sequence[float],
                 seed: int | None = None) -> None:
        if len(members) != len(weights) or not members:
            raise ValueError(f"a mixture needs one weight per member, got {len(members)} members "
                             f"and {len(weights)} weights")
        w = np.asarray(weights, dtype=float)
        if (w <= 0).any():
            raise ValueError(f"mixture weights must be positive, got {list(weights)}")
        self.members = list(members)
        self.p = w / w.sum()
        self.rng = np.random.default_rng(seed)
        self.name = "mixture(" + ", ".join(getattr(m, "name", "?") for m in self.members) + ")"
        self.current: Agent = self.members[0]
        self.counts = np.zeros(len(self.members), dtype=int)  # episodes per member

    def reset(self) -> None:
        i = int(self.rng.choice(len(self.members), p=self.p))
        self.counts[i] += 1
        self.current = self.members[i]
        self.current.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)


class SelfPlayPool:
    """Frozen snapshots of the learner read from ``pool_dir`` (see the module docstring)."""

    name = "self"

    def __init__(self, pool_dir: Path, fallback: Agent, seed: int | None = None,
                 cache_size: int = 8) -> None:
        self.pool_dir = Path(pool_dir)
        self.fallback = fallback
        self.rng = np.random.default_rng(seed)
        self.cache: dict[str, LearnedAgent] = {}
        self.cache_size = cache_size
        self.current: Agent = fallback

    def reset(self) -> None:
        self.current = self.fallback
        for _ in range(3):  # the trainer may drop the snapshot just drawn: draw again
            snapshots = pool_snapshots(self.pool_dir)
            if not snapshots:
                break
            path = snapshots[int(self.rng.integers(len(snapshots)))]
            try:
                self.current = self._load(path)
                break
            except FileNotFoundError:
                continue
        self.current.reset()

    def _load(self, path: Path) -> LearnedAgent:
        key = path.name
        if key not in self.cache:
            if len(self.cache) >= self.cache_size:
                self.cache.pop(next(iter(self.cache)))
            self.cache[key] = load_learned_agent(path, name=f"self:{key}")
        return self.cache[key]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)


def snapshot_path(pool_dir: Path, step: int) -> Path:
    return Path(pool_dir) / f"{SNAPSHOT_PREFIX}{step:010d}"


def snapshot_step(path: Path) -> int:
    return int(path.name.removeprefix(SNAPSHOT_PREFIX))


def pool_snapshots(pool_dir: Path) -> list[Path]:
    """The snapshots in a pool folder, oldest first (hidden staging folders are not listed)."""
    if not pool_dir.exists():
        return []
    return sorted(p for p in pool_dir.iterdir()
                  if p.name.startswith(SNAPSHOT_PREFIX) and (p / META_FILE).exists())


def add_snapshot(pool_dir: Path, step: int, pool_size: int,
                 write: Callable[[Path], object]) -> Path:
    """``write(folder)`` the snapshot of ``step`` (a checkpoint writer that replaces the folder as
    a whole, so writing a step again is harmless); drop the oldest beyond ``pool_size``."""
    target = snapshot_path(pool_dir, step)
    write(target)
    for old in pool_snapshots(Path(pool_dir))[:-pool_size]:
        remove_folder(old)
    return target


def build_opponent(specs: Sequence[tuple[str, float]], pool_dir: Path | None, fallback: str,
                   seed: int) -> MixtureOpponent:
    """The mixture for one environment: ``specs`` are (agent, weight) with agent a scripted level,
    ``"self"``, ``"champion"`` or a checkpoint path."""
    members: list[Agent] = []
    for i, (spec, _) in enumerate(specs):
        member_seed = seed * 1000 + i
        if spec == "self":
            if pool_dir is None:
                raise ValueError("opponent 'self' needs a pool folder")
            members.append(SelfPlayPool(pool_dir, make_agent(fallback, seed=member_seed),
                                        seed=member_seed))
        else:
            members.append(make_agent(spec, seed=member_seed))
    return MixtureOpponent(members, [w for _, w in specs], seed=seed)
