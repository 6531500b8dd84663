"""Differential run: the compiled core (``crib_env.fast``) against the plain engine on many games.

Plays ``--games`` random-legal games with ``crib_env.game.Game`` (targets cycling through
``--targets``, so games also end on heels, mid-play and mid-show), replays each game's deals and
moves on the compiled core (``crib_env.testing.differential.replay_games``) and compares the two
after every move (scores, back pegs, player to move, count, phase, dealer, sequence length, go
flags, legal cards, winner, deal number) and per deal (pegging, heels, hand, crib points). The
suite runs the same check on 100,000 games (``tests/test_fast_differential.py``); this runs ten
times as many by default.

Run: ``.venv/bin/python bench/bench_differential.py [--games 1000000] [--workers 2]``
Exit status 1 if any disagreement is found.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_env.testing import differential  # noqa: E402


def check_chunk(args: tuple[int, int, tuple[int, ...]]) -> tuple[int, int, int, list[str], float]:
    """Play and compare ``n`` games from ``seed``; returns (games, moves, deals, problems, seconds
    spent in the plain engine)."""
    n, seed, targets = args
    start = time.perf_counter()
    ref = differential.play_reference_games(n, seed=seed, targets=targets)
    plain = time.perf_counter() - start
    problems = [f"seed {seed}: {p}" for p in differential.compare(ref)]
    return ref.n_games, len(ref.actions), len(ref.deals), problems, plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=2_000, help="games per work item")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--targets", default=",".join(map(str, differential.CHECK_TARGETS)),
                        help="comma-separated targets, cycled over the games")
    args = parser.parse_args()
    targets = tuple(int(t) for t in args.targets.split(","))
    jobs = []
    for start in range(0, args.games, args.chunk):
        jobs.append((min(args.chunk, args.games - start), args.seed + start, targets))

    print(f"{args.games:,} games, targets {targets}, {args.workers} workers, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    began = time.perf_counter()
    games = moves = deals = 0
    problems: list[str] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for n, m, d, found, _plain in pool.map(check_chunk, jobs):
            games, moves, deals = games + n, moves + m, deals + d
            problems += found
    seconds = time.perf_counter() - began
    print(f"compared {games:,} games, {moves:,} moves, {deals:,} deals in {seconds:.0f} s")
    if problems:
        print(f"{len(problems)} DISAGREEMENTS, first ones:")
        for p in problems[:20]:
            print("  " + p)
        sys.exit(1)
    print("no disagreement: the fast core matches the plain engine after every move")


if __name__ == "__main__":
    main()
