"""Agents that keep memory between decisions, played on many game rows at once.

The compiled core (``crib_env.fast``) plays many games side by side, one per row, and asks each
side for its cards on all of its rows together. An agent that acts from the observation alone
(``stateless = True``) can serve every row from one object; one that remembers earlier
observations (the expert and ``champion-search`` read the opponent's plays of the deal) would mix
the games up. ``PerRowAgent`` gives such an agent one copy per row: row ``b``'s copy sees row
``b``'s observations only, in the game's own order, and is reset when the row starts a new game,
so it decides exactly as one object playing that game alone on ``crib_env.game.Game`` would,
given the same cards and the same seed.

It serves the evaluation's batch player (``training.batch_play``) and the training vector env
(``crib_env.vector``, through ``training.batch_opponents``), which call ``reset_rows`` and
``act_rows`` with the rows' indices.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def is_stateless(agent: Any) -> bool:
    """True if ``agent`` declares that it keeps no memory between decisions."""
    return bool(getattr(agent, "stateless", False))


def copy_with_seed(agent: Any, seed: int) -> Any:
    """A deep copy of ``agent`` whose random stream (an ``rng`` attribute holding a numpy
    ``Generator`` or a ``random.Random``) starts from ``seed``. Only the agent's own stream is
    reseeded: a nested agent's (``champion-search``'s network, which plays its best card) is
    copied as it stands."""
    twin = copy.deepcopy(agent)
    rng = getattr(twin, "rng", None)
    if isinstance(rng, np.random.Generator):
        twin.rng = np.random.default_rng(seed)
    elif isinstance(rng, random.Random):
        twin.rng = random.Random(seed)
    return twin


class PerRowAgent:
    """One copy of ``prototype`` per game row (see the module docstring).

    ``seed_of_row(b)`` gives the seed of row ``b``'s copy, made the first time the row is reset
    (unless ``reset_rows`` is given seeds); a later ``reset_rows`` of the row calls the copy's
    ``reset()`` (a new game, the random stream continuing). ``clock``, if set to a dict, gets
    ``{row: [seconds, decisions]}`` added for every decision made, timed one call at a time.
    """

    def __init__(self, prototype: Any, seed_of_row: Callable[[int], int]) -> None:
        if not callable(getattr(prototype, "act", None)):
            raise ValueError(f"a per-row agent needs act(observation, action_mask); "
                             f"got {prototype!r}")
        self.prototype = prototype
        self.name = str(getattr(prototype, "name", type(prototype).__name__))
        self.seed_of_row = seed_of_row
        self.copies: dict[int, Any] = {}
        self.clock: dict[int, list[float]] | None = None

    def reset_rows(self, rows: Sequence[int] | np.ndarray,
                   seeds: Sequence[int] | None = None) -> None:
        """Rows ``rows`` start a new game: their copies forget the last one. With ``seeds`` (one
        per row), each row gets a new copy seeded so instead (``crib_env.vector``'s ``reset``)."""
        rows = np.asarray(rows, dtype=np.int64).tolist()
        if seeds is not None and len(seeds) != len(rows):
            raise ValueError(f"reset_rows: {len(rows)} rows but {len(seeds)} seeds")
        for i, b in enumerate(rows):
            twin = None if seeds is not None else self.copies.get(b)
            if twin is None:
                seed = self.seed_of_row(b) if seeds is None else int(seeds[i])
                twin = self.copies[b] = copy_with_seed(self.prototype, seed)
            reset = getattr(twin, "reset", None)
            if reset is not None:
                reset()

    def branch(self, rows: Sequence[int] | np.ndarray) -> PerRowAgent:
        """A new ``PerRowAgent`` whose row ``i`` is a deep copy of row ``rows[i]``'s copy as it
        stands (its memory and random stream included): games continued from those rows in a
        search or a rollout, leaving the real games' copies untouched."""
        twin = PerRowAgent(self.prototype, self.seed_of_row)
        twin.copies = {i: copy.deepcopy(self.copies[b])
                       for i, b in enumerate(np.asarray(rows, dtype=np.int64).tolist())}
        return twin

    def act_rows(self, rows: Sequence[int] | np.ndarray, observations: np.ndarray,
                 masks: np.ndarray) -> np.ndarray:
        """One card for each of ``rows``, chosen by that row's copy from its observation and mask
        (``observations[i]`` and ``masks[i]`` are row ``rows[i]``'s). A row never reset is an
        error: its copy would not know that a game started."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(observations) != rows.size or len(masks) != rows.size:
            raise ValueError(f"act_rows: {rows.size} rows but {len(observations)} observations "
                             f"and {len(masks)} masks")
        cards = np.empty(rows.size, dtype=np.int64)
        for i, b in enumerate(rows.tolist()):
            twin = self.copies.get(b)
            if twin is None:
                raise RuntimeError(f"{self.name}: row {b} acts before reset_rows started its game")
            started = time.perf_counter()
            cards[i] = int(twin.act(observations[i], masks[i]))
            if self.clock is not None:
                spent = self.clock.setdefault(b, [0.0, 0])
                spent[0] += time.perf_counter() - started
                spent[1] += 1
        return cards
