"""Where a network's cards lose by a search's own values, and how surely the search says so.

On the valued decisions of a search-labels recording (``distill.teacher: champion-search``, every
legal card of a play decision valued by the chance to win), the network's regret is the search's
best value less its value of the network's card. The first table splits that regret by its size:
what share of the decisions and of the regret lie above each threshold, and there, how often a
second run of the search (``--again``, another random stream) lays the recording's best card and
how often the network's. The second splits it by the moment of the play: the pone's lead, the
dealer's first card, the rest, and how often the opponent's plays of an earlier count sequence
(which the network's observation shows as a set, out of order) are in the deal there. The third
(for a network) splits it by the network's own certainty, the probability of its card less that of
its second: whether a recording that searched only where the network is unsure would hold most of
what there is to learn.

    PYTHONPATH=. python bench/departures.py RECORDING [--network champion] [--again champion-search]
        [--trained]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.registry import make_agent
from crib_env.observation import MAX_SEQUENCE, SLICES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402
from rollout_gain import best_valued_cards, cards_of, valued_decisions  # noqa: E402

THRESHOLDS = (0.0, 0.005, 0.01, 0.02, 0.05)
MARGIN_SHARES = (0.05, 0.1, 0.2, 0.3, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--network", default="champion")
    parser.add_argument("--again", default="", help="an agent spec asked row by row (a search)")
    parser.add_argument("--trained", action="store_true", help="the training chunks' decisions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    obs, masks, _, values = valued_decisions(args.recording, held_out=not args.trained)
    rows = np.arange(len(obs))
    best = best_valued_cards(masks, values)
    mine = cards_of(args.network, obs, masks)
    regret = values[rows, best] - values[rows, mine]
    again = cards_of(args.again, obs, masks) if args.again else None
    print(f"# {args.recording}: {len(rows):,} {'training' if args.trained else 'held-out'} valued "
          f"decisions; {args.network}'s regret by the recorded search's values "
          f"{regret.mean():.5f} a decision; CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    print("| regret above | decisions | share of the regret |"
          + (f" {args.again} lays the best card | lays {args.network}'s |" if args.again else ""))
    print("|---|---|---|" + ("---|---|" if args.again else ""))
    for t in THRESHOLDS:
        m = regret > t
        line = f"| {t} | {m.mean():.1%} | {regret[m].sum() / regret.sum():.1%} |"
        if again is not None:
            line += f" {np.mean(again[m] == best[m]):.1%} | {np.mean(again[m] == mine[m]):.1%} |"
        print(line)
    laid_opp = obs[:, SLICES["played_opp"]] > 0
    laid_own = obs[:, SLICES["played_own"]] > 0
    in_sequence = obs[:, SLICES["sequence"]].reshape(len(obs), MAX_SEQUENCE, -1).sum(1) > 0
    earlier = (laid_opp & ~in_sequence).any(1)
    laid = laid_opp.sum(1) + laid_own.sum(1)
    departed = regret > 0.01
    print()
    print("| moment | decisions | share of the regret | regret above 0.01 | opponent's plays of "
          "an earlier sequence, there / elsewhere |")
    print("|---|---|---|---|---|")
    for name, m in [("the lead", laid == 0), ("the dealer's first card", laid == 1),
                    ("later", laid >= 2)]:
        print(f"| {name} | {m.mean():.1%} | {regret[m].sum() / regret.sum():.1%} "
              f"| {departed[m].mean():.1%} | {earlier[m & departed].mean():.1%} / "
              f"{earlier[m & ~departed].mean():.1%} |")
    agent = make_agent(args.network, seed=0)
    if hasattr(agent, "logits_batch"):
        print_by_margin(network_margins(agent, obs, masks), regret, departed)


def network_margins(agent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per decision, the probability of the network's card less that of its second choice."""
    logits = torch.as_tensor(agent.logits_batch(obs, masks), dtype=torch.float64)
    logits = logits.masked_fill(torch.as_tensor(masks) <= 0, float("-inf"))
    top2 = torch.softmax(logits, dim=1).topk(2, dim=1).values
    return (top2[:, 0] - top2[:, 1]).numpy()


def print_by_margin(margins: np.ndarray, regret: np.ndarray, departed: np.ndarray) -> None:
    print()
    print("| the network's least certain decisions (by its margin) | share of the regret "
          "| of the decisions with regret above 0.01 |")
    print("|---|---|---|")
    order = np.argsort(margins, kind="stable")
    for share in MARGIN_SHARES:
        least = order[:int(round(share * len(order)))]
        print(f"| {share:.0%} | {regret[least].sum() / regret.sum():.1%} "
              f"| {departed[least].sum() / departed.sum():.1%} |")


if __name__ == "__main__":
    main()
