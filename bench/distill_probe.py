"""How well a student imitates the expert, measured on a recording's held-out chunks.

For each network it prints, over the held-out decisions of ``chunks`` chunks of a recording made
with the teacher's values (``training.algos.distill``, ``distill.recording``):

* **agreement**: the share of decisions where the network's card is the expert's;
* **deviations**: the same share over the decisions where the expert did not play standard's card
  (what the expert knows beyond the rules of thumb);
* **margin regret**: on the plays the expert decided by points, its simulated margin of its best
  card less that of the card chosen, in points per decision; printed for the network, the expert
  (not 0: its rule of thumb breaks near-ties) and standard.

Either fit a network here (the ``cards`` network with decision features, cross-entropy against the
expert's card or ``--soft`` targets, Adam cosine to 0, batches of 512, as ``algo: distill`` does)
or score checkpoints with ``--checkpoint`` (repeatable).

Usage: ``PYTHONPATH=. python bench/distill_probe.py --recording runs/distill_values --chunks 160
--steps 800000 --attention 2`` or ``... --checkpoint agents/checkpoints/champion``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.learned import load_learned_agent
from agents.networks import CardNet, network_input_batch
from agents.registry import make_agent
from training.algos.distill import (
    cosine_rate,
    imitation_step,
    legal_logits,
    minibatch,
    teacher_targets,
)
from training.algos.distill_recording import Decisions, load_recording

BATCH = 512


def report(label: str, cards: np.ndarray, held: Decisions, standard: np.ndarray) -> str:
    """One line of the three measures for ``cards`` chosen on ``held``."""
    deviation = standard != held.cards
    margins = held.margins
    valued = ~np.isnan(margins).all(axis=1)
    best = np.nanmax(margins[valued], axis=1)
    rows = np.arange(int(valued.sum()))

    def regret(chosen: np.ndarray) -> float:
        return float(np.mean(best - margins[valued][rows, chosen[valued]]))

    return (f"{label}: agreement {np.mean(cards == held.cards):.3f}, deviations "
            f"{np.mean(cards[deviation] == held.cards[deviation]):.3f} of {int(deviation.sum())}, "
            f"margin regret {regret(cards):.3f} (expert {regret(held.cards.astype(np.int64)):.3f},"
            f" standard {regret(standard):.3f}; {int(valued.sum())} plays)")


def fit(train: Decisions, held: Decisions, standard: np.ndarray, args: argparse.Namespace) -> None:
    inputs = torch.from_numpy(network_input_batch(train.obs, train.masks, True))
    held_inputs = torch.from_numpy(network_input_batch(held.obs, held.masks, True))
    masks, held_masks = torch.from_numpy(train.masks), torch.from_numpy(held.masks)
    cards = torch.from_numpy(train.cards.astype(np.int64))
    margins = torch.from_numpy(train.margins)
    torch.manual_seed(args.seed)
    net = CardNet(features=True, hidden=args.hidden, context=128, embed=16,
                  attention=args.attention)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    label = (f"hidden {args.hidden}, attention {args.attention}, soft {args.soft} "
             f"(temperature {args.temperature})")
    print(f"fitting {label} on {len(train):,} decisions, {args.steps:,} steps", flush=True)
    step, started = 0, time.perf_counter()
    while step < args.steps:
        rows = torch.from_numpy(minibatch(args.seed, len(train), step, BATCH, args.steps))
        for group in optimizer.param_groups:
            group["lr"] = cosine_rate(args.learning_rate, step, args.steps)
        target = teacher_targets(cards[rows], masks[rows], margins[rows], args.soft,
                                 args.temperature)
        imitation_step(net, optimizer, inputs[rows], masks[rows], target)
        step += len(rows)
        if step % args.report_every < BATCH or step >= args.steps:
            net.eval()
            with torch.inference_mode():
                chosen = legal_logits(net, held_inputs, held_masks).argmax(1).numpy()
            net.train()
            print(report(f"step {step:,} ({time.perf_counter() - started:.0f} s)", chosen,
                         held, standard), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", type=Path, default=Path("runs/distill_values"))
    parser.add_argument("--chunks", type=int, default=160)
    parser.add_argument("--checkpoint", action="append", default=[],
                        help="score this checkpoint instead of fitting (repeatable)")
    parser.add_argument("--steps", type=int, default=800_000)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--attention", type=int, default=0)
    parser.add_argument("--soft", type=float, default=0.0)
    parser.add_argument("--temperature", type=float, default=0.5)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--report-every", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train, held, _ = load_recording(args.recording, args.chunks)
    if held.margins is None:
        parser.error(f"{args.recording} holds chunks recorded without the expert's values")
    standard = make_agent("standard").act_batch(held.obs, held.masks)
    print(f"{args.recording}: {args.chunks} chunks, {len(held):,} held-out decisions", flush=True)
    for path in args.checkpoint:
        print(report(path, load_learned_agent(path).act_batch(held.obs, held.masks), held,
                     standard), flush=True)
    if not args.checkpoint:
        fit(train, held, standard, args)


if __name__ == "__main__":
    main()
