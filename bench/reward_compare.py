"""The three rewards side by side at the same budget: points, win and winprob.

    .venv/bin/python bench/reward_compare.py --steps 196608 --output runs/reward_compare

Trains one MaskablePPO run per reward on the fast path (the config below, only ``env.reward``
differs; whole games, so ``winprob`` applies), then prints each run's evaluation curve against
greedy (200 games per point, the evaluator's fixed seed) and the closing 1,000-game figure of its
best checkpoint.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

BASE = {
    "seed": 0,
    "env": {"episode": "game"},
    "opponents": [{"agent": "greedy", "weight": 1.0}],
    "policy": {"arch": "cards", "features": True},
    "ppo": {"learning_rate": 0.001, "n_steps": 32, "batch_size": 2048, "n_epochs": 4, "gamma": 0.99,
            "gae_lambda": 0.95, "ent_coef": 0.005},
    "train": {"n_envs": 256, "engine": "fast", "progress_bar": False},
    "eval": {"games": 200, "opponents": ["greedy"], "best_by": "greedy", "final_games": 1000,
             "at_start": True},
}
REWARDS = ("points", "win", "winprob")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=196_608)
    parser.add_argument("--output", type=Path, default=Path("runs/reward_compare"))
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    rows = []
    for reward in REWARDS:
        config = json.loads(json.dumps(BASE))
        config["name"] = f"reward_{reward}"
        config["env"]["reward"] = reward
        config["train"]["total_timesteps"] = args.steps
        config["eval"]["every"] = args.steps // 3
        path = args.output / f"{reward}.yaml"
        path.write_text(yaml.safe_dump(config))
        subprocess.run([sys.executable, "-m", "crib_cli", "train", "--config", str(path),
                        "--output-dir", str(args.output / "runs")], check=True)
        run = max((args.output / "runs").glob(f"*reward_{reward}__*"), key=lambda p: p.stat().st_mtime)
        evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
        rows.append((reward, [(e["step"], e["results"]["greedy"]["win_rate"]) for e in evals]))
    for reward, curve in rows:
        print(reward, "  ".join(f"{step}: {100 * rate:.1f}%" for step, rate in curve))


if __name__ == "__main__":
    main()
