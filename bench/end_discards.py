"""What a network's discards near the end of the game cost: the network with standard's discards
for the win wherever either player is within ``agents.endgame.ENDGAME_NEED`` points of the target
(``agents.endgame.choose_discard``: exact hand scores and per-deal point distributions, the discard
most likely to win), the network's own cards everywhere else, against an opponent.

Not an agent to ship (half of it is hand-written): a probe of whether the end-game throws are
where a network loses games. Compare its result with the network's own on the same deals.

    PYTHONPATH=. python bench/end_discards.py NETWORK --opponent expert --games 2000 --seed S --json PATH
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from agents.endgame import ENDGAME_NEED, near_the_end
from agents.registry import make_agent
from crib_env.game import Phase
from crib_env.observation import decode
from training.evaluate import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


class EndDiscards:
    """``network``'s cards, but standard's for the discards near the end of the game."""

    stateless = True

    def __init__(self, network: str, seed: int) -> None:
        self.network = make_agent(network, seed=seed)
        self.standard = make_agent("standard", seed=seed)
        self.name = f"{network}+standard-end-discards"

    @staticmethod
    def end_game_discard(observation: np.ndarray) -> bool:
        view = decode(observation)
        return view.phase == Phase.DISCARD and near_the_end(
            view.target - view.own_score, view.target - view.opp_score, ENDGAME_NEED)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = np.asarray(observations), np.asarray(masks)
        standard = np.array([self.end_game_discard(o) for o in observations], dtype=bool)
        cards = np.empty(len(observations), dtype=np.int64)
        for rows, agent in ((standard, self.standard), (~standard, self.network)):
            if rows.any():
                cards[rows] = agent.act_batch(observations[rows], masks[rows])
        return cards

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])

    def reset(self) -> None:
        self.network.reset()
        self.standard.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("network", help="a checkpoint path or champion")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the evaluation report here")
    args = parser.parse_args()
    if args.json is not None and not os.access(args.json.parent, os.W_OK):
        parser.error(f"--json: cannot write into {args.json.parent}")
    report = evaluate(EndDiscards(args.network, args.seed), args.opponent, args.games,
                      seed=args.seed, duplicate=True, workers=1)
    result = report.to_dict()
    result["cpu"] = cpu_model()
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    low, high = result["win_rate_ci95_paired"]
    print(f"{result['agent']} vs {args.opponent}, seed {args.seed}: {100 * result['win_rate']:.2f}% "
          f"({100 * low:.1f}-{100 * high:.1f}), {result['points_per_game']:+.2f} points a game; "
          f"CPU {result['cpu']}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
