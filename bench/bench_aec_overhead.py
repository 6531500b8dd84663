"""Benchmark: what the PettingZoo AEC loop itself costs, with the rules taken out of the way.

A minimal AEC env whose rules run on the compiled core (``crib_env.fast``: a move costs about a
microsecond) is driven by the same loop as ``bench_games.py``'s ``aec`` path (``agent_iter`` /
``last`` / ``step``, random card from ``action_mask``), bare and under wrapper stacks:

* ``raw``: the bare env;
* ``order``: ``OrderEnforcingWrapper`` only;
* ``classic3``: ``TerminateIllegalWrapper`` + ``AssertOutOfBoundsWrapper`` + ``OrderEnforcingWrapper``,
  the stack PettingZoo's classic envs (and ``crib_env.env()``) use;
* ``slim``: one wrapper doing all three jobs, forwarding the hot attributes (``agent_selection``,
  ``rewards``, ``terminations``, ...) by properties instead of ``BaseWrapper.__getattr__`` chains.

This is a measurement prototype, not a shipped env: it has no infos, no render, "win" rewards only.
It shows how fast an AEC env can be at best, and what the wrapper stack alone takes away.
Run: ``.venv/bin/python bench/bench_aec_overhead.py [--games 400]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo import AECEnv  # noqa: E402
from pettingzoo.utils import wrappers  # noqa: E402

from crib_env import fast  # noqa: E402
from crib_env.observation import OBS_SIZE  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_games import play_random_game  # noqa: E402

AGENTS = ("player_0", "player_1")


class FastCoreAEC(AECEnv):
    """Cribbage to 121 on the compiled core, AEC API only (see the module docstring)."""

    metadata = {"name": "cribbage_fast_prototype", "is_parallelizable": False}

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = list(AGENTS)
        box = spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32)
        mask = spaces.Box(0, 1, (52,), dtype=np.int8)
        self._obs_space = spaces.Dict({"observation": box, "action_mask": mask})
        self._act_space = spaces.Discrete(52)
        self.state_rows = fast.new_state(1)
        self._seeder = random.Random()

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._seeder = random.Random(seed)
        fast.init_game(self.state_rows, 0, self._seeder.getrandbits(62), 121, -1, False)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.state_rows[0, fast.TO_MOVE]]

    def observe(self, agent):
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        fast.encode_obs(self.state_rows, 0, AGENTS.index(agent), obs)
        mask = np.zeros(52, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations[agent]:
            mask[fast.cards_of(fast.legal_bits(self.state_rows, 0))] = 1
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if fast.step_game(self.state_rows, 0, int(action)) != fast.OK:
            raise ValueError(f"illegal card {action}")
        self._cumulative_rewards[agent] = 0.0
        if self.state_rows[0, fast.PHASE] == fast.P_GAME_OVER:
            winner = self.state_rows[0, fast.WINNER]
            self.rewards = {a: 1.0 if p == winner else -1.0 for p, a in enumerate(AGENTS)}
            self.terminations = dict.fromkeys(AGENTS, True)
        else:
            self.rewards = dict.fromkeys(AGENTS, 0.0)
            self.agent_selection = AGENTS[self.state_rows[0, fast.TO_MOVE]]
        self._accumulate_rewards()


def _forward(name: str) -> property:
    def get(self):
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)
    return property(get)


class SlimWrapper(wrappers.OrderEnforcingWrapper):
    """Order enforcing + bounds and legality checks in one layer, hot attributes as properties."""

    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    agents = _forward("agents")

    @property
    def _cumulative_rewards(self):
        return self.env._cumulative_rewards

    def step(self, action):
        env = self.env
        agent = env.agent_selection
        if action is not None and not env.terminations[agent]:
            card = int(action)
            if not 0 <= card < 52 or not (int(fast.legal_bits(env.state_rows, 0)) >> card) & 1:
                raise ValueError(f"illegal card {action}")
        super().step(action)


STACKS = {
    "raw": lambda: FastCoreAEC(),
    "order": lambda: wrappers.OrderEnforcingWrapper(FastCoreAEC()),
    "classic3": lambda: wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(FastCoreAEC(), illegal_reward=-1))),
    "slim": lambda: SlimWrapper(FastCoreAEC()),
}


def games_per_cpu_second(env, games: int) -> float:
    rng = random.Random(0)
    start = time.process_time()
    for g in range(games):
        play_random_game(env, g, rng)
    return games / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    games_per_cpu_second(STACKS["raw"](), 3)  # compile / load the kernels
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {args.games} games per run, best of {args.repeats}")
    for name, make in STACKS.items():
        best = max(games_per_cpu_second(make(), args.games) for _ in range(args.repeats))
        print(f"{name:9s} {best:7.0f} games per CPU second")


if __name__ == "__main__":
    main()
