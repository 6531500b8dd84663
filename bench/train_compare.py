"""Policy designs compared at the same training budget: the card-token network (with and without the
decision features) against a plain MLP on the flat observation.

Each variant trains from scratch with the same PPO settings against the greedy level, then plays
``--games`` games against greedy (seed fixed). Prints one row per variant: training steps per
second on this machine and the win rate / points per game with 95% intervals.

    .venv/bin/python bench/train_compare.py --steps 60000 --games 400
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from training.config_file import parse_config
from training.evaluate import evaluate
from training.train import train

VARIANTS = {
    "mlp (flat observation)": {"arch": "mlp", "features": False, "hidden": 256, "layers": 2},
    "cards (tokens only)": {"arch": "cards", "features": False},
    "cards + features": {"arch": "cards", "features": True},
    "cards + features + prior": {"arch": "cards", "features": True, "prior": True},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="variant names to run (default: all)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, policy in VARIANTS.items():
            if args.only and label not in args.only:
                continue
            cfg = parse_config({
                "name": "bench", "seed": args.seed,
                "env": {"reward": "points", "episode": "game"},
                "opponents": [{"agent": "greedy"}],
                "policy": policy,
                "ppo": {"n_steps": 1024, "batch_size": 512, "n_epochs": 4, "gamma": 0.95,
                        "gae_lambda": 0.9, "ent_coef": 0.005},
                "train": {"total_timesteps": args.steps, "n_envs": 2, "progress_bar": False},
                "eval": {"every": args.steps, "games": 2, "opponents": ["greedy"]},
            })
            run_dir = train(cfg, output_dir=Path(tmp))
            summary = json.loads((run_dir / "summary.json").read_text())
            report = evaluate(str(run_dir / "latest"), "greedy", games=args.games,
                              seed=args.seed + 1, progress=False, regret=False)
            rows.append((label, summary["steps_per_second"], report))
    print(f"\n{args.steps} training steps each vs greedy; {args.games} games vs greedy\n")
    print("| policy | train steps/s | win rate vs greedy (95% CI) | points/game (95% CI) |")
    print("|---|---|---|---|")
    for label, sps, r in rows:
        lo, hi = r.win_rate_ci95
        plo, phi = r.points_per_game_ci95
        print(f"| {label} | {sps:.0f} | {r.win_rate:.3f} ({lo:.3f}-{hi:.3f}) | "
              f"{r.points_per_game:+.2f} ({plo:+.2f} to {phi:+.2f}) |")


if __name__ == "__main__":
    main()
