"""SB3 ``VecEnv`` over the compiled vector env (``crib_env.vector.CribbageVectorEnv``): ``SB3VecEnv``.

All ``num_envs`` games live in one process and step in one compiled call, instead of one Python
``SingleAgentCribbageEnv`` per env (``DummyVecEnv`` / ``SubprocVecEnv``). It speaks SB3's protocol:
``reset`` / ``step_async`` / ``step_wait``, ``infos[i]["terminal_observation"]`` on episode ends,
``infos[i]["episode"] = {"r", "l", "t"}`` as ``Monitor`` writes it (so ``rollout/ep_rew_mean`` is
logged), and ``env_method("action_masks")`` for MaskablePPO. ``seed(s)`` takes effect at the next
reset, as in SB3.

At the end of every deal the row's info also holds ``"deal_stats"``: the learner's pegging, hand and
crib points of that deal (``{"deals": 1, "pegging_per_deal", "hand_per_deal", "crib_per_deal"}``,
the crib counted as 0 when the opponent dealt), as the single-agent env reports them per episode.
They come from the vector env's ``infos["deal_points"]`` (the deal's points kept before the next
deal clears them); in the deal that ends a game they stop at the target, as in the single env.

``obs_transform(observations, action_masks) -> rows`` maps the batch of observations to the
network's input (e.g. the card features of ``agents.networks.network_input``); its output width must
match ``observation_space`` (pass ``obs_size``). The opponent is whatever ``CribbageVectorEnv`` takes:
``"random"`` inside the kernel, a batch policy, or an agent with ``act``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from crib_env.cards import N_CARDS
from crib_env.game import DEFAULT_TARGET
from crib_env.observation import OBS_SIZE
from crib_env.vector import DEAL_POINT_FIELDS, CribbageVectorEnv

ObsTransform = Callable[[np.ndarray, np.ndarray], np.ndarray]
# columns of the vector env's deal_points rows (player 0's column; player 1's follows it)
_PEG0, _HAND0 = DEAL_POINT_FIELDS.index("peg0"), DEAL_POINT_FIELDS.index("hand0")
_CRIB, _DEALER = DEAL_POINT_FIELDS.index("crib"), DEAL_POINT_FIELDS.index("dealer")


def _deal_stats(points: np.ndarray, seats: np.ndarray) -> list[dict[str, int]]:
    """The learner's side of ``crib_env.vector``'s ``deal_points`` rows (``DEAL_POINT_FIELDS``)."""
    peg = points[np.arange(len(seats)), _PEG0 + seats]
    hand = points[np.arange(len(seats)), _HAND0 + seats]
    crib = np.where(points[:, _DEALER] == seats, points[:, _CRIB], 0)
    return [{"deals": 1, "pegging_per_deal": p, "hand_per_deal": h, "crib_per_deal": c}
            for p, h, c in zip(peg.tolist(), hand.tolist(), crib.tolist(), strict=True)]


class SB3VecEnv(VecEnv):
    """``num_envs`` cribbage games for SB3 / MaskablePPO (see the module docstring)."""

    def __init__(self, num_envs: int, opponent: Any = "random", seat: str = "random",
                 reward: str = "win", episode: str = "game", target_score: int = DEFAULT_TARGET,
                 obs_transform: ObsTransform | None = None, obs_size: int = OBS_SIZE) -> None:
        self.venv = CribbageVectorEnv(num_envs, opponent=opponent, seat=seat, reward=reward,
                                      episode=episode, target_score=target_score)
        self.obs_transform = obs_transform
        low = 0.0 if obs_transform is None else -np.inf
        high = 1.0 if obs_transform is None else np.inf
        observation_space = spaces.Box(low, high, (obs_size,), dtype=np.float32)
        super().__init__(num_envs, observation_space, spaces.Discrete(N_CARDS))
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(num_envs, dtype=np.float64)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._started = time.time()

    def _rows(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network input of ``obs`` (any number of rows)."""
        if self.obs_transform is None:
            return obs
        rows = np.asarray(self.obs_transform(obs, masks), dtype=np.float32)
        if rows.shape != (len(obs), *self.observation_space.shape):
            raise ValueError(f"obs_transform returned shape {rows.shape}, expected "
                             f"{(len(obs), *self.observation_space.shape)}")
        return rows

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, info = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._rows(obs, info["action_mask"])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        seats = self.venv.seats.copy()  # a finished game restarts with a new seat
        obs, rewards, done, _, info = self.venv.step(self._actions)
        self._actions = None
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(info["_deal_points"])
        if ended.size:
            for i, stats in zip(ended.tolist(), _deal_stats(info["deal_points"][ended],
                                                            seats[ended]), strict=True):
                infos[i]["deal_stats"] = stats
        if done.any():
            final = np.flatnonzero(done)
            # only the finished rows' last observations go through the transform
            final_rows = self._rows(info["final_obs"][final],
                                    np.zeros((final.size, info["action_mask"].shape[1]), np.int8))
            elapsed = round(time.time() - self._started, 6)
            scores = info["final_scores"]
            for j, i in enumerate(final.tolist()):
                infos[i].update({
                    "terminal_observation": final_rows[j], "TimeLimit.truncated": False,
                    "episode": {"r": float(self._returns[i]), "l": int(self._lengths[i]),
                                "t": elapsed},
                    "final_scores": scores[i].tolist()})
            self._returns[final] = 0.0
            self._lengths[final] = 0
        return self._rows(obs, info["action_mask"]), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, N_CARDS) bool: the learner's legal cards in each game."""
        return self.venv.action_masks()

    # -- the rest of SB3's VecEnv protocol ------------------------------------------------------

    def _indices(self, indices: VecEnvIndices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"SB3VecEnv has no per-env method {method_name!r} "
                                 f"(only 'action_masks')")
        masks = self.action_masks()
        return [masks[i] for i in self._indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"SB3VecEnv attributes are shared by all games; cannot set "
                             f"{attr_name!r} per env")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def close(self) -> None:
        pass
