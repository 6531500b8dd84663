"""What the deal's memory holds that a network's observation does not.

The expert and the search remember each card the opponent laid this deal with what it knew then
(``agents.opponent_model.OpponentPlays``); a network sees one observation: the cards each side
has laid as sets, and only the current count sequence in order. So the order and the counts of
the opponent's plays in an earlier sequence of the deal are what the memory adds. At every play
decision with a choice the expert meets against ``--opponent``, this counts how often its memory
holds such plays, and how many.

    PYTHONPATH=. python bench/history_gap.py --games 60
"""

from __future__ import annotations

import argparse

from agents.expert import ExpertAgent
from training.eval_plans import game_plan
from training.eval_play import build_agent, play_game


class CountingExpert(ExpertAgent):
    """The expert, counting at each play decision with a choice what its memory holds."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.decisions = self.with_earlier = self.rows = self.earlier_rows = 0

    def choose_play(self, view, legal):
        if len(legal) > 1:
            shown = set(view.sequence)
            earlier = [card for card in self.history.rows if card not in shown]
            self.decisions += 1
            self.rows += len(self.history.rows)
            self.earlier_rows += len(earlier)
            self.with_earlier += bool(earlier)
        return super().choose_play(view, legal)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    expert = CountingExpert(seed=args.seed)
    rival = build_agent(args.opponent, seed=args.seed + 1)
    for index in range(args.games):
        play_game(expert, rival, game_plan(args.seed, index))
    n = expert.decisions
    print(f"{args.games} games against {args.opponent}, seed {args.seed}: {n:,} play decisions "
          f"with a choice")
    print(f"  the memory holds plays of an earlier sequence: {expert.with_earlier / n:.1%}")
    print(f"  opponent's plays remembered per decision:     {expert.rows / n:.2f}")
    print(f"  of them from an earlier sequence:             {expert.earlier_rows / n:.2f}")


if __name__ == "__main__":
    main()
