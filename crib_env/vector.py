"""A vectorized training env: ``num_envs`` cribbage games stepped at once by the compiled core.

Each row is one game with one learning seat; the opponent's moves are made inside ``step``. The
observation, action and reward are those of the single-agent env (``crib_env.single``), so a policy
trained here plays there and in the AEC env unchanged:

* observation: ``(num_envs, OBS_SIZE)`` float32 in the layout of ``crib_env.observation`` (the same
  vector ``encode(game, seat)`` gives; tested), seen from the learning seat;
* action: one card id per row; ``action_masks()`` (``(num_envs, 52)`` bool) gives the legal cards, as
  MaskablePPO expects; ``infos["action_mask"]`` holds the same as int8. An illegal card raises
  ``IllegalActionError`` naming the row, before any row is changed;
* reward: ``"win"`` (+1 / -1 when the game ends; with ``episode="deal"`` the sign of the deal's
  point difference when the deal ends), ``"points"`` (the learner's points minus the opponent's,
  from the learner's move through the opponent's replies) or ``"winprob"`` (the change in the
  learner's win-odds potential over the same moves, as in ``crib_env.aec``: 0 before the game, so a
  game's rewards add up to exactly +1 / -1; ``episode="game"`` only);
* episodes: ``"game"`` (to the target) or ``"deal"`` (one deal of a fresh game);
* autoreset in the same step (``AutoresetMode.SAME_STEP``, as SB3's VecEnv): a finished row comes
  back already reset; its last observation is in ``infos["final_obs"]`` (rows flagged by
  ``infos["_final_obs"]``), and ``infos["final_scores"]`` holds (learner, opponent) final scores;
* ``seat``: ``"player_0"``, ``"player_1"`` or ``"random"`` (drawn per episode from the row's stream);
  the first dealer is cut for as the rules say.

The opponent is ``"random"`` (played inside the compiled kernel: no Python per move), a batch
policy ``f(observations (k, OBS_SIZE), action_masks (k, 52)) -> actions (k,)`` (one call per round
of opponent moves, so a neural opponent is evaluated in batches), any agent with
``act(observation, action_mask)`` (called row by row; one object serves every row, so it must act
from the observation alone, as the scripted agents do), or a per-row opponent: an object with
``act_rows(rows, observations, action_masks) -> actions`` and ``reset_rows(rows, seeds=None)``
(``training.per_row.PerRowAgent``: one copy of an agent with memory, such as the expert, per row).
``act_rows`` is told which rows the observations are from; ``reset_rows`` is called for every row
at ``reset`` (with seeds drawn from its seed, which so fixes the opponent's random choices too) and
for the rows that start a new game against it.

A mixture: ``opponent=[(member, weight), ...]`` with members of those kinds (``"random"`` then acts
through a batch draw). Each row draws its member at the start of every episode, from the row's own
random stream with probability proportional to the weight (``opponent_ids`` says which); each round
of opponent moves calls each member once, on the rows that face it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from . import fast
from .cards import N_CARDS
from .game import DEFAULT_TARGET, IllegalActionError, check_seed
from .observation import OBS_SIZE
from .odds import winprob_potential
from .vector_kernels import (
    DEAL_POINT_FIELDS,
    DRAW_UNITS,
    REWARD_MODES,
    apply_learner,
    encode_rows,
    finish_step,
    first_illegal,
    observe_all,
    opponent_moves,
    opponent_rows,
    reset_all,
)

SEAT_CHOICES = ("player_0", "player_1", "random")
EPISODE_MODES = ("game", "deal")
BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# -- the env -----------------------------------------------------------------------------------

class CribbageVectorEnv(VectorEnv):
    """``num_envs`` games, one learning seat each, against ``opponent`` (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, opponent: str | BatchPolicy | Any = "random",
                 seat: str = "random", reward: str = "win", episode: str = "game",
                 target_score: int = DEFAULT_TARGET) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        for name, value, allowed in (("seat", seat, SEAT_CHOICES), ("reward", reward, REWARD_MODES),
                                     ("episode", episode, EPISODE_MODES)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; "
                                 f"got {value!r}")
        if isinstance(target_score, bool) or not isinstance(target_score, (int, np.integer)) \
                or target_score < 1:
            raise ValueError(f"target_score must be a positive int, got {target_score!r}")
        self.num_envs = int(num_envs)
        self.opponent = opponent
        members = _mixture(opponent)
        self._opp_random = len(members) == 1 and _is_random(members[0][0])
        #: draws for a mixture's ``"random"`` member, reseeded by every ``reset(seed)``
        self._random_member = np.random.default_rng()
        self._opp_batch = [self._random_member_moves if _is_random(m) else _batch_policy(m)
                           for m, _ in members] if not self._opp_random else []
        #: the mixture's per-row members by index (``_is_per_row``): told which rows act and start
        self._per_row = {i: m for i, (m, _) in enumerate(members) if _is_per_row(m)}
        weights = np.array([w for _, w in members], dtype=np.float64)
        cumulative = np.rint(np.cumsum(weights) / weights.sum() * DRAW_UNITS).astype(np.int64)
        cumulative[-1] = DRAW_UNITS
        self._cumulative = cumulative
        #: the member of the mixture each row faces this episode (index into the mixture)
        self.opponent_ids = np.zeros(int(num_envs), dtype=np.int64)
        self.seat = seat
        self._seat_mode = -1 if seat == "random" else SEAT_CHOICES.index(seat)
        self.reward_mode = reward
        self.episode = episode
        if reward == "winprob" and episode != "game":
            raise ValueError(f"reward='winprob' needs episode='game' (the chance to win the game), "
                             f"got episode={episode!r}")
        self._phi = (winprob_potential(int(target_score)) if reward == "winprob"
                     else np.zeros((1, 1, 2)))
        self._potential = np.zeros(int(num_envs), dtype=np.float64)
        self.target_score = int(target_score)
        self.single_observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(N_CARDS)
        self.observation_space = spaces.Box(0.0, 1.0, (self.num_envs, OBS_SIZE), dtype=np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, N_CARDS))
        n = self.num_envs
        self.state = fast.new_state(n)
        self.seats = np.zeros(n, dtype=np.int64)  # the learning seat of each row (0 / 1)
        self._before = np.zeros((n, 2), dtype=np.int64)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._masks = np.zeros((n, N_CARDS), dtype=np.int8)
        self._rows = np.zeros(n, dtype=np.int64)
        self._deal_points = np.zeros((n, len(DEAL_POINT_FIELDS)), dtype=np.int64)
        self._deal_ended = np.zeros(n, dtype=np.int64)
        self._needs_reset = True

    # -- gymnasium VectorEnv API ----------------------------------------------------------------

    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Restart every row; ``seed`` fixes every game that follows (rows get unrelated streams)."""
        seed = check_seed(seed)
        seeds = np.random.SeedSequence(seed).generate_state(self.num_envs, dtype=np.uint64)
        seeds = (seeds >> np.uint64(1)).astype(np.int64)
        self._random_member = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        reset_all(self.state, seeds, self.seats, self.target_score, self.episode == "deal",
                   self._seat_mode, self._opp_random, self.opponent_ids, self._cumulative,
                   self._deal_points, self._deal_ended)
        if self._per_row:  # every row's copy of each member restarts from a stream of the seed
            streams = np.random.SeedSequence(seed).spawn(2)[1].spawn(len(self._opp_batch))
            for i, member in self._per_row.items():
                row_seeds = streams[i].generate_state(self.num_envs, dtype=np.uint64)
                member.reset_rows(np.arange(self.num_envs),
                                  seeds=(row_seeds >> np.uint64(1)).tolist())
        self._play_opponent()
        self._potential[:] = 0.0
        self._needs_reset = False
        observe_all(self.state, self.seats, self._obs, self._masks)
        return self._obs.copy(), {"action_mask": self._masks.copy()}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                  dict[str, Any]]:
        """One learner move per row, then the opponent's replies; rows that finish restart."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        bad = first_illegal(self.state, actions)
        if bad >= 0:
            raise IllegalActionError(f"row {bad}: card {int(actions[bad])} is not legal for the "
                                     f"learner (legal: {np.flatnonzero(self._masks[bad]).tolist()})")
        n = self.num_envs
        self._deal_ended[:] = 0
        apply_learner(self.state, self.seats, actions, self._before, self._opp_random,
                       self._deal_points, self._deal_ended)
        self._play_opponent()
        rewards = np.zeros(n, dtype=np.float32)
        done = np.zeros(n, dtype=np.bool_)
        final_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)  # calloc: untouched pages cost nothing
        final_scores = np.zeros((n, 2), dtype=np.int64)
        finish_step(self.state, self.seats, self._before, REWARD_MODES.index(self.reward_mode),
                self._phi, self._potential, self.target_score, self.episode == "deal",
                self._seat_mode, self._opp_random, self.opponent_ids, self._cumulative,
                self._deal_points, self._deal_ended, rewards, done, final_obs, final_scores)
        if done.any():
            for i, member in self._per_row.items():
                member.reset_rows(np.flatnonzero(done & (self.opponent_ids == i)))
            self._play_opponent()  # an opponent who moves first in a restarted game
        observe_all(self.state, self.seats, self._obs, self._masks)
        ended = self._deal_ended.astype(np.bool_)
        infos = {"action_mask": self._masks.copy(), "final_obs": final_obs, "_final_obs": done.copy(),
                 "final_scores": final_scores, "_final_scores": done.copy(),
                 "deal_points": self._deal_points.copy(), "_deal_points": ended}
        return self._obs.copy(), rewards, done, np.zeros(n, dtype=np.bool_), infos

    def _random_member_moves(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A mixture's ``"random"`` member: a uniformly random legal card per row (the largest of
        uniform draws over the legal cards)."""
        return np.argmax(np.where(masks > 0, self._random_member.random(masks.shape), -1.0),
                         axis=1)

    def action_masks(self) -> np.ndarray:
        """(num_envs, 52) bool: the learner's legal cards in each row."""
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass

    # -- opponent -------------------------------------------------------------------------------

    def _play_opponent(self) -> None:
        """Let a Python opponent move in every row where it is to move, in batches, until none is."""
        if self._opp_random:
            return
        obs = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        masks = np.zeros((self.num_envs, N_CARDS), dtype=np.int8)
        opp_seats = 1 - self.seats
        while True:
            k = opponent_rows(self.state, self.seats, self._rows)
            if k == 0:
                return
            encode_rows(self.state, self._rows, k, opp_seats, obs, masks)
            actions = np.empty(k, dtype=np.int64)
            members = self.opponent_ids[self._rows[:k]]
            for i, policy in enumerate(self._opp_batch):
                mine = np.flatnonzero(members == i)
                if mine.size == 0:
                    continue
                if i in self._per_row:
                    chosen = np.asarray(self._per_row[i].act_rows(self._rows[:k][mine], obs[mine],
                                                                  masks[mine]))
                else:
                    chosen = np.asarray(policy(obs[mine], masks[mine]))
                if chosen.shape != (mine.size,):
                    raise ValueError(f"the opponent policy returned shape {chosen.shape} for "
                                     f"{mine.size} observations")
                actions[mine] = chosen
            bad = opponent_moves(self.state, self._rows, k, actions, self._deal_points,
                                  self._deal_ended)
            if bad >= 0:
                raise IllegalActionError(f"the opponent chose illegal card {int(actions[bad])} in "
                                         f"row {int(self._rows[bad])}")


