"""Benchmark: random-legal full games per second, each path as a ratio to OpenSpiel's cribbage.

Measured in the same run, one process, one thread (numba kernels are single-threaded):

* ``openspiel``: OpenSpiel's C++ cribbage driven from Python (``pyspiel``), 2 players, chance
  outcomes sampled uniformly and random legal actions: the reference (ratio 1.0);
* ``engine``: the plain rules engine ``crib_env.game.Game`` (``legal_actions`` + ``step``);
* ``aec``: the PettingZoo env ``crib_env.env()`` driven by ``agent_iter`` / ``last`` / ``step`` with a
  random card from ``action_mask``;
* ``fast_kernel``: ``crib_env.fast.random_games``: whole games inside one compiled call;
* ``fast_batch``: ``crib_env.fast.GameBatch``, 1,024 games stepped together from Python, one action
  array per step (random legal cards drawn by the kernel);
* ``vector_env``: ``crib_env.vector.CribbageVectorEnv`` (1,024 rows, learner moves random legal from
  ``action_masks()`` in numpy, the random opponent inside the kernel, observations encoded every
  step): completed games per second.

Each path is timed for at least ``--seconds`` (best of ``--repeats``); games/s is given per wall
second and per CPU second of this process (the second is steadier when other work shares the cores).
Run: ``.venv/bin/python bench/bench_games.py [--seconds 3] [--repeats 3] [--only aec,engine]``
(``pip install -c constraints.txt -e '.[bench]'`` for OpenSpiel).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

PATHS = ("openspiel", "engine", "aec", "fast_kernel", "fast_batch", "vector_env")


def openspiel_games(seconds: float) -> Callable[[], int]:
    import pyspiel

    game = pyspiel.load_game("cribbage", {"players": 2})
    rng = random.Random(0)

    def run() -> int:
        games, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[rng.randrange(len(legal))])
            games += 1
        return games
    return run


def engine_games(seconds: float) -> Callable[[], int]:
    from crib_env.game import Game

    rng = random.Random(0)

    def run() -> int:
        games, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            game = Game(seed=games)
            while not game.is_over:
                legal = game.legal_actions()
                game.step(legal[rng.randrange(len(legal))])
            games += 1
        return games
    return run


def play_random_game(env, seed: int, rng: random.Random) -> None:
    """One full game through an AEC env, a uniformly random legal card at every turn."""
    env.reset(seed=seed)
    for _agent in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        env.step(action)


def aec_games(seconds: float) -> Callable[[], int]:
    import crib_env

    env = crib_env.env()
    rng = random.Random(0)

    def run() -> int:
        games, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            play_random_game(env, games, rng)
            games += 1
        return games
    return run


def fast_kernel_games(seconds: float) -> Callable[[], int]:
    from crib_env import fast

    fast.random_games(10, 0, 121)  # compile (or load the cache) outside the timing
    batch = 2_000

    def run() -> int:
        games, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            fast.random_games(batch, games, 121)
            games += batch
        return games
    return run


def fast_batch_games(seconds: float, rows: int = 1024) -> Callable[[], int]:
    from crib_env import fast

    games = fast.GameBatch(rows).reset(seed=0)
    games.step(games.random_actions())  # compile outside the timing

    def run() -> int:
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            games.reset(seed=done)
            actions = np.empty(rows, dtype=np.int64)
            err = np.empty(rows, dtype=np.int64)
            while True:
                fast.random_actions(games.state, actions)
                if (actions < 0).all():
                    break
                fast.step_batch(games.state, actions, err)
            done += rows
        return done
    return run


def vector_env_games(seconds: float, rows: int = 1024) -> Callable[[], int]:
    from crib_env.vector import CribbageVectorEnv

    env = CribbageVectorEnv(rows, reward="win")
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run() -> int:
        env.reset(seed=1)
        games, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = env.action_masks()
            actions = (rng.random(masks.shape) * masks).argmax(axis=1)
            _, _, done, _, _ = env.step(actions)
            games += int(done.sum())
        return games
    return run


MAKERS = {"openspiel": openspiel_games, "engine": engine_games, "aec": aec_games,
          "fast_kernel": fast_kernel_games, "fast_batch": fast_batch_games,
          "vector_env": vector_env_games}


def measure(run: Callable[[], int], repeats: int) -> tuple[float, float]:
    """Best (games per wall second, games per CPU second) over ``repeats`` runs."""
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        games = run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best_wall = max(best_wall, games / wall)
        best_cpu = max(best_cpu, games / max(cpu, 1e-9))
    return best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum time per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--only", default=",".join(PATHS),
                        help=f"comma-separated subset of {', '.join(PATHS)}")
    args = parser.parse_args()
    chosen = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(chosen) - set(PATHS))
    if unknown:
        parser.error(f"unknown paths {unknown}; choose from {', '.join(PATHS)}")

    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    results: dict[str, tuple[float, float]] = {}
    for path in chosen:
        try:
            run = MAKERS[path](args.seconds)
        except ImportError as err:
            print(f"{path:12s} skipped: {err}")
            continue
        results[path] = measure(run, args.repeats)
    ref = results.get("openspiel")
    print(f"{'path':12s} {'games/s':>10s} {'games/cpu-s':>12s} {'x openspiel':>12s}")
    for path, (wall, cpu) in results.items():
        ratio = f"{wall / ref[0]:.2f} / {cpu / ref[1]:.2f}" if ref else "-"
        print(f"{path:12s} {wall:10.0f} {cpu:12.0f} {ratio:>12s}")
    if ref:
        print("ratios: per wall second / per CPU second")


if __name__ == "__main__":
    main()
