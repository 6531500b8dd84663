"""Where an agent's chance to win moves: the show against the play, from evaluation reports.

``crib evaluate --json`` reports the mean change in the win-odds table's chance to win over the
show (``winprob_per_decision.discard``: per card discarded, two a deal, what the kept hands and
the crib did to the board) and over the play (``winprob_per_decision.play``: per card laid),
beside the points per deal by role. Read side by side for several reports, they say whether an
agent's points turn into wins: points scored where they do not decide the game raise the points
columns and not the chance to win.

    PYTHONPATH=. python bench/win_chance_split.py REPORT.json ...
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from training.eval_plans import ROLES, SIDES


def row(path: Path) -> str:
    """One report's line of the table."""
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise SystemExit(f"{path}: not a readable evaluation report ({err})") from err
    missing = [key for key in ("agent", "opponent", "seed", "win_rate", "points_per_game",
                               "per_deal", "winprob_per_deal")
               if not isinstance(report, dict) or key not in report]
    if missing:
        raise SystemExit(f"{path}: not an evaluation report (no {', '.join(missing)})")
    split = report.get("winprob_per_decision")
    if not split:
        raise SystemExit(f"{path}: no winprob_per_decision (an evaluation without the win-odds "
                         f"table: target 121 only)")
    per_deal = report["per_deal"]

    def hand_points(side: str) -> float:
        return sum(per_deal[side][role]["hand"] for role in ROLES)

    agent, opponent = SIDES
    hand_margin = hand_points(agent) - hand_points(opponent)
    return (f"| {report['agent']} | {report['opponent']} | {report['seed']} "
            f"| {report['win_rate']:.2%} | {report['points_per_game']:+.2f} "
            f"| {split['discard']:+.5f} | {split['play']:+.5f} "
            f"| {report['winprob_per_deal']['all']:+.5f} | {hand_margin:+.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="crib evaluate --json reports")
    args = parser.parse_args()
    lines = [row(path) for path in args.reports]  # every report read before anything is printed
    print("| agent | opponent | seed | wins | points a game | chance to win at the show, a card discarded "
          "| in the play, a card laid | a deal in all | hand points a deal (both roles) less "
          "the opponent's |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
