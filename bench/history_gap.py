"""What the deal's memory holds that a network's observation does not.

The expert and the search remember each card the opponent laid this deal with what it knew then
(``agents.opponent_model.OpponentPlays``); a network sees one observation: the cards each side
has laid as sets, and only the current count sequence in order. So the order and the counts of
the opponent's plays in an earlier sequence of the deal are what the memory adds. At every play
decision with a choice the expert meets against ``--opponent``, this counts how often its memory
holds such plays, and how many; with ``--network``, how often that network lays the expert's
card where the memory holds them and where it does not (if the memory mattered to the expert's
play, the network would part from it more there).

    PYTHONPATH=. python bench/history_gap.py --games 200 --network champion
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.expert import ExpertAgent
from agents.registry import make_agent
from training.eval_plans import game_plan
from training.eval_play import build_agent, play_game


class CountingExpert(ExpertAgent):
    """The expert, counting at each play decision with a choice what its memory holds and, with
    a ``network``, whether the network lays its card there."""

    def __init__(self, network=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.network = network
        self.rows = self.earlier_rows = 0
        #: [memory holds no earlier plays, it holds some] -> [decisions, the network agrees]
        self.tally = np.zeros((2, 2), dtype=np.int64)
        self._seen: tuple[np.ndarray, np.ndarray] | None = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self._seen = (observation, action_mask)
        return super().act(observation, action_mask)

    def choose_play(self, view, legal):
        card = super().choose_play(view, legal)
        if len(legal) > 1:
            shown = set(view.sequence)
            earlier = [c for c in self.history.rows if c not in shown]
            self.rows += len(self.history.rows)
            self.earlier_rows += len(earlier)
            agrees = self.network is not None and self.network.act(*self._seen) == card
            self.tally[int(bool(earlier))] += (1, int(agrees))
        return card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--network", default=None, help="agent name or checkpoint to compare")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    network = None if args.network is None else make_agent(args.network)
    expert = CountingExpert(network=network, seed=args.seed)
    rival = build_agent(args.opponent, seed=args.seed + 1)
    for index in range(args.games):
        play_game(expert, rival, game_plan(args.seed, index))
    n = int(expert.tally[:, 0].sum())
    print(f"{args.games} games against {args.opponent}, seed {args.seed}: {n:,} play decisions "
          f"with a choice")
    print(f"  the memory holds plays of an earlier sequence: {expert.tally[1, 0] / n:.1%}")
    print(f"  opponent's plays remembered per decision:     {expert.rows / n:.2f}")
    print(f"  of them from an earlier sequence:             {expert.earlier_rows / n:.2f}")
    if network is not None:
        for holds, label in ((0, "none"), (1, "some")):
            total, agree = expert.tally[holds]
            print(f"  {args.network} lays the expert's card, earlier plays {label}: "
                  f"{agree / total:.1%} of {total:,}")


if __name__ == "__main__":
    main()
