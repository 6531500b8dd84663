"""A config's network before any training, saved as a checkpoint: the "step 0" row beside the
trained one (what training added), measured with the same ``crib evaluate`` commands.

The network is built as the trainer builds it (``seed_everything(seed)``, then
``build_network``), so it is the run's own starting point: its evaluation at ``eval.seed``
matches the run's step-0 line in ``evals.jsonl``.

Usage: ``PYTHONPATH=. python bench/step0_checkpoint.py --config configs/champion.yaml
--out runs/champion_step0``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.learned import build_network
from training.checkpoint import save_checkpoint
from training.config import load_config
from training.trainer import seed_everything


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cfg = load_config(args.config)
    seed_everything(cfg.seed)
    kwargs = cfg.policy.arch_kwargs()
    net = build_network(cfg.policy.arch, **kwargs)
    save_checkpoint(args.out, net, cfg.policy.arch, kwargs,
                    {"name": f"{cfg.name}@0", "config": cfg.name, "num_timesteps": 0,
                     "note": f"{args.config}'s network at step 0 (seed_everything({cfg.seed}), "
                             f"then build)"})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
