"""Check the win-odds table against direct games of standard vs standard on the compiled core.

    .venv/bin/python bench/odds_check.py --games 200000 --position-games 4000 --seed 1

1. First-dealer win rate at 0-0: ``--games`` whole games with player 0 dealing first, against the
   table's ``win[0, 0, 1]`` and the published 55.5-56%.
2. A sample of positions (``POSITIONS``): ``--position-games`` games from each, against the table.
   The games are real games (standard's endgame play included); the table was built from neutral
   deals (``agents.odds_games``), so a gap here is the cost of that approximation, not noise, when
   |z| is large. Both intervals are 95%: Wilson for the games, +-1.96 stderr for the table.

Prints a markdown table and, with ``--json``, writes the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.odds_games import games_from  # noqa: E402
from crib_env.odds import load_table  # noqa: E402

#: (own score, opponent's score, own side deals next)
POSITIONS = [(0, 0, True), (60, 60, True), (60, 60, False), (90, 100, True), (90, 100, False),
             (100, 90, True), (95, 100, True), (95, 100, False), (110, 110, True),
             (110, 110, False), (115, 105, False), (105, 115, True), (118, 116, False),
             (116, 118, True), (120, 111, False), (101, 119, True)]
CHUNK = 2000


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def measure(own: int, opp: int, deals: bool, games: int, seed: int, label: str) -> int:
    wins = 0
    with tqdm(total=games, desc=label, leave=False) as bar:
        for start in range(0, games, CHUNK):
            n = min(CHUNK, games - start)
            seeds = np.arange(start, start + n, dtype=np.int64) + np.int64(seed) * (1 << 40)
            wins += int((games_from(own, opp, deals, seeds) == 0).sum())
            bar.update(n)
    return wins


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=200_000, help="games from 0-0")
    parser.add_argument("--position-games", type=int, default=4000, help="games per position")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--table", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    table = load_table(args.table)
    rows = []
    for i, (own, opp, deals) in enumerate(POSITIONS):
        n = args.games if (own, opp) == (0, 0) and deals else args.position_games
        t0 = time.time()
        wins = measure(own, opp, deals, n, args.seed * 1000 + i, f"{own}-{opp} {'deal' if deals else 'pone'}")
        p_table = table.win_probability(own, opp, deals)
        se_table = table.standard_error(own, opp, deals)
        p_games = wins / n
        p_clip = min(max(p_games, 0.5 / n), 1 - 0.5 / n)  # no zero-width interval at 0 or n wins
        se_games = math.sqrt(p_clip * (1 - p_clip) / n)
        z = (p_games - p_table) / math.sqrt(se_games ** 2 + se_table ** 2)
        lo, hi = wilson(wins, n)
        rows.append({"score": own, "opponent_score": opp, "dealer": deals, "games": n, "wins": wins,
                     "games_p": p_games, "games_ci95": [lo, hi], "table_p": p_table,
                     "table_stderr": se_table, "z": z, "seconds": time.time() - t0})
    print("| position | deals next | games | games P(win) (95%) | table P(win) (+-1.96 se) | z |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['score']}-{r['opponent_score']} | {'yes' if r['dealer'] else 'no'} | {r['games']:,} "
              f"| {100 * r['games_p']:.2f}% ({100 * r['games_ci95'][0]:.2f}-{100 * r['games_ci95'][1]:.2f}) "
              f"| {100 * r['table_p']:.2f}% (+-{196 * r['table_stderr']:.2f}) | {r['z']:+.1f} |")
    if args.json:
        args.json.write_text(json.dumps({"header": table.header, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
