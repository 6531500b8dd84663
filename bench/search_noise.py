"""How far a search's recorded cards are from the search itself: label noise against what a
network leaves to learn.

At every play decision the search values (``champion-search``: its ``last_values``), a twin
searches the same position again: the same memory of the game so far, fresh sampled deals. The
table gives how often the twin lays the search's card, how often the network does, and the
regret of each by the search's own values (the best value less that of the card). The twin's
regret is the floor that sampling noise alone puts under any learner of these labels; the
network's, above it, is what the labels can still teach. Games against ``--opponent``; with
``--opening-need`` the network plays both seats until a deal starts within that many points of
the target (``training.eval_play.Opening``), so the end of the game comes sooner.

    PYTHONPATH=. python bench/search_noise.py --search champion-search:play_need=30,net=NET \
        --network NET --games 20
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.learned import load_learned_agent
from agents.registry import make_agent, network_path
from crib_env.game import Phase
from crib_env.observation import decode
from training.eval_plans import game_plan
from training.eval_play import Opening, play_game
from training.per_row import copy_with_seed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


class Twinned:
    """Plays as the search and, at each play decision it values, asks a twin too."""

    def __init__(self, search, network, seed: int) -> None:
        self.search, self.network, self.name = search, network, search.name
        self.rng = np.random.default_rng(seed)
        self.rows: list[tuple[int, int, int, np.ndarray]] = []  # search, twin, network, values

    def reset(self) -> None:
        self.search.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        twin = copy_with_seed(self.search, int(self.rng.integers(2**31 - 1)))
        card = int(self.search.act(observation, action_mask))
        values = self.search.last_values
        if values and decode(observation).phase == Phase.PLAY:
            legal = sorted(values)
            again = int(twin.act(observation, action_mask))
            own = int(self.network.act(observation, action_mask))
            self.rows.append((legal.index(card), legal.index(again), legal.index(own),
                              np.array([values[c] for c in legal])))
        return card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", required=True, help="a champion-search spec")
    parser.add_argument("--network", required=True, help="the network to compare (checkpoint)")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opening-need", type=int, default=30,
                        help="the network plays both seats until a deal starts within this many "
                             "points of the target (0: whole games)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    network = load_learned_agent(network_path(args.network))
    agent = Twinned(make_agent(args.search, seed=args.seed + 1), network, args.seed + 2)
    rival = make_agent(args.opponent, seed=args.seed + 3)
    opening = Opening(network, args.opening_need) if args.opening_need else None
    for index in range(args.games):
        play_game(agent, rival, game_plan(args.seed, index), opening=opening)
    rows = agent.rows
    if not rows:
        raise SystemExit("no searched play decision in these games")
    search, twin, own = (np.array([r[i] for r in rows]) for i in range(3))
    best = np.array([r[3].max() for r in rows])

    def regret(chosen: np.ndarray) -> str:
        cost = best - np.array([r[3][c] for r, c in zip(rows, chosen, strict=True)])
        return f"{cost.mean():.5f} (± {cost.std(ddof=1) / np.sqrt(len(cost)):.5f})"

    print(f"# {len(rows)} searched play decisions in {args.games} games against {args.opponent} "
          f"(seed {args.seed}); CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    print("| who lays the card | same card as the search | regret by the search's values |")
    print("|---|---|---|")
    print(f"| the search | 100% | {regret(search)} |")
    print(f"| its twin (same position, fresh deals) | {np.mean(twin == search):.1%} | "
          f"{regret(twin)} |")
    print(f"| {args.network} | {np.mean(own == search):.1%} | {regret(own)} |")


if __name__ == "__main__":
    main()
