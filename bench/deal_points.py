"""Measure per-deal points by role (standard vs standard) for the tables in agents/endgame.py.

    .venv/bin/python bench/deal_points.py --games 2000

Prints PONE_PEGGING, DEALER_PEGGING, PONE_HAND, DEALER_HAND and CRIB as counts by points over the
completed deals (the deal that ends a game is left out: its counts are cut short).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ladder import play_game  # noqa: E402

from agents import make_agent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent", default="standard")
    args = parser.parse_args()
    agents = [make_agent(args.agent, seed=args.seed), make_agent(args.agent, seed=args.seed + 1)]
    tables = {name: [] for name in ("PONE_PEGGING", "DEALER_PEGGING", "PONE_HAND", "DEALER_HAND",
                                    "CRIB")}
    for i in range(args.games):
        game = play_game(agents, seed=args.seed * 100_003 + i, first_dealer=i % 2)
        for r in game.records:
            if not r.completed:
                continue
            d, p = r.dealer, 1 - r.dealer
            tables["PONE_PEGGING"].append(r.pegging[p])
            tables["DEALER_PEGGING"].append(r.pegging[d])
            tables["PONE_HAND"].append(r.hand[p])
            tables["DEALER_HAND"].append(r.hand[d])
            tables["CRIB"].append(r.crib + r.heels)
    for name, values in tables.items():
        counts = np.bincount(values)
        print(f"# mean {np.mean(values):.3f} over {len(values)} deals")
        print(f"{name} = ({', '.join(str(int(c)) for c in counts)},)")


if __name__ == "__main__":
    main()
