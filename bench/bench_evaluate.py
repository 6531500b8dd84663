"""Benchmark the evaluator: games per second, and what ``--duplicate`` buys in interval width.

    .venv/bin/python bench/bench_evaluate.py                # throughput + duplicate vs plain
    .venv/bin/python bench/bench_evaluate.py --games 200 --ci-games 400 --workers 1 2

Throughput: ``training.evaluate.evaluate`` for random-vs-random, greedy-vs-random,
standard-vs-greedy and champion-vs-greedy (matches whose agents fail to load are reported and
skipped), with discard regret on (the ``crib evaluate`` default) and off (what training's periodic
evaluations can use); a block's games are played together on the compiled core.

Duplicate vs plain: the same match at the same game count played both ways; prints the width of the
95% interval of points per game and of the win rate (Wilson, and over pairs for duplicate), and the
implied variance ratio (plain width / duplicate width, squared: how many times more games plain
alternation needs for the same precision on points per game).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.evaluate import evaluate  # noqa: E402

THROUGHPUT_MATCHES = (("random", "random"), ("greedy", "random"), ("standard", "greedy"),
                      ("champion", "greedy"))
DUPLICATE_MATCHES = (("random", "random"), ("greedy", "random"), ("greedy", "greedy"),
                     ("standard", "greedy"))


def _try(agent: str, opponent: str, **kwargs):
    try:
        return evaluate(agent, opponent, progress=False, **kwargs)
    except Exception as err:  # an agent still being written: report and go on
        print(f"| {agent} vs {opponent} | skipped: {type(err).__name__}: {err} |")
        return None


def throughput(games: int, workers: list[int], seed: int) -> None:
    print(f"\n### Throughput ({games} games per match, seed {seed})\n")
    print("| match | workers | regret | games/s | win rate | points/game |")
    print("|---|---|---|---|---|---|")
    evaluate("random", "random", games=20, seed=seed, progress=False)  # load the compiled kernels
    for agent, opponent in THROUGHPUT_MATCHES:
        runs = [(w, regret) for w in workers for regret in (True, False)]
        for w, regret in runs:
            report = _try(agent, opponent, games=games, seed=seed, workers=w, regret=regret)
            if report is None:
                break  # this match cannot be played yet
            print(f"| {agent} vs {opponent} | {w} | {'on' if regret else 'off'} | "
                  f"{report.games_per_second:.1f} | {report.win_rate:.3f} | "
                  f"{report.points_per_game:+.2f} |")


def duplicate_vs_plain(games: int, workers: int, seed: int) -> None:
    print(f"\n### Duplicate vs plain alternation ({games} games each, seed {seed})\n")
    print("| match | mode | points/game | ppg 95% width | win rate | Wilson width | "
          "paired win width | ppg variance ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for agent, opponent in DUPLICATE_MATCHES:
        reports = {}
        for duplicate in (False, True):
            report = _try(agent, opponent, games=games, seed=seed, workers=workers,
                          duplicate=duplicate, regret=False)
            if report is None:
                break
            reports[duplicate] = report
        if len(reports) < 2:
            continue
        width = {d: r.points_per_game_ci95[1] - r.points_per_game_ci95[0]
                 for d, r in reports.items()}
        for duplicate, r in reports.items():
            paired = ("" if r.win_rate_ci95_paired is None
                      else f"{r.win_rate_ci95_paired[1] - r.win_rate_ci95_paired[0]:.3f}")
            ratio = f"{(width[False] / width[True]) ** 2:.2f}" if duplicate else ""
            print(f"| {agent} vs {opponent} | {'duplicate' if duplicate else 'plain'} | "
                  f"{r.points_per_game:+.2f} | {width[duplicate]:.2f} | {r.win_rate:.3f} | "
                  f"{r.win_rate_ci95[1] - r.win_rate_ci95[0]:.3f} | {paired} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per throughput match")
    parser.add_argument("--ci-games", type=int, default=1000,
                        help="games per mode in the duplicate comparison (even)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1],
                        help="worker counts to time (the CI comparison uses the last)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-duplicate", action="store_true")
    args = parser.parse_args()
    if not args.skip_throughput:
        throughput(args.games, args.workers, args.seed)
    if not args.skip_duplicate:
        duplicate_vs_plain(args.ci_games, args.workers[-1], args.seed)


if __name__ == "__main__":
    main()
