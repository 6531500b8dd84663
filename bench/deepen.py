"""A fitted ``CardNet`` with more self-attention blocks that computes what it did: the start of a
fit that asks whether depth lets a network learn the play's departures (bench/label_fit.py).

The blocks are pre-norm residual (``nn.TransformerEncoderLayer(norm_first=True)``): a block whose
attention output projection and second feed-forward layer are zero adds nothing to its input, so
the new blocks start as the identity and the deeper network's logits equal the fitted one's. Their
other weights keep their random start (seeded), so they learn from the first step.

    PYTHONPATH=. python bench/deepen.py NETWORK OUT --blocks 2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from agents.checkpoint import load_network, save_checkpoint
from agents.files import check_output_folder
from agents.networks import build_network
from agents.registry import network_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("network", help="a fitted network with attention (arch: cards)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--blocks", type=int, default=2, help="attention blocks to add")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.blocks < 1:
        parser.error("--blocks must be 1 or more")
    try:
        check_output_folder(args.out, "OUT")
        fitted, meta = load_network(network_path(args.network))
    except (OSError, ValueError) as err:
        parser.error(str(err))
    if meta["arch"] != "cards" or not meta["arch_kwargs"].get("attention"):
        parser.error(f"{args.network}: not a card network with attention blocks")
    kwargs = {**meta["arch_kwargs"], "attention": meta["arch_kwargs"]["attention"] + args.blocks}
    torch.manual_seed(args.seed)
    deeper = build_network("cards", **kwargs)
    state = deeper.state_dict()
    state.update(fitted.state_dict())
    deeper.load_state_dict(state)
    for block in list(deeper.blocks)[-args.blocks:]:
        for layer in (block.self_attn.out_proj, block.linear2):
            torch.nn.init.zeros_(layer.weight)
            torch.nn.init.zeros_(layer.bias)
    save_checkpoint(args.out, deeper, "cards", kwargs,
                    {"deepened_from": args.network, "new_blocks": args.blocks})
    print(f"{args.out}: {args.network} with {args.blocks} more attention blocks "
          f"({kwargs['attention']} in all), the same function")


if __name__ == "__main__":
    main()
