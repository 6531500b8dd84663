"""Time the exact discard analyzer and the expert's decisions.

    .venv/bin/python bench/bench_analysis.py --hands 2000

Prints the analyzer's time per six-card hand (mean and 99th percentile, after one warm-up call) and
the expert's mean time per discard decision and per pegging decision over a few games.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.analysis import analyze_discards  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from agents.standard import StandardAgent  # noqa: E402
from crib_env.game import Game, Phase  # noqa: E402
from crib_env.observation import encode  # noqa: E402


def time_analyzer(hands: int, seed: int) -> np.ndarray:
    rng = random.Random(seed)
    analyze_discards(rng.sample(range(52), 6), dealer=True)  # tables built once per process
    times = []
    for _ in range(hands):
        hand = rng.sample(range(52), 6)
        start = time.perf_counter()
        analyze_discards(hand, dealer=rng.random() < 0.5)
        times.append(time.perf_counter() - start)
    return np.array(times)


def time_expert(games: int, seed: int) -> dict[str, list[float]]:
    expert, standard = ExpertAgent(seed), StandardAgent(seed + 1)
    times: dict[str, list[float]] = {"discard": [], "play": []}
    for i in range(games):
        game = Game(seed=seed + i, first_dealer=i % 2)
        agents = [expert, standard] if i % 2 == 0 else [standard, expert]
        while not game.is_over:
            player = game.to_move
            obs, mask = encode(game, player), game.legal_mask()
            start = time.perf_counter()
            action = agents[player].act(obs, mask)
            spent = time.perf_counter() - start
            if agents[player] is expert and mask.sum() > 1:
                times["discard" if game.phase == Phase.DISCARD else "play"].append(spent)
            game.step(action)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t = time_analyzer(args.hands, args.seed) * 1000
    print(f"analyze_discards: {args.hands} hands, mean {t.mean():.2f} ms, median "
          f"{np.median(t):.2f} ms, p99 {np.percentile(t, 99):.2f} ms, max {t.max():.2f} ms")
    time_expert(1, args.seed)  # numba kernels loaded / compiled once
    times = time_expert(args.games, args.seed)
    for kind, spent in times.items():
        ms = np.array(spent) * 1000
        print(f"expert {kind} decision (more than one legal card): {len(ms)} decisions, mean "
              f"{ms.mean():.1f} ms, p99 {np.percentile(ms, 99):.1f} ms")


if __name__ == "__main__":
    main()
