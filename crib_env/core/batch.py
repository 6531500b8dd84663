"""``GameBatch``: ``n`` games of the compiled core behind a small Python class."""

from __future__ import annotations

import numpy as np

from ..cards import N_CARDS
from ..game import DEFAULT_TARGET, IllegalActionError
from ..observation import OBS_SIZE
from .engine import init_games, legal_masks, random_actions, step_batch
from .layout import (
    COLUMNS,
    ERR_DEAL_OVER,
    ERR_NOT_LEGAL,
    ERR_OVER,
    P_GAME_OVER,
    PHASE,
    SCORE,
    TO_MOVE,
    new_state,
)
from .observe import encode_batch

_ERRORS = {ERR_OVER: "the game is over", ERR_DEAL_OVER: "the deal is over: call next_deal()",
           ERR_NOT_LEGAL: "not a legal card for the player to move"}


class GameBatch:
    """``n`` games stepped together by the compiled core (see the module docstring).

    >>> games = GameBatch(4).reset(seed=1)
    >>> masks = games.legal_masks()          # (4, 52) int8
    >>> games.step(games.random_actions())   # one move in every running game
    """

    def __init__(self, n: int, target: int = DEFAULT_TARGET, single_deal: bool = False) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1 games, got {n}")
        if not isinstance(target, (int, np.integer)) or target < 1:
            raise ValueError(f"target must be a positive int, got {target!r}")
        self.n = int(n)
        self.target = int(target)
        self.single_deal = bool(single_deal)
        self.state = new_state(self.n)
        self._masks = np.zeros((self.n, N_CARDS), dtype=np.int8)
        self._err = np.zeros(self.n, dtype=np.int64)

    def reset(self, seed: int = 0, first_dealer: int | None = None) -> GameBatch:
        """New games: game ``b`` seeded ``seed + b``; ``first_dealer`` 0 / 1, or None to cut."""
        if first_dealer not in (None, 0, 1):
            raise ValueError(f"first_dealer must be 0, 1 or None, got {first_dealer!r}")
        seeds = np.arange(seed, seed + self.n, dtype=np.int64)
        init_games(self.state, seeds, self.target, -1 if first_dealer is None else first_dealer,
                   self.single_deal)
        return self

    def column(self, name: str, player: int = 0) -> np.ndarray:
        """A state column by name (a key of ``COLUMNS``), e.g. ``column("SCORE", 1)``."""
        if name not in COLUMNS:
            raise ValueError(f"unknown column {name!r}; expected one of {', '.join(COLUMNS)}")
        return self.state[:, COLUMNS[name] + player]

    @property
    def scores(self) -> np.ndarray:
        return self.state[:, SCORE:SCORE + 2]

    @property
    def to_move(self) -> np.ndarray:
        return self.state[:, TO_MOVE]

    @property
    def phase(self) -> np.ndarray:
        return self.state[:, PHASE]

    @property
    def over(self) -> np.ndarray:
        return self.state[:, PHASE] == P_GAME_OVER

    def legal_masks(self) -> np.ndarray:
        """(n, 52) int8: 1 for each card the player to move may choose (all 0 in finished rows)."""
        legal_masks(self.state, self._masks)
        return self._masks.copy()

    def random_actions(self) -> np.ndarray:
        """A random legal card per row from each row's own stream (-1 where no move is due)."""
        out = np.empty(self.n, dtype=np.int64)
        random_actions(self.state, out)
        return out

    def step(self, actions: np.ndarray) -> None:
        """One move per row (``-1`` skips a row); raises ``IllegalActionError`` naming bad rows,
        after applying the legal ones."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.n,):
            raise ValueError(f"actions must have shape ({self.n},), got {actions.shape}")
        step_batch(self.state, actions, self._err)
        bad = np.flatnonzero(self._err)
        if bad.size:
            b = int(bad[0])
            raise IllegalActionError(f"{bad.size} illegal action(s), first in game {b}: card "
                                     f"{int(actions[b])}: {_ERRORS[int(self._err[b])]}")

    def observe(self, players: np.ndarray | int) -> np.ndarray:
        """(n, OBS_SIZE) float32 observations, row ``b`` seen by ``players[b]`` (or one player)."""
        players = np.broadcast_to(np.asarray(players, dtype=np.int64), (self.n,))
        out = np.zeros((self.n, OBS_SIZE), dtype=np.float32)
        encode_batch(self.state, np.ascontiguousarray(players), out)
        return out

    def clone(self) -> GameBatch:
        """An independent copy (random streams included)."""
        other = GameBatch.__new__(GameBatch)
        other.__dict__.update(self.__dict__)
        other.state = self.state.copy()
        other._masks = self._masks.copy()
        other._err = self._err.copy()
        return other
