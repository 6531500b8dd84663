"""A card network (or a pool of them) that sees every game under one fixed renaming of the suits.

Permuting the rows of a card network's suit embedding is the same as renaming the suits of every
card it sees (``agents.networks.CardNet``, ``symmetric``). A player that treats the suits alike
plays as well under any renaming; one that has learned an opponent's habit tied to the suits'
names (the scripted agents lay the lowest card id of equal cards) reads it wrongly under another
renaming. Evaluate the written checkpoint against the same opponent to see how much of a
network's result rests on such a habit.

    PYTHONPATH=. python bench/renamed_network.py OUT --network champion --renaming 23
    crib evaluate --agent OUT --opponent expert --games 2000 --duplicate --seed 0

Renaming ``k`` sends suit ``s`` to ``crib_env.symmetry.SUIT_ORDERS[k][s]`` (23: the order reversed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from agents.checkpoint import load_network, save_checkpoint
from agents.networks import CardNet
from agents.registry import network_path
from crib_env.symmetry import N_RENAMINGS, SUIT_ORDERS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the checkpoint folder to write")
    parser.add_argument("--network", default="champion", help="a checkpoint or champion")
    parser.add_argument("--renaming", type=int, default=N_RENAMINGS - 1,
                        help=f"0..{N_RENAMINGS - 1} (default: the suits' order reversed)")
    args = parser.parse_args()
    if not 0 <= args.renaming < N_RENAMINGS:
        parser.error(f"--renaming must be 0..{N_RENAMINGS - 1}")
    net, meta = load_network(network_path(args.network))
    cards = [m for m in getattr(net, "members", [net]) if isinstance(m, CardNet)]
    if not cards or len(cards) != len(getattr(net, "members", [net])):
        parser.error(f"{args.network}: only card networks have a suit embedding to rename")
    order = torch.from_numpy(SUIT_ORDERS[args.renaming])
    with torch.no_grad():
        for member in cards:
            member.suit_embed.weight.copy_(member.suit_embed.weight[order])
    folder = save_checkpoint(args.out, net, meta["arch"], meta["arch_kwargs"],
                             {"name": f"{meta.get('name', args.network)}-renamed-{args.renaming}"})
    print(f"wrote {folder}: {args.network} under renaming {args.renaming} "
          f"(suits -> {SUIT_ORDERS[args.renaming].tolist()})")


if __name__ == "__main__":
    main()
