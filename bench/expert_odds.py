"""The expert with the win-odds table in its endgame against the expert with the per-deal model it
used before (paired games, python engine).

    .venv/bin/python bench/expert_odds.py --games 2000 --seed 0 --workers 2

The expert reads ``agents.endgame.win_table`` in two places once either side is near the target:
its endgame discards (``agents.endgame.choose_discard``) and the win filter on its pegging rollouts
(``agents.rollout.rollout_values`` with the show). For target 121 that function now returns the
win-odds table (``crib_env.odds``); before, it returned the module's model of a deal. The opponent
here is the expert with the model put back for its own decisions, nothing else changed. Duplicate
games (each deal sequence played from both seats); the report is ``crib evaluate``'s, from the
table's side.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents.endgame as endgame  # noqa: E402
import agents.rollout as rollout  # noqa: E402
import agents.standard as standard  # noqa: E402
from agents.endgame import DEALER_TOTAL, PONE_TOTAL, _solve_win_table  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from training.evaluate import evaluate  # noqa: E402

MODEL = _solve_win_table(121, PONE_TOTAL, DEALER_TOTAL)
#: every module that looks ``win_table`` up by name when the expert decides
READERS = (endgame, rollout, standard)


@contextmanager
def model_table() -> Iterator[None]:
    """``win_table`` answers with the per-deal model (target 121) while the block runs."""
    saved = [module.win_table for module in READERS]

    def model(target: int) -> np.ndarray:
        return MODEL if int(target) == 121 else saved[0](target)

    for module in READERS:
        module.win_table = model
    try:
        yield
    finally:
        for module, original in zip(READERS, saved):
            module.win_table = original


class ExpertWithModel(ExpertAgent):
    """The expert whose endgame reads the per-deal model instead of the win-odds table."""

    name = "expert (model)"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        with model_table():
            return super().act(observation, action_mask)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    report = evaluate("expert", ExpertWithModel(), games=args.games, seed=args.seed,
                      duplicate=True, workers=args.workers, regret=False, engine="game")
    report.print()
    print(report.to_json(volatile=True))


if __name__ == "__main__":
    main()
