"""Benchmark evaluations on Ray against the local ``--workers`` path (issue 14).

    .venv/bin/python bench/bench_ray.py                       # expert vs standard, 40 games
    .venv/bin/python bench/bench_ray.py --agent champion --opponent standard --games 400

For one match and seed it plays the same games four or more ways and prints a Markdown table:
locally with ``--workers 1`` and ``2`` (process pool, spawned per evaluation), and on a local Ray
with 1 and 2 CPUs: ``ray.init`` (the start overhead), a warm-up evaluation of one block per CPU on
other games (the fresh workers import torch and numba and load the agents), then the measured
games on the warm Ray. Every report is checked to be the same as the local one (all keys but timing).
Needs the optional extra: ``pip install -e .[ray]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.evaluate import evaluate  # noqa: E402
from training.ray_backend import RayPool  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="expert")
    parser.add_argument("--opponent", default="standard")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    import ray

    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    print(f"{args.agent} vs {args.opponent}, {args.games} games, seed {args.seed}; {cpu}, "
          f"{os.cpu_count()} cores; load before: {os.getloadavg()[0]:.2f}\n")
    print("| run | Ray start + worker warm-up (s) | evaluation (s) | games/s | same report |")
    print("|---|---|---|---|---|")
    match = {"agent": args.agent, "opponent": args.opponent, "games": args.games,
             "seed": args.seed, "progress": False}
    evaluate(args.agent, args.opponent, games=2, seed=0, progress=False)  # compile, warm caches
    reference = None
    for workers in args.cpus:
        report = evaluate(**match, workers=workers)
        reference = reference or report.to_dict(volatile=False)
        print(f"| local --workers {workers} | - | {report.seconds:.1f} | "
              f"{report.games_per_second:.2f} | {report.to_dict(volatile=False) == reference} |")
    for cpus in args.cpus:
        started = time.perf_counter()
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR")
        start = time.perf_counter() - started
        pool = RayPool("local", num_cpus=cpus)
        try:
            # Warm-up on other games (another seed), one block per CPU: the workers start, import
            # torch and numba and load the agents. Replaying the measured games instead would
            # also warm the analyzer's caches for exactly those hands and flatter Ray.
            warm = evaluate(**{**match, "seed": args.seed + 1, "games": 20 * cpus}, pool=pool)
            report = evaluate(**match, pool=pool)
            print(f"| Ray {cpus} CPU{'s' if cpus > 1 else ''} | {start:.1f} + warm-up "
                  f"{warm.seconds:.1f} | {report.seconds:.1f} | {report.games_per_second:.2f} | "
                  f"{report.to_dict(volatile=False) == reference} |")
        finally:
            pool.shutdown()
            ray.shutdown()
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
