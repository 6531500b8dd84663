"""How strong the shipped champion is: win rate and points per game with 95% intervals against the
scripted levels, and its points per deal by role next to the published expert figures
(docs/RULES.md section 13: pone about 10 = pegging 2.0 + hand 8.1; dealer about 16 = pegging 3.5 +
hand 8.0 + crib 4.7).

    .venv/bin/python bench/champion_strength.py --games 2000 --workers 2 --opponents greedy standard
    .venv/bin/python bench/champion_strength.py --games 400 --opponents expert

Writes each report to ``--json-dir`` (default bench/results/champion) and prints Markdown tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from training.evaluate import evaluate

EXPERT = {"pone": {"pegging": 2.0, "hand": 8.1, "crib": 0.0},
          "dealer": {"pegging": 3.5, "hand": 8.0, "crib": 4.7}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="champion")
    parser.add_argument("--opponents", nargs="+", default=["greedy", "standard"])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json-dir", type=Path, default=Path("bench/results/champion"))
    args = parser.parse_args()
    args.json_dir.mkdir(parents=True, exist_ok=True)
    reports = []
    for opponent in args.opponents:
        report = evaluate(args.agent, opponent, games=args.games, seed=args.seed,
                          workers=args.workers, progress=True)
        label = Path(args.agent).name if "/" in args.agent else args.agent
        (args.json_dir / f"{label}_vs_{opponent}_{args.games}.json").write_text(
            report.to_json() + "\n")
        reports.append(report)
    print(f"\n{args.agent}, {args.games} games per opponent, seed {args.seed}\n")
    print("| opponent | win rate | 95% CI | points/game | 95% CI | discard regret | games/s |")
    print("|---|---|---|---|---|---|---|")
    for r in reports:
        regret = "" if r.discard_regret is None else f"{r.discard_regret['agent']:.3f}"
        print(f"| {r.opponent} | {r.win_rate:.3f} | {r.win_rate_ci95[0]:.3f}-{r.win_rate_ci95[1]:.3f}"
              f" | {r.points_per_game:+.2f} | {r.points_per_game_ci95[0]:+.2f} to "
              f"{r.points_per_game_ci95[1]:+.2f} | {regret} | {r.games_per_second:.1f} |")
    print("\nPoints per completed deal (agent side) next to the published expert figures\n")
    print("| opponent | role | pegging | hand | crib | total |")
    print("|---|---|---|---|---|---|")
    for role, figures in EXPERT.items():
        total = sum(figures.values())
        print(f"| published expert | {role} | {figures['pegging']:.1f} | {figures['hand']:.1f} | "
              f"{figures['crib']:.1f} | {total:.1f} |")
    for r in reports:
        for role in ("pone", "dealer"):
            d = r.per_deal["agent"][role]
            print(f"| vs {r.opponent} | {role} | {d['pegging']:.2f} | {d['hand']:.2f} | "
                  f"{d['crib']:.2f} | {d['total']:.2f} |")


if __name__ == "__main__":
    main()
