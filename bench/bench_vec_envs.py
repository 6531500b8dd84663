"""Benchmark: training-side env throughput, SB3's per-env stack against the compiled vector env.

* ``env steps/s``: learner steps per second with random legal actions (no network), for
  ``DummyVecEnv`` of ``SingleAgentCribbageEnv`` (what ``training.algos.ppo`` builds, minus the feature
  wrapper) and for ``training.sb3_vec_env.SB3VecEnv``, both against the random opponent;
* ``PPO steps/s``: ``MaskablePPO("MlpPolicy")`` (64x64, CPU, one torch thread) ``learn`` on each, same
  hyperparameters, so the difference is the env side.

Run: ``.venv/bin/python bench/bench_vec_envs.py [--envs 8] [--ppo-steps 8192]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from crib_env.single import SingleAgentCribbageEnv  # noqa: E402
from training.sb3_vec_env import SB3VecEnv  # noqa: E402


def plain_vec(n: int) -> DummyVecEnv:
    return DummyVecEnv([lambda: SingleAgentCribbageEnv(opponent="random", reward="points")
                        for _ in range(n)])


def env_steps_per_second(env, steps: int) -> float:
    rng = np.random.default_rng(0)
    env.seed(0)
    env.reset()
    start = time.process_time()
    for _ in range(steps // env.num_envs):
        masks = get_action_masks(env)
        env.step((rng.random(masks.shape) * masks).argmax(axis=1))
    return steps / (time.process_time() - start)


def ppo_steps_per_second(env, steps: int) -> float:
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=256, n_epochs=4, seed=0,
                        device="cpu", verbose=0)
    start = time.process_time()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--env-steps", type=int, default=40_000)
    parser.add_argument("--ppo-steps", type=int, default=8_192)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {args.envs} envs, per CPU second of this process")
    for name, make in (("DummyVecEnv(single)", plain_vec), ("SB3VecEnv", SB3VecEnv)):
        env_rate = env_steps_per_second(make(args.envs), args.env_steps)
        ppo_rate = ppo_steps_per_second(make(args.envs), args.ppo_steps)
        print(f"{name:20s} env steps/s {env_rate:10.0f}   PPO steps/s {ppo_rate:8.0f}")


if __name__ == "__main__":
    main()
