"""Standard with the win-odds table in its endgame discards against standard with the per-deal
model it used before (paired games).

    .venv/bin/python bench/standard_odds.py --games 40000 --seed 0

Standard chooses its discard for the win once either side is within ``agents.endgame.ENDGAME_NEED``
points of the target. For target 121 ``agents.endgame.win_table`` is now the win-odds table
(``crib_env.odds``, built from whole deal traces); before, it was the module's model of a deal
(independent per-deal totals). The opponent here is standard with that model put back, nothing else
changed. Duplicate games (each deal sequence played from both seats) on the compiled core; the
report is ``crib evaluate``'s, from the table's side.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.batch_obs import check_batch, raise_row_errors  # noqa: E402
from agents.endgame import DEALER_TOTAL, PONE_TOTAL, _solve_win_table  # noqa: E402
from agents.standard import StandardAgent  # noqa: E402
from agents.standard_batch import standard_actions  # noqa: E402
from crib_cli.evaluate import print_report  # noqa: E402
from training.evaluate import evaluate  # noqa: E402

MODEL = _solve_win_table(121, PONE_TOTAL, DEALER_TOTAL)


class StandardWithModel(StandardAgent):
    """Standard whose compiled endgame discards read the per-deal model (target 121 only; the
    batch path only, which is what the compiled evaluation engine calls)."""

    name = "standard (model)"

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, legal = check_batch(observations, action_masks)
        cards = np.empty(obs.shape[0], dtype=np.int64)
        standard_actions(obs, legal, MODEL, cards)
        return raise_row_errors(self.name, cards)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    report = evaluate("standard", StandardWithModel(), games=args.games, seed=args.seed, duplicate=True,
                      workers=args.workers, regret=False, engine="fast")
    print_report(report)
    print(report.to_json(volatile=True))


if __name__ == "__main__":
    main()
