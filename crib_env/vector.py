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
from numba import njit

from . import fast
from .cards import N_CARDS
from .fast import (
    CRIB_PTS,
    DEALER,
    HAND_PTS,
    HEELS_PTS,
    OK,
    P_DEAL_OVER,
    P_GAME_OVER,
    P_PLAY,
    PEG,
    PHASE,
    SCORE,
    SINGLE_DEAL,
    TO_MOVE,
    WINNER,
    apply_action,
    encode_obs,
    init_game,
    legal_bits,
    next_deal,
    rand_below,
    random_action,
)
from .game import DEFAULT_TARGET, IllegalActionError, check_seed
from .observation import OBS_SIZE
from .odds import winprob_potential

SEAT_CHOICES = ("player_0", "player_1", "random")
REWARD_MODES = ("win", "points", "winprob")
R_WIN, R_POINTS, R_WINPROB = range(3)  # the reward modes as the kernels read them
EPISODE_MODES = ("game", "deal")
BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


#: what ``infos["deal_points"]`` holds per row for a deal that ended in the step (player terms)
DEAL_POINT_FIELDS = ("peg0", "peg1", "hand0", "hand1", "crib", "heels", "dealer")


# -- kernels -----------------------------------------------------------------------------------

@njit(cache=True)
def _step(S, b, card, deal_points, deal_ended):
    """``fast.step_game``, keeping the points of a deal that ends (``deal_points[b]``) before the
    next deal clears them."""
    err = apply_action(S, b, card)
    if err != OK:
        return err
    phase = S[b, PHASE]
    if phase == P_DEAL_OVER or phase == P_GAME_OVER:
        deal_ended[b] = 1
        out = deal_points[b]
        out[0] = S[b, PEG]
        out[1] = S[b, PEG + 1]
        out[2] = S[b, HAND_PTS]
        out[3] = S[b, HAND_PTS + 1]
        out[4] = S[b, CRIB_PTS]
        out[5] = S[b, HEELS_PTS]
        out[6] = S[b, DEALER]
        if phase == P_DEAL_OVER and S[b, SINGLE_DEAL] == 0:
            next_deal(S, b)
    return OK


@njit(cache=True)
def _first_illegal(S, actions):
    for b in range(S.shape[0]):
        a = actions[b]
        if a < 0 or a >= 52 or not (legal_bits(S, b) >> a) & 1:
            return b
    return -1


@njit(cache=True)
def _live(S, b):
    return S[b, PHASE] <= P_PLAY


@njit(cache=True)
def _opponent_random(S, seats, b, deal_points, deal_ended):
    while _live(S, b) and S[b, TO_MOVE] != seats[b]:
        _step(S, b, random_action(S, b), deal_points, deal_ended)


@njit(cache=True)
def _apply_learner(S, seats, actions, before, opp_random, deal_points, deal_ended):
    """Learner moves (already checked legal), then random opponent replies; remember the scores
    before the move for the reward."""
    for b in range(S.shape[0]):
        seat = seats[b]
        before[b, 0] = S[b, SCORE + seat]
        before[b, 1] = S[b, SCORE + 1 - seat]
        _step(S, b, actions[b], deal_points, deal_ended)
        if opp_random:
            _opponent_random(S, seats, b, deal_points, deal_ended)


@njit(cache=True)
def _opponent_rows(S, seats, rows):
    """Rows where the opponent is to move; returns how many (written to ``rows``)."""
    k = 0
    for b in range(S.shape[0]):
        if _live(S, b) and S[b, TO_MOVE] != seats[b]:
            rows[k] = b
            k += 1
    return k


@njit(cache=True)
def _encode_rows(S, rows, k, players, obs, masks):
    for i in range(k):
        b = rows[i]
        encode_obs(S, b, players[b], obs[i])
        bits = legal_bits(S, b)
        for c in range(52):
            masks[i, c] = (bits >> c) & 1


@njit(cache=True)
def _opponent_moves(S, rows, k, actions, deal_points, deal_ended):
    """Apply the opponent's chosen cards; returns the index of the first illegal one or -1."""
    for i in range(k):
        if _step(S, rows[i], actions[i], deal_points, deal_ended) != OK:
            return i
    return -1


@njit(cache=True)
def _deal_margin(S, b, seat):
    dealer = S[b, DEALER]
    margin = 0
    for p in range(2):
        points = S[b, PEG + p] + S[b, HAND_PTS + p]
        if p == dealer:
            points += S[b, HEELS_PTS] + S[b, CRIB_PTS]
        margin += points if p == seat else -points
    return margin


