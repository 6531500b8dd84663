"""Benchmark: score every one of the 12,994,800 four-card hands x 48 starters with the batch scorer.

Prints the best of ``--repeats`` wall times (seconds) for ``score_hands`` over all combinations
(hand and crib rules), the rate in hands/s, and the time to build the combination arrays once.
Run: ``.venv/bin/python bench/bench_scoring.py``
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from crib_env.scoring import MAX_HAND_SCORE, all_hands_with_starters, score_hands


def best_of(repeats: int, fn) -> tuple[float, float]:
    """Best wall seconds and best process CPU seconds of ``repeats`` calls (CPU time is the figure
    to trust when other work shares the machine)."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    start = time.perf_counter()
    hands, starters = all_hands_with_starters()
    build = time.perf_counter() - start
    n = len(hands)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {n:,} hand+starter combos, "
          f"{os.cpu_count()} cpus, load average {load:.2f}")
    print(f"build all combinations: {build:.2f} s")
    for crib in (False, True):
        label = "crib" if crib else "hand"
        scores = score_hands(hands, starters, crib=crib)  # warm-up, and the check below
        mean = float(np.bincount(scores, minlength=MAX_HAND_SCORE + 1) @ np.arange(30)) / n
        seconds, cpu = best_of(args.repeats,
                               lambda crib=crib: score_hands(hands, starters, crib=crib))
        print(f"score_hands ({label} rules): {seconds:.3f} s best of {args.repeats} "
              f"= {n / seconds / 1e6:.1f} M hands/s (cpu {cpu:.3f} s; mean score {mean:.4f})")


if __name__ == "__main__":
    main()
