"""Benchmark: the compiled core's show scorer over all 12,994,800 four-card hands x 48 starters.

Two ways, best of ``--repeats`` each, hand and crib rules:

* ``show_distribution``: enumerate every combination inside one compiled loop and count scores;
* ``show_points_batch``: score the arrays of ``scoring.all_hands_with_starters()`` (the same input
  ``bench_scoring.py`` gives numpy's ``score_hands``), checked equal to ``score_hands``.

Run: ``.venv/bin/python bench/bench_fast_scoring.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from crib_env import fast  # noqa: E402
from crib_env.scoring import all_hands_with_starters, score_hands  # noqa: E402


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    hands, starters = all_hands_with_starters()
    n = len(starters)
    out = np.zeros(n, dtype=np.int64)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {n:,} hand+starter combinations")
    for crib in (False, True):
        label = "crib" if crib else "hand"
        counts = fast.show_distribution(crib)  # compile / load outside the timing
        seconds = best_of(args.repeats, lambda crib=crib: fast.show_distribution(crib))
        mean = float(counts @ np.arange(30)) / n
        print(f"show_distribution ({label}): {seconds:.3f} s = {n / seconds / 1e6:.0f} M/s "
              f"(mean {mean:.4f})")
        fast.show_points_batch(hands, starters, crib, out)
        same = bool((out == score_hands(hands, starters, crib)).all())
        seconds = best_of(args.repeats,
                          lambda crib=crib: fast.show_points_batch(hands, starters, crib, out))
        print(f"show_points_batch ({label}): {seconds:.3f} s = {n / seconds / 1e6:.0f} M/s "
              f"(equal to score_hands: {same})")


if __name__ == "__main__":
    main()
