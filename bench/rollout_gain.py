"""What a network gains on a rollouts recording's held-out decisions (training.algos.rollout_teacher).

A rollouts recording holds, for every play decision of its network with a choice, the chance to
win after each legal card with the rest of the real deal played out. On the held-out chunks
(every ``HELD_OUT_EVERY``-th, never learned from), each network given here lays its own card from
the recorded observation; the table gives how often that differs from the recorded network's card
and the mean value of its card minus the value of the recorded card, with its standard error,
and that gain less the first network's, with the standard error of the paired difference (two
networks that lay the same card on most decisions differ far less than their errors apart say).
The recorded deal is the real one, so this mean is an unbiased estimate of what laying the
network's card instead gains per decision (in chance to win) when the rest of the deal is played
as the rollouts play it: one step of policy improvement, measured on deals no fit has seen.

    PYTHONPATH=. python bench/rollout_gain.py RECORDING NETWORK [NETWORK ...] [--need N] [--rows N]
        [--trained]

``--need N`` keeps the decisions taken with either player within N points of the target alone
(``agents.networks.near_the_end``): the end of the game. A name that is not a checkpoint is an
agent spec (``champion-search:sims=64``): it is asked row by row, in the recorded order, so an agent
that remembers the deal (the search reads the opponent's plays) sees the player's successive play
decisions; ``--rows N`` keeps the first N decisions, for agents too slow for all of them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.networks import near_the_end
from agents.registry import make_agent
from training.algos.distill import network_cards
from training.algos.distill_recording import HELD_OUT_EVERY, chunk_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def near_end_rows(obs: np.ndarray, need: int) -> np.ndarray:
    """Which recorded observations have either player within ``need`` points of the target (the
    test a pool's end-game members are chosen by)."""
    return near_the_end(torch.from_numpy(obs), need)[:, 0].numpy()


def valued_decisions(folder: Path, held_out: bool = True
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observations, masks, recorded cards and values of the valued decisions of the held-out
    chunks (or, with ``held_out`` false, of the training chunks)."""
    parts = []
    for number, path in chunk_files(folder).items():
        if (number % HELD_OUT_EVERY == 0) != held_out:
            continue
        with np.load(path) as data:
            valued = ~np.isnan(data["margins"]).all(axis=1)
            parts.append([data[k][valued] for k in ("obs", "masks", "cards", "margins")])
    if not parts:
        raise SystemExit(f"{folder}: no {'held-out' if held_out else 'training'} chunk "
                         f"(held out: chunk 0, {HELD_OUT_EVERY}, ...)")
    obs, masks, cards, values = (np.concatenate(column) for column in zip(*parts, strict=True))
    return obs, masks, cards.astype(np.int64), values


def decisions(folders: list[Path], held_out: bool = True, near: int = 0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``valued_decisions`` of every recording in ``folders`` together (each keeps its own
    held-out chunks); with ``near``, only those with either player within that many points of
    the target (``near_end_rows``)."""
    obs, masks, cards, values = (np.concatenate(column) for column in zip(
        *(valued_decisions(folder, held_out) for folder in folders), strict=True))
    if near:
        keep = near_end_rows(obs, near)
        obs, masks, cards, values = obs[keep], masks[keep], cards[keep], values[keep]
    return obs, masks, cards, values


def best_valued_cards(masks: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per decision, the legal card the recording values most (its teacher's best card)."""
    return np.nanargmax(np.where(masks > 0, values, np.nan), axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("networks", nargs="+",
                        help="checkpoint paths (or champion), or agent specs")
    parser.add_argument("--need", type=int, default=0,
                        help="only decisions with either player within this many points (0: all)")
    parser.add_argument("--rows", type=int, default=0, help="only the first N decisions (0: all)")
    parser.add_argument("--trained", action="store_true",
                        help="the training chunks' decisions instead of the held-out ones (what a "
                             "fit of this recording was shown: against the held-out figure, how "
                             "much of its gain it carries to decisions it has not seen)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    obs, masks, cards, values = decisions([args.recording], held_out=not args.trained,
                                          near=args.need)
    if args.rows:
        obs, masks, cards, values = obs[:args.rows], masks[:args.rows], cards[:args.rows], \
            values[:args.rows]
    rows = np.arange(len(cards))
    recorded = values[rows, cards]
    where = f" within {args.need} points of the target" if args.need else ""
    kind = "training" if args.trained else "held-out"
    print(f"# {args.recording}: {len(cards):,} {kind} valued decisions{where}; CPU {cpu_model()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"| network | cards changed | gain per decision (chance to win) | less {args.networks[0]}'s |")
    print("|---|---|---|---|")
    first = None
    for name in args.networks:
        chosen = cards_of(name, obs, masks)
        gain = values[rows, chosen] - recorded
        first = gain if first is None else first
        print(f"| {name} | {np.mean(chosen != cards):.1%} | {mean_and_error(gain)} "
              f"| {mean_and_error(gain - first)} |")


def cards_of(name: str, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The card ``name`` (any agent spec, a checkpoint included) lays at each decision: a
    network's highest logit in batches, any other agent's ``act`` row by row in the recorded
    order."""
    agent = make_agent(name, seed=0)
    if hasattr(agent, "logits_batch"):
        return network_cards(agent, obs, masks)
    return np.array([agent.act(o, m) for o, m in zip(obs, masks, strict=True)], dtype=np.int64)


def mean_and_error(x: np.ndarray) -> str:
    """``+mean (± standard error)`` of per-decision values."""
    return f"{x.mean():+.5f} (± {x.std(ddof=1) / np.sqrt(len(x)):.5f})"


if __name__ == "__main__":
    main()
