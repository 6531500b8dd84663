"""Time per decision of an agent against an opponent, one core: the mean, the 99th percentile and
the slowest decision, for each side, in the same games (what a person at the table waits).

    PYTHONPATH=. python bench/search_timing.py --agent champion-search --opponent expert --games 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from agents.registry import make_agent
from crib_env.game import Game
from crib_env.observation import encode
from training.eval_plans import game_plan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="champion-search")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    agent, opponent = make_agent(args.agent, seed=1), make_agent(args.opponent, seed=2)
    times: dict[str, list[float]] = {args.agent: [], args.opponent: []}
    for index in range(args.games):
        plan = game_plan(args.seed, index)
        players = [opponent, opponent]
        players[plan.agent_seat] = agent
        agent.reset()
        opponent.reset()
        game = Game(seed=plan.game_seed, first_dealer=plan.first_dealer, deals=plan.deals)
        while not game.is_over:
            seat = game.to_move
            obs, mask = encode(game, seat), game.legal_mask()
            started = time.perf_counter()
            card = players[seat].act(obs, mask)
            elapsed = time.perf_counter() - started
            if index > 0:  # the first game compiles and loads
                times[args.agent if seat == plan.agent_seat else args.opponent].append(elapsed)
            game.step(int(card))
    cpu = cpu_model()
    print(f"{cpu}, load {os.getloadavg()[0]:.2f}, {args.games - 1} games timed, one torch thread")
    print(f"{'side':<28}{'decisions':>10}{'mean ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for name, values in times.items():
        ms = 1e3 * np.asarray(values)
        print(f"{name:<28}{ms.size:>10}{ms.mean():>10.1f}{np.percentile(ms, 99):>10.1f}"
              f"{ms.max():>10.1f}")


if __name__ == "__main__":
    main()