def _mixture(opponent: Any) -> list[tuple[Any, float]]:
    """The opponent as a list of (member, weight); a single opponent is a mixture of one."""
    if isinstance(opponent, (list, tuple)):
        members = list(opponent)
        if not members:
            raise ValueError("an opponent mixture needs at least one member")
        for item in members:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ValueError(f"an opponent mixture is a list of (opponent, weight) pairs; "
                                 f"got {item!r}")
            weight = item[1]
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                    or not np.isfinite(weight) or weight <= 0:
                raise ValueError(f"opponent weights must be positive numbers, got {weight!r}")
        return [(m, float(w)) for m, w in members]
    return [(opponent, 1.0)]


def _is_random(opponent: Any) -> bool:
    return isinstance(opponent, str) and opponent == "random"


def _is_per_row(opponent: Any) -> bool:
    return callable(getattr(opponent, "act_rows", None)) and \
        callable(getattr(opponent, "reset_rows", None))


def _batch_policy(opponent: Any) -> BatchPolicy | None:
    if _is_per_row(opponent):
        return None  # called with its rows (``_play_opponent``)
    if isinstance(opponent, str):
        raise ValueError(f"opponent must be 'random', a batch policy or an agent with act(); "
                         f"got {opponent!r}")
    if hasattr(opponent, "act_batch"):
        return opponent.act_batch
    if hasattr(opponent, "act"):
        def per_row(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return np.array([opponent.act(o, m) for o, m in zip(obs, masks, strict=True)],
                            dtype=np.int64)
        return per_row
    if callable(opponent):
        return opponent
    raise ValueError(f"opponent must be 'random', a batch policy or an agent with act(); "
                     f"got {opponent!r}")
