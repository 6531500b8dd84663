"""Benchmark: decisions per second of the greedy and standard agents, one row at a time (``act``)
against one compiled call for 512 rows (``act_batch``), on positions of random games played on
the compiled core (scores spread over the whole game), by phase and mixed.

Run: ``.venv/bin/python bench/bench_batch_agents.py [--rows 512] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.greedy import GreedyAgent
from agents.standard import StandardAgent
from crib_env import fast
from crib_env.game import Phase
from crib_env.observation import phase_column


def positions(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    games = fast.GameBatch(rows, target=121).reset(seed=seed)
    rng = np.random.default_rng(seed)
    for p in range(2):
        games.state[:, fast.SCORE + p] = rng.integers(0, 121, rows)
    observations, masks = [], []
    for _ in range(40):
        running = ~games.over
        observations.append(games.observe(games.to_move)[running])
        masks.append(games.legal_masks()[running])
        games.step(games.random_actions())
    return np.concatenate(observations), np.concatenate(masks)


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    observations, masks = positions(args.rows, seed=0)
    discard = observations[:, phase_column(Phase.DISCARD)] == 1
    rng = np.random.default_rng(1)
    sets = {}
    for label, pool in (("discard", np.flatnonzero(discard)), ("play", np.flatnonzero(~discard)),
                        ("mixed", np.arange(len(observations)))):
        rows = rng.choice(pool, args.rows, replace=False)
        sets[label] = (observations[rows], masks[rows])
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {args.rows} rows per batch, best of {args.repeats}")
    print(f"{'agent':10} {'rows':8} {'act /s':>10} {'act_batch /s':>13} {'speed-up':>9}")
    for make in (GreedyAgent, StandardAgent):
        agent = make(0)
        for label, (obs, mask) in sets.items():
            agent.act_batch(obs, mask)
            one = best_of(args.repeats, lambda a=agent, o=obs, m=mask: [a.act(r, k) for r, k in
                                                                         zip(o, m, strict=True)])
            batch = best_of(args.repeats, lambda a=agent, o=obs, m=mask: a.act_batch(o, m))
            n = len(obs)
            print(f"{agent.name:10} {label:8} {n / one:10,.0f} {n / batch:13,.0f} "
                  f"{one / batch:8.0f}x")


if __name__ == "__main__":
    main()
