"""What `crib evaluate --record` costs: games per second with recording off and on.

Off and on runs alternate, ``--repeats`` times each, and the median is printed, so a load change on
the shared machine hits both alike. Recording off must cost nothing (the batch path only checks
that no trace was asked for); recording on replays every game on ``Game`` to write its events.

    python bench/bench_record.py --games 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from training.evaluate import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--agent", default="greedy")
    parser.add_argument("--opponent", default="random")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    evaluate(args.agent, args.opponent, games=40, seed=99, progress=False,
             regret=False)  # compile and warm up first
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.repeats):
        for record in (False, True):
            start = time.perf_counter()
            evaluate(args.agent, args.opponent, games=args.games, seed=0, progress=False,
                     regret=False, record_games=record)
            rates[record].append(args.games / (time.perf_counter() - start))
    off, on = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"{args.agent} vs {args.opponent}, {args.games} games: "
          f"record off {off:,.0f} games/s (runs {[round(r) for r in rates[False]]}), "
          f"on {on:,.0f} games/s (runs {[round(r) for r in rates[True]]})")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
