"""Can a network learn a search's valued decisions? Fit it on them alone and watch both sides.

From a recording whose teacher valued some decisions (``champion-search`` with ``play_need``:
the end of the game), the valued decisions of the training chunks are fitted by cross-entropy
against the teacher's card (Adam, minibatches of 256), starting from a checkpoint (with
``--need``, widened by ``agents.networks.widen_into``). After each epoch: how often the network
lays the teacher's card and its regret by the teacher's values (the best value less that of its
card), on the training decisions and on the held-out chunks' (``rollout_gain.valued_decisions``). A learner
that the labels can teach rises on both; one that memorises rises on the first alone.

With ``--anchor NET --departures TAU`` only the departures are learned by cross-entropy: the
decisions where the teacher values the anchor's card at least TAU (chance to win) below its best
card, the search's confident departures from it; every other decision learns ``--anchor-weight``
times the KL divergence from the anchor (``training.algos.distill.anchor_divergences``; weight 0:
they are left out). A further column gives how often the network lays the teacher's best card on
the training departures: what it could not learn there, it cannot carry to unseen decisions.

    PYTHONPATH=. python bench/label_fit.py RECORDING --start NET --need 31 --lr 3e-4 --epochs 6
    PYTHONPATH=. python bench/label_fit.py RECORDING --start NET --anchor champion --departures 0.01
        --epochs 30 --save OUT

Several recordings are fitted together, each with its own held-out chunks; ``--near N`` keeps
only the decisions with either player within N points of the target, training and held out (a fit
for a pool's end-game member, ``training.pool``'s third weight).

With ``--reading DIR --reading-weight W`` the network also learns, on a second head over its
context, which cards the opponent holds: at each step a minibatch of the same size from the
(observation, legal cards, opponent's held cards) rows of a ``training.hand_reader`` recording,
W times the head's binary log-loss per unseen card added to the loss. The hidden cards of every
game played teach what the opponent's plays say about its hand, far more rows than the search's
labels; the head's held-out log-loss is a column (``python -m training.hand_reader fit`` gives
a separate reader's and the uniform reader's on the same recording). ``--freeze`` fits the head
alone over the starting network's context, a probe of what that context already says about the
opponent's hand (the policy's columns then stay at the start's).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.checkpoint import load_network, save_checkpoint
from agents.files import check_output_folder
from agents.networks import build_network, network_input_batch, widen_into, with_reader
from agents.reader import load_reader_state, log_loss, uniform_probabilities, unseen_cards
from agents.registry import network_path
from crib_env.cards import N_CARDS
from crib_env.symmetry import N_RENAMINGS, rename_suits
from training.algos.distill import anchor_divergences, legal_logits, legal_logits_in_blocks
from training.hand_reader import load as load_reading

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402
from rollout_gain import best_valued_cards, decisions  # noqa: E402


def valued(obs: np.ndarray, masks: np.ndarray, cards: np.ndarray, values: np.ndarray
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray]:
    """Input rows, masks, cards and values of valued decisions (``valued_decisions``)."""
    return (torch.from_numpy(network_input_batch(obs, masks, True)),
            torch.from_numpy(masks.astype(np.int8)), torch.from_numpy(cards), values)


class Reading:
    """A head over a ``CardNet``'s context that says which cards the opponent holds, fitted on a
    hand-reader recording's rows beside the policy's labels (see the module)."""

    def __init__(self, net: nn.Module, folder: Path, seed: int) -> None:
        if not hasattr(net, "context"):
            raise SystemExit("--reading: the network has no context to read from (arch: cards)")
        self.net = net
        self.rows = self._inputs(folder, held_out=False)
        self.held_out = self._inputs(folder, held_out=True)
        # a correction to the uniform reader's logits, zero at the start (as agents.reader's
        # HandReader): the context need only carry what the plays say beyond which cards are unseen
        width = net.context[-2].out_features
        self.head = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, N_CARDS))
        nn.init.zeros_(self.head[-1].weight)
        nn.init.zeros_(self.head[-1].bias)
        self.rng = np.random.default_rng(seed)
        self.context: torch.Tensor | None = None
        net.context.register_forward_hook(self._keep)

    @staticmethod
    def _inputs(folder: Path, held_out: bool) -> tuple[torch.Tensor, ...]:
        obs, held, masks = load_reading(folder, held_out)
        if masks is None:
            raise SystemExit(f"--reading {folder}: recorded without the legal cards; record it "
                             f"again with python -m training.hand_reader record")
        return (torch.from_numpy(obs), torch.from_numpy(network_input_batch(obs, masks, True)),
                torch.from_numpy(held))

    def _keep(self, module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
        self.context = output

    def _chances(self, obs: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        self.net(x)
        prior = uniform_probabilities(obs).clamp(1e-4, 1 - 1e-4)
        return torch.sigmoid(torch.log(prior) - torch.log1p(-prior) + self.head(self.context))

    def loss(self, size: int) -> torch.Tensor:
        """The head's log-loss on ``size`` training rows drawn at random."""
        obs, x, held = (t[torch.from_numpy(self.rng.integers(len(self.rows[0]), size=size))]
                        for t in self.rows)
        return log_loss(self._chances(obs, x), held, unseen_cards(obs))

    def held_out_log_loss(self) -> float:
        obs, x, held = self.held_out
        with torch.no_grad():
            chances = torch.cat([self._chances(obs[i:i + 4096], x[i:i + 4096])
                                 for i in range(0, len(x), 4096)])
        return float(log_loss(chances, held, unseen_cards(obs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recordings", type=Path, nargs="+",
                        help="one or more recordings, their valued decisions fitted together")
    parser.add_argument("--near", type=int, default=0,
                        help="only the decisions with either player within this many points of "
                             "the target, training and held out (0: all): a pool's end-game member")
    parser.add_argument("--start", required=True, help="the checkpoint the fit starts from")
    parser.add_argument("--need", type=int, default=0, help="policy.need of the fitted network")
    parser.add_argument("--reader", type=Path, help="policy.reader of the fitted network: a hand "
                        "reader's folder (python -m training.hand_reader fit), frozen")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anchor", help="a network (or champion): with --departures, the card "
                                         "the teacher departs from and the KL target elsewhere")
    parser.add_argument("--departures", type=float, default=0.0,
                        help="learn the teacher's card only where it values the anchor's this "
                             "far below its best (chance to win; 0: every decision, no anchor)")
    parser.add_argument("--anchor-weight", type=float, default=4.0)
    parser.add_argument("--rename-suits", action="store_true",
                        help="with --departures: each departure learned through a random suit "
                             "renaming (crib_env.symmetry), drawn anew every pass")
    parser.add_argument("--save", type=Path, help="write the fitted network here (a checkpoint)")
    parser.add_argument("--reading", type=Path, help="a training.hand_reader recording (with "
                                                     "legal cards): learn to read the opponent too")
    parser.add_argument("--reading-weight", type=float, default=1.0)
    parser.add_argument("--freeze", action="store_true",
                        help="with --reading: fit the reading head alone, the network frozen")
    args = parser.parse_args()
    if not 0 <= args.near <= 120:
        parser.error(f"--near: got {args.near}; points to the target, 1 to 120 (0: every decision)")
    if args.freeze and not args.reading:
        parser.error("--freeze goes with --reading")
    if (args.anchor is None) != (args.departures == 0):
        parser.error("--anchor and --departures go together")
    if args.rename_suits and not args.anchor:
        parser.error("--rename-suits goes with --anchor and --departures")
    if args.save:
        try:
            check_output_folder(args.save, "--save")
        except ValueError as err:
            parser.error(str(err))
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    # the start, the reader and the reading rows are checked before the recording is read
    try:
        start, meta = load_network(network_path(args.start))
    except (OSError, ValueError) as err:
        parser.error(f"--start: {err}")
    try:
        reader_state = load_reader_state(args.reader) if args.reader else {}
    except ValueError as err:
        parser.error(f"--reader: {err}")
    kwargs = {**meta["arch_kwargs"], **({"need": args.need} if args.need else {}),
              **({"reader": True} if args.reader else {})}
    try:
        net = build_network(meta["arch"], **kwargs)
    except ValueError as err:
        parser.error(f"--start {args.start} with these options: {err}")
    widen_into(net, with_reader(start.state_dict(), reader_state))
    reading = Reading(net, args.reading, args.seed) if args.reading else None
    obs, *training = decisions(args.recordings, held_out=False, near=args.near)
    sides = {"training": valued(obs, *training),
             "held out": valued(*decisions(args.recordings, held_out=True, near=args.near))}
    if args.freeze:  # else each weight learns as the network made it (a hand reader frozen)
        net.requires_grad_(False)
    optimizer = torch.optim.Adam([*(() if args.freeze else net.parameters()),
                                  *(reading.head.parameters() if reading else ())], lr=args.lr)

    def measure(x: torch.Tensor, masks: torch.Tensor, cards: torch.Tensor,
                values: np.ndarray) -> str:
        chosen = legal_logits_in_blocks(net, x, masks).argmax(1).numpy()
        rows = np.arange(len(chosen))
        regret = np.nanmax(values, axis=1) - values[rows, chosen]
        return f"{np.mean(chosen == cards.numpy()):.1%} | {regret.mean():.5f}"

    x, masks, cards, values = sides["training"]
    renaming_stream = np.random.default_rng(args.seed)
    anchor_logits = departed = best = None
    if args.anchor:
        anchor = load_network(network_path(args.anchor))[0].requires_grad_(False)
        # a copy outside inference mode: the KL's backward keeps its target
        anchor_logits = legal_logits_in_blocks(anchor, x, masks).clone()
        best = torch.from_numpy(best_valued_cards(masks.numpy(), values))
        rows = np.arange(len(best))
        gap = values[rows, best.numpy()] - values[rows, anchor_logits.argmax(1).numpy()]
        departed = torch.from_numpy(gap >= args.departures)
    learned = f"departures of {args.anchor} by {args.departures}" if args.anchor else "every card"
    where = f" within {args.near} points of the target" if args.near else ""
    print(f"# {' + '.join(map(str, args.recordings))}: {len(cards):,} valued training decisions{where}, "
          f"{len(sides['held out'][2]):,} held out; from {args.start}, need {args.need}, "
          + (f"reader {args.reader}, " if args.reader else "")
          + f"lr {args.lr}, learning {learned}"
          + (f" ({int(departed.sum()):,}), KL weight {args.anchor_weight} elsewhere"
             if departed is not None else "")
          + (", suits renamed" if args.rename_suits else "")
          + (f", reading {args.reading} ({len(reading.rows[0]):,} rows) at weight "
             f"{args.reading_weight}" + (", the network frozen" if args.freeze else "")
             if reading else "")
          + f"; CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    extra = " training departures: teacher's best card |" if departed is not None else ""
    extra += " reading: held-out log-loss |" if reading else ""
    print(f"| epoch | training: teacher's card | training regret | held out: teacher's card "
          f"| held-out regret |{extra}")
    print("|---|---|---|---|---|" + "---|" * extra.count("|"))

    def row(epoch: int) -> str:
        line = f"| {epoch} | {measure(*sides['training'])} | {measure(*sides['held out'])} |"
        if departed is not None:
            chosen = legal_logits_in_blocks(net, x[departed], masks[departed]).argmax(1)
            line += f" {float((chosen == best[departed]).float().mean()):.1%} |"
        if reading:
            line += f" {reading.held_out_log_loss():.4f} |"
        return line

    def renamed_departures(rows: torch.Tensor, inputs: torch.Tensor, legal: torch.Tensor,
                           targets: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The minibatch with its departures seen through random suit renamings (the other rows
        keep the anchor's logits of their own view)."""
        picked = departed[rows].numpy()
        if not picked.any():
            return inputs, legal, targets
        chosen = rows.numpy()[picked]
        renamings = renaming_stream.integers(N_RENAMINGS, size=len(chosen))
        new_obs, new_masks, new_best, _ = rename_suits(renamings, obs[chosen],
                                                       masks.numpy()[chosen],
                                                       best.numpy()[chosen])
        inputs, legal, targets = inputs.clone(), legal.clone(), targets.clone()
        inputs[picked] = torch.from_numpy(network_input_batch(new_obs, new_masks, True))
        legal[picked] = torch.from_numpy(new_masks.astype(np.int8))
        targets[picked] = torch.from_numpy(new_best)
        return inputs, legal, targets

    def policy_loss(rows: torch.Tensor) -> torch.Tensor:
        """The minibatch ``rows``' loss: the teacher's card, or its departures and the KL."""
        inputs, legal, targets = x[rows], masks[rows], None if best is None else best[rows]
        if args.rename_suits:
            inputs, legal, targets = renamed_departures(rows, inputs, legal, targets)
        logits = legal_logits(net, inputs, legal)
        if departed is None:
            return nn.functional.cross_entropy(logits, cards[rows])
        losses = torch.where(departed[rows],
                             nn.functional.cross_entropy(logits, targets, reduction="none"),
                             args.anchor_weight * anchor_divergences(logits, anchor_logits[rows]))
        kept = departed[rows] | (args.anchor_weight > 0)
        return losses[kept].sum() / max(1, int(kept.sum()))

    print(row(0), flush=True)
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(cards))
        for first in range(0, len(cards), 256):
            rows = order[first:first + 256]
            if args.freeze:  # the head alone: the policy's loss would move nothing
                loss = reading.loss(len(rows))
            else:
                loss = policy_loss(rows)
                if reading:
                    loss = loss + args.reading_weight * reading.loss(len(rows))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(row(epoch), flush=True)
    if args.save:
        save_checkpoint(args.save, net, meta["arch"], kwargs,
                        {"fitted_by": "bench/label_fit.py",
                         "recording": " + ".join(map(str, args.recordings)), "near": args.near,
                         "start": args.start, "epochs": args.epochs})


if __name__ == "__main__":
    main()
