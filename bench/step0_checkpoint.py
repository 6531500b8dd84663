"""A config's network before any training, saved as a checkpoint: the "step 0" row beside the
trained one (what training added), measured with the same ``crib evaluate`` commands.

The network is the one the run starts from (``training.trainer.initial_network``: seeded, then
built), so its evaluation at ``eval.seed`` matches the run's step-0 line in ``evals.jsonl``. DMC
and distillation configs only: PPO builds its network inside SB3's policy.

Usage: ``PYTHONPATH=. python bench/step0_checkpoint.py --config configs/champion.yaml
--out runs/champion_step0``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.checkpoint import save_checkpoint
from training.config_file import load_config
from training.trainer import initial_network


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cfg = load_config(args.config)
    if cfg.algo == "ppo":
        parser.error(f"{args.config}: algo 'ppo' builds its network inside SB3's policy, not "
                     f"with training.trainer.initial_network; use a dmc or distill config")
    save_checkpoint(args.out, initial_network(cfg), cfg.policy.arch, cfg.policy.arch_kwargs(),
                    {"name": f"{cfg.name}@0", "config": cfg.name, "num_timesteps": 0,
                     "note": f"{args.config}'s network at step 0 (seed_everything({cfg.seed}), "
                             f"then build)"})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
