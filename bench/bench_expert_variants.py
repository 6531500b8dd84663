"""Expert variants against the standard agent, in duplicate mode (the design record in
docs/experiments/2026-11-30-scripted-agents.md).

    .venv/bin/python bench/bench_expert_variants.py --games 1000 --seed 5 \
        --variant '{}' --variant '{"model": false}' --variant '{"discard_sims": 0}'

Each ``--variant`` is a JSON object of ``ExpertAgent`` keyword arguments (``sims``,
``discard_sims``, ``discard_window``, ``tolerance``, ``model``, ``policy``, ``win_need`` ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.expert import ExpertAgent  # noqa: E402
from agents.standard import StandardAgent  # noqa: E402
from training.evaluate import evaluate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--variant", action="append", default=None)
    args = parser.parse_args()
    for text in args.variant or ["{}"]:
        options = json.loads(text)
        report = evaluate(ExpertAgent(0, **options), StandardAgent(1), games=args.games,
                          seed=args.seed, duplicate=True, progress=False, regret=False)
        lo, hi = report.points_per_game_ci95
        wlo, whi = report.win_rate_ci95
        print(f"expert {json.dumps(options)} vs standard: {args.games} duplicate games, seed "
              f"{args.seed}: points/game {report.points_per_game:+.2f} [{lo:+.2f}, {hi:+.2f}], "
              f"win rate {report.win_rate:.3f} [{wlo:.3f}, {whi:.3f}], {report.seconds:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
