"""Benchmark: full random games per second through the rules engine ``Game`` alone.

Both players choose uniformly among ``game.legal_actions()``; no environment, no observations.
Prints games/s and steps/s (best of ``--repeats``).
Run: ``.venv/bin/python bench/bench_engine.py [--games 2000] [--target 121]``
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

from crib_env.game import Game


def play_games(games: int, target: int, seed: int) -> int:
    """Play ``games`` random games; return the number of steps taken."""
    rng = random.Random(seed)
    steps = 0
    for i in range(games):
        game = Game(target=target, seed=seed + i)
        while not game.is_over:
            game.step(rng.choice(game.legal_actions()))
            steps += 1
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games per timed run")
    parser.add_argument("--target", type=int, default=121, help="points to win")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    best, best_cpu, steps = float("inf"), float("inf"), 0
    for _ in range(args.repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        steps = play_games(args.games, args.target, args.seed)
        best = min(best, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    print(f"python {platform.python_version()}, {args.games} random games to {args.target}, "
          f"best of {args.repeats}, {os.cpu_count()} cpus, load average {load:.2f}")
    print(f"{best:.2f} s: {args.games / best:.0f} games/s, {steps / best:.0f} steps/s "
          f"({steps / args.games:.1f} steps per game); "
          f"cpu {best_cpu:.2f} s = {args.games / best_cpu:.0f} games/s per core")


if __name__ == "__main__":
    main()