@njit(cache=True)
def _finish(S, seats, before, reward_mode, phi, potential, target, single_deal, seat_mode,
            opp_random, opp_ids, cumulative, deal_points, deal_ended, rewards, done, final_obs,
            final_scores):
    """Rewards and episode ends; finished rows are encoded into ``final_obs`` and restarted.
    ``phi``: the winprob potential table (``crib_env.odds.winprob_potential``); ``potential``: each
    row's learner potential at its last reward (0 for a new game)."""
    for b in range(S.shape[0]):
        seat = seats[b]
        own = S[b, SCORE + seat]
        opp = S[b, SCORE + 1 - seat]
        phase = S[b, PHASE]
        ended = phase == P_GAME_OVER or phase == P_DEAL_OVER
        if reward_mode == R_POINTS:
            rewards[b] = (own - before[b, 0]) - (opp - before[b, 1])
        elif reward_mode == R_WINPROB:
            now = phi[own, opp, 1 if S[b, DEALER] != seat else 0]
            rewards[b] = now - potential[b]
            potential[b] = 0.0 if ended else now
        elif phase == P_GAME_OVER:
            rewards[b] = 1.0 if S[b, WINNER] == seat else -1.0
        elif phase == P_DEAL_OVER:
            rewards[b] = np.sign(_deal_margin(S, b, seat))
        else:
            rewards[b] = 0.0
        done[b] = ended
        if ended:
            encode_obs(S, b, seat, final_obs[b])
            final_scores[b, 0] = own
            final_scores[b, 1] = opp
            _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids,
                     cumulative, deal_points, deal_ended)


#: resolution of the weighted draw of a row's opponent
_DRAW_UNITS = 1 << 30


@njit(cache=True)
def _draw_member(S, b, cumulative):
    """An index drawn with probabilities given by the increasing ``cumulative`` weights (int64
    units of ``_DRAW_UNITS``, the last equal to it)."""
    u = rand_below(S, b, _DRAW_UNITS)
    i = 0
    while cumulative[i] <= u:
        i += 1
    return i


@njit(cache=True)
def _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
             deal_points, deal_ended):
    """A new game in row ``b`` from the row's own stream (``seat_mode`` -1: random seat); with
    more than one opponent, the row's opponent for the episode is drawn too."""
    if seat_mode < 0:
        seats[b] = rand_below(S, b, 2)
    if cumulative.shape[0] > 1:
        opp_ids[b] = _draw_member(S, b, cumulative)
    init_game(S, b, -1, target, -1, single_deal)
    if opp_random:
        _opponent_random(S, seats, b, deal_points, deal_ended)


@njit(cache=True)
def _reset_all(S, seeds, seats, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
               deal_points, deal_ended):
    for b in range(S.shape[0]):
        fast.seed_row(S, b, seeds[b])
        seats[b] = seat_mode
        opp_ids[b] = 0
        _restart(S, seats, b, target, single_deal, seat_mode, opp_random, opp_ids, cumulative,
                 deal_points, deal_ended)


@njit(cache=True)
def _observe_all(S, seats, obs, masks):
    for b in range(S.shape[0]):
        encode_obs(S, b, seats[b], obs[b])
        bits = legal_bits(S, b)
        for c in range(52):
            masks[b, c] = (bits >> c) & 1


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
        cumulative = np.rint(np.cumsum(weights) / weights.sum() * _DRAW_UNITS).astype(np.int64)
        cumulative[-1] = _DRAW_UNITS
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
        _reset_all(self.state, seeds, self.seats, self.target_score, self.episode == "deal",
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
        _observe_all(self.state, self.seats, self._obs, self._masks)
        return self._obs.copy(), {"action_mask": self._masks.copy()}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                  dict[str, Any]]:
        """One learner move per row, then the opponent's replies; rows that finish restart."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        bad = _first_illegal(self.state, actions)
        if bad >= 0:
            raise IllegalActionError(f"row {bad}: card {int(actions[bad])} is not legal for the "
                                     f"learner (legal: {np.flatnonzero(self._masks[bad]).tolist()})")
        n = self.num_envs
        self._deal_ended[:] = 0
        _apply_learner(self.state, self.seats, actions, self._before, self._opp_random,
                       self._deal_points, self._deal_ended)
        self._play_opponent()
        rewards = np.zeros(n, dtype=np.float32)
        done = np.zeros(n, dtype=np.bool_)
        final_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)  # calloc: untouched pages cost nothing
        final_scores = np.zeros((n, 2), dtype=np.int64)
        _finish(self.state, self.seats, self._before, REWARD_MODES.index(self.reward_mode),
                self._phi, self._potential, self.target_score, self.episode == "deal",
                self._seat_mode, self._opp_random, self.opponent_ids, self._cumulative,
                self._deal_points, self._deal_ended, rewards, done, final_obs, final_scores)
        if done.any():
            for i, member in self._per_row.items():
                member.reset_rows(np.flatnonzero(done & (self.opponent_ids == i)))
            self._play_opponent()  # an opponent who moves first in a restarted game
        _observe_all(self.state, self.seats, self._obs, self._masks)
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
            k = _opponent_rows(self.state, self.seats, self._rows)
            if k == 0:
                return
            _encode_rows(self.state, self._rows, k, opp_seats, obs, masks)
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
            bad = _opponent_moves(self.state, self._rows, k, actions, self._deal_points,
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
