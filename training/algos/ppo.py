"""MaskablePPO (``algo: ppo``, sb3-contrib) on the fast vector env or on Python envs.

``train.engine: fast`` (the default) steps all ``train.n_envs`` games in lockstep on the compiled
core (``training.sb3_vec_env`` over ``crib_env.vector``), every opponent acting for all the rows
that face it in one call (``training.batch_opponents``); ``python`` runs one
``SingleAgentCribbageEnv`` per env (``make_env``; needed for an opponent that keeps memory, the
expert), in one process or one process each (``train.vec_env``). SB3 runs the rollouts and the
updates; a callback hands the schedule back to the ``Trainer`` between updates and logs the
learner's points per deal (``game/pegging_per_deal``, ``game/hand_per_deal``,
``game/crib_per_deal``).
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import RunConfig
from ..interrupt import ignore_stop_signals, stop_signals_blocked
from ..trainer import Trainer, seed_everything


def make_env(rank: int, config: dict[str, Any], pool_dir: str | None, worker: bool = False):
    """Build one training environment (``worker``: inside its own env process)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    if worker:
        # a Ctrl-C reaches the whole process group: the trainer decides when to stop and closes
        # its workers itself (born with the signals blocked, _python_envs)
        ignore_stop_signals()
    from stable_baselines3.common.monitor import Monitor

    from crib_env.single import SingleAgentCribbageEnv

    from ..policy import CardFeatureWrapper
    from ..selfplay import build_opponent

    cfg = RunConfig.model_validate(config)
    specs = [(o.agent, o.weight) for o in cfg.opponents]
    opponent = build_opponent(specs, Path(pool_dir) if pool_dir else None, cfg.selfplay.fallback,
                              seed=cfg.seed * 100 + rank)
    env = SingleAgentCribbageEnv(opponent=opponent, seat=cfg.env.seat, reward=cfg.env.reward,
                                 episode=cfg.env.episode, target_score=cfg.env.target_score)
    return Monitor(CardFeatureWrapper(env, cfg.policy.features))

class PPOTrainer(Trainer):
    """MaskablePPO (sb3-contrib) on the fast vector env or on Python envs."""

    def build(self) -> None:
        from sb3_contrib import MaskablePPO

        from ..policy import NetworkPolicy

        cfg = self.cfg
        torch.set_num_threads(cfg.train.torch_threads)
        seed_everything(cfg.seed)
        self.env = self._fast_env() if cfg.train.engine == "fast" else self._python_envs()
        self.model = MaskablePPO(
            NetworkPolicy, self.env, device="cpu", verbose=0, seed=None,
            policy_kwargs={"arch": cfg.policy.arch, "arch_kwargs": cfg.policy.arch_kwargs()},
            **cfg.ppo.model_dump())
        self.start_weights()
        self.model.set_logger(self.tensorboard())
        self.env.seed(self.env_seed())

    def _fast_env(self):
        from agents.networks import input_size, network_input_batch

        from ..sb3_vec_env import SB3VecEnv

        cfg = self.cfg
        features = cfg.policy.features

        def inputs(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return network_input_batch(obs, masks, features)

        return SB3VecEnv(cfg.train.n_envs, opponent=self.fast_opponents(), seat=cfg.env.seat,
                          reward=cfg.env.reward, episode=cfg.env.episode,
                          target_score=cfg.env.target_score,
                          obs_transform=inputs if features else None,
                          obs_size=input_size(features))

    def _python_envs(self):
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        cfg = self.cfg
        config = cfg.model_dump(mode="json")
        pool = str(self.pool_dir) if self.uses_pool else None
        subproc = cfg.train.vec_env == "subproc" and cfg.train.n_envs > 1
        fns = [functools.partial(make_env, rank, config, pool, worker=subproc)
               for rank in range(cfg.train.n_envs)]
        if not subproc:
            return DummyVecEnv(fns)
        # spawned, not from a forkserver: a child inherits the signal mask of its parent, and the
        # forkserver's would last beyond these workers
        with stop_signals_blocked():
            return SubprocVecEnv(fns, start_method="spawn")

    @property
    def network(self) -> torch.nn.Module:
        return self.model.policy.network

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        return self.model.policy.optimizer

    @property
    def logger(self):
        return self.model.logger

    @property
    def num_timesteps(self) -> int:
        return self.model.num_timesteps

    @num_timesteps.setter
    def num_timesteps(self, value: int) -> None:
        self.model.num_timesteps = value

    # SB3 keeps the update count it logs (train/n_updates) in a private field and offers no
    # setter; a resumed run must carry the count on, so the field is read and set directly
    @property
    def n_updates(self) -> int:
        return self.model._n_updates

    @n_updates.setter
    def n_updates(self, value: int) -> None:
        self.model._n_updates = value

    def learn(self, steps: int) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self

        class Callback(BaseCallback):
            def _on_training_start(self) -> None:
                self.stats: dict[str, list[float]] = {"pegging_per_deal": [], "hand_per_deal": [],
                                                      "crib_per_deal": []}
                self.rollout_started = time.time()

            def _on_step(self) -> bool:
                for info in self.locals.get("infos", ()):
                    stats = info.get("deal_stats")
                    if stats:
                        for key in self.stats:
                            self.stats[key].append(stats[key])
                if trainer.stopping:
                    trainer.rollout_cut = True
                    return False
                return not trainer.out_of_time()

            def _on_rollout_start(self) -> None:
                # The previous rollout's update is done here, so the weights saved and evaluated
                # are those of every step counted so far.
                if hasattr(self, "rollout_ended"):
                    trainer.timings["update"] += time.time() - self.rollout_ended
                trainer.between_updates()
                self.rollout_started = time.time()

            def _on_rollout_end(self) -> None:
                self.rollout_ended = time.time()
                trainer.timings["env"] += self.rollout_ended - self.rollout_started
                trainer.log_speed()
                for key, values in self.stats.items():
                    if values:
                        self.logger.record(f"game/{key}", float(np.mean(values)))
                    values.clear()

        self.model.learn(total_timesteps=steps, callback=Callback(), reset_num_timesteps=False,
                         progress_bar=self.cfg.train.progress_bar, log_interval=1)

    def close(self) -> None:
        self.env.close()
