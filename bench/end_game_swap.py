"""What a network's decisions near the end of the game cost: the network with another agent's
cards in one phase (``--phase discard`` or ``play``) wherever either player is within
``agents.endgame.ENDGAME_NEED`` points of the target, its own cards everywhere else, against an
opponent. ``--by standard --phase discard``: standard's exact discards for the win
(``agents.endgame.choose_discard``); ``--by expert --phase play``: the expert's simulated play.

Not an agent to ship (half of it is hand-written): a probe of where a network loses games.
Compare its result with the network's own on the same deals.

    PYTHONPATH=. python bench/end_game_swap.py NETWORK --by standard --phase discard \
        --opponent expert --games 2000 --seed S --json PATH
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.endgame import ENDGAME_NEED
from agents.files import atomic_write_text, check_output_file
from agents.networks import near_the_end
from agents.registry import make_agent
from crib_env.game import Phase
from crib_env.observation import phase_column
from training.evaluate import evaluate
from training.per_row import is_stateless

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


class EndGameSwap:
    """``network``'s cards, but ``by``'s in ``phase`` near the end of the game. Keeps memory
    (one copy per game, reseeded through ``rng``) when ``by`` does."""

    def __init__(self, network: str, by: str, phase: Phase, seed: int) -> None:
        self.network = make_agent(network, seed=seed)
        self.swap = make_agent(by, seed=seed)
        self.phase = phase
        self.stateless = is_stateless(self.swap)
        self.name = f"{network}+{by}-end-{phase.name.lower()}"

    @property
    def rng(self) -> np.random.Generator:
        return self.swap.rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self.swap.rng = value

    def swapped(self, observations: np.ndarray) -> np.ndarray:
        """Which rows are in ``phase`` near the end of the game (the pools' end-game test)."""
        in_phase = observations[:, phase_column(self.phase)] > 0
        return in_phase & near_the_end(torch.from_numpy(observations), ENDGAME_NEED)[:, 0].numpy()

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = np.asarray(observations), np.asarray(masks)
        swapped = self.swapped(observations)
        cards = np.empty(len(observations), dtype=np.int64)
        for rows, agent in ((swapped, self.swap), (~swapped, self.network)):
            if rows.any():
                cards[rows] = agent.act_batch(observations[rows], masks[rows])
        return cards

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])

    def reset(self) -> None:
        self.network.reset()
        self.swap.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("network", help="a checkpoint path or champion")
    parser.add_argument("--by", default="standard", help="the agent whose cards are swapped in")
    parser.add_argument("--phase", choices=("discard", "play"), default="discard")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the evaluation report here")
    args = parser.parse_args()
    if args.json is not None:
        try:
            check_output_file(args.json, "--json")  # before any game is played
        except ValueError as err:
            parser.error(str(err))
    agent = EndGameSwap(args.network, args.by, Phase[args.phase.upper()], args.seed)
    report = evaluate(agent, args.opponent, args.games,
                      seed=args.seed, duplicate=True, workers=1)
    result = report.to_dict()
    result["cpu"] = cpu_model()
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(result, indent=1) + "\n")
    low, high = result["win_rate_ci95_paired"]
    print(f"{result['agent']} vs {args.opponent}, seed {args.seed}: {100 * result['win_rate']:.2f}% "
          f"({100 * low:.1f}-{100 * high:.1f}), {result['points_per_game']:+.2f} points a game; "
          f"CPU {result['cpu']}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
