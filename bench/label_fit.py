"""Can a network learn a search's valued decisions? Fit it on them alone and watch both sides.

From a recording whose teacher valued some decisions (``champion-search`` with ``play_need``:
the end of the game), the valued decisions of the training chunks are fitted by cross-entropy
against the teacher's card (Adam, minibatches of 256), starting from a checkpoint (with
``--need``, widened by ``agents.networks.widen_into``). After each epoch: how often the network
lays the teacher's card and its regret by the teacher's values (the best value less that of its
card), on the training decisions and on the held-out chunks' (``rollout_gain.valued_decisions``). A learner
that the labels can teach rises on both; one that memorises rises on the first alone.

    PYTHONPATH=. python bench/label_fit.py RECORDING --start NET --need 31 --lr 3e-4 --epochs 6
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.checkpoint import load_network
from agents.networks import build_network, network_input_batch, widen_into
from agents.registry import network_path
from training.algos.distill import legal_logits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402
from rollout_gain import valued_decisions  # noqa: E402


def valued(folder: Path, held_out: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                   np.ndarray]:
    """Input rows, masks, cards and values of the valued decisions of the training (or held-out)
    chunks."""
    obs, masks, cards, values = valued_decisions(folder, held_out)
    return (torch.from_numpy(network_input_batch(obs, masks, True)),
            torch.from_numpy(masks.astype(np.int8)), torch.from_numpy(cards), values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--start", required=True, help="the checkpoint the fit starts from")
    parser.add_argument("--need", type=int, default=0, help="policy.need of the fitted network")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    sides = {"training": valued(args.recording, False), "held out": valued(args.recording, True)}
    start, meta = load_network(network_path(args.start))
    kwargs = {**meta["arch_kwargs"], **({"need": args.need} if args.need else {})}
    net = build_network(meta["arch"], **kwargs)
    widen_into(net, start.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)

    def measure(x: torch.Tensor, masks: torch.Tensor, cards: torch.Tensor,
                values: np.ndarray) -> str:
        net.eval()
        with torch.no_grad():
            chosen = legal_logits(net, x, masks).argmax(1).numpy()
        net.train()
        rows = np.arange(len(chosen))
        regret = np.nanmax(values, axis=1) - values[rows, chosen]
        return f"{np.mean(chosen == cards.numpy()):.1%} | {regret.mean():.5f}"

    x, masks, cards, _ = sides["training"]
    print(f"# {args.recording}: {len(cards):,} valued training decisions, "
          f"{len(sides['held out'][2]):,} held out; from {args.start}, need {args.need}, "
          f"lr {args.lr}; CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    print("| epoch | training: teacher's card | training regret | held out: teacher's card "
          "| held-out regret |")
    print("|---|---|---|---|---|")
    print(f"| 0 | {measure(*sides['training'])} | {measure(*sides['held out'])} |", flush=True)
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(cards))
        for first in range(0, len(cards), 256):
            rows = order[first:first + 256]
            loss = nn.functional.cross_entropy(legal_logits(net, x[rows], masks[rows]),
                                               cards[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"| {epoch} | {measure(*sides['training'])} | {measure(*sides['held out'])} |",
              flush=True)


if __name__ == "__main__":
    main()
