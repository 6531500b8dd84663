"""How well each network predicts an opponent's cards of the play, from that opponent's own
observation: what ``champion-search`` needs of its network, which answers for the opponent in its
rollouts and weighs the sampled deals by the opponent's plays.

The opponent (the expert by default) plays ``--games`` games against ``--against`` (its decisions
recorded as a distillation records a teacher's); on its play decisions with two or more legal
ranks, each network's legal-card softmax (temperature 1, as the search reads it) is summed by rank
(suits never matter in the play). The table gives how often the network's likeliest rank is the
opponent's and the mean probability and log-probability it gives the opponent's rank.

    PYTHONPATH=. python bench/opponent_model_fit.py NETWORK [NETWORK ...] [--games 300]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.learned import legal_softmax, load_learned_agent
from agents.registry import network_path
from crib_env.cards import N_RANKS, N_SUITS
from crib_env.game import Phase
from crib_env.observation import phase_column
from training.algos.distill_recording import record_chunk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def by_rank(per_card: np.ndarray, reduce=np.sum) -> np.ndarray:
    """(rows, 52) card values to (rows, 13) rank values (card ids are ``suit * 13 + rank``)."""
    return reduce(per_card.reshape(len(per_card), N_SUITS, N_RANKS), axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("networks", nargs="+", help="checkpoint paths (or champion)")
    parser.add_argument("--opponent", default="expert", help="the agent whose cards are predicted")
    parser.add_argument("--against", default="champion", help="who it plays")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=123)
    args = parser.parse_args()
    torch.set_num_threads(1)
    chunk = record_chunk(args.opponent, args.against, args.seed, 0, args.games)
    obs, masks, cards = chunk["obs"], chunk["masks"].astype(np.int64), chunk["cards"]
    playing = obs[:, phase_column(Phase.PLAY)] > 0.5
    choice = playing & (by_rank(masks, np.max).sum(axis=1) > 1)
    obs, masks, ranks = obs[choice], masks[choice], cards[choice].astype(np.int64) % N_RANKS
    print(f"# {args.opponent}'s {len(ranks):,} play decisions with two or more legal ranks, "
          f"{args.games} games against {args.against} (seed {args.seed}); CPU {cpu_model()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"| network | likeliest rank is {args.opponent}'s | mean probability of its rank "
          f"| mean log-probability |")
    print("|---|---|---|---|")
    for name in args.networks:
        agent = load_learned_agent(network_path(name))
        p = by_rank(legal_softmax(agent.logits_batch(obs, masks), masks))
        theirs = p[np.arange(len(ranks)), ranks]
        print(f"| {name} | {np.mean(p.argmax(axis=1) == ranks):.1%} | {theirs.mean():.3f} "
              f"| {np.log(np.maximum(theirs, 1e-12)).mean():.3f} |")


if __name__ == "__main__":
    main()
