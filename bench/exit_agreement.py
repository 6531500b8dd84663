"""How much of its teacher's search each expert-iteration generation learned.

For each generation's recording of an ``algo: exit`` run (the search's card at every decision with
a choice), every network of the run (the start and each generation's fitted ``best``) is asked
what it would lay from the same observation and mask. The table gives, per recording and network,
the share of decisions on which the network lays the search's card: over all of them, over the
departures (the decisions where the search laid another card than the start network would) and
over the rest. The departures are where a generation can gain on the one before. Every fit
learns from the training chunks only, so the last column, the departures of the held-out chunks
(every ``HELD_OUT_EVERY``-th, the same numbers in every recording), is what no network has seen:
how much of the search a network takes in beyond the decisions it was shown. The regret columns
weigh each decision by what the search says it costs: on the decisions where the search valued
every legal card (the play), its value of its own card minus its value of the network's card, in
points of chance to win, averaged over the decisions of training chunks and of held-out ones.
``--net NAME=PATH`` adds networks fitted elsewhere (a fit on several recordings,
``distill.also_from``); ``--held-out`` reads the held-out chunks alone (quicker: the columns of
trained decisions are then empty).

    PYTHONPATH=. python bench/exit_agreement.py runs/exit/crib_v0-points-game__exit__0__*
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

from agents.learned import load_learned_agent
from agents.registry import make_agent
from training.algos.distill import network_cards
from training.algos.distill_recording import HELD_OUT_EVERY, chunk_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def recording(folder: Path) -> tuple[np.ndarray, ...]:
    """Observations, masks, the search's cards and its values of every card (NaN where it gave
    none) of every chunk of a generation's recording, and whether each decision's chunk is held
    out of the fits."""
    files = chunk_files(folder)
    if not files:
        raise SystemExit(f"no recorded chunks in {folder}")
    chunks = {number: np.load(path) for number, path in files.items()}
    held = [np.full(len(chunk["cards"]), number % HELD_OUT_EVERY == 0)
            for number, chunk in chunks.items()]
    return (*(np.concatenate([chunk[key] for chunk in chunks.values()])  # type: ignore[return-value]
              for key in ("obs", "masks", "cards", "margins")), np.concatenate(held))


def regret(picked: np.ndarray, cards: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per decision, the search's value of its card minus its value of ``picked``, in points of
    chance to win (NaN where the search gave no values)."""
    rows = np.arange(len(cards))
    return 100.0 * (values[rows, cards] - values[rows, picked])


def mean(values: np.ndarray) -> float:
    """The mean, NaN for no values (the trained decisions under ``--held-out``)."""
    return float(np.mean(values)) if values.size else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the exit run's folder (holding gen_1, gen_2, ...)")
    parser.add_argument("--start", default="champion", help="the network generation 1 started from")
    parser.add_argument("--net", action="append", default=[], metavar="NAME=PATH",
                        help="another network to compare (repeatable)")
    parser.add_argument("--held-out", action="store_true",
                        help="only the held-out chunks (the networks' unseen decisions)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gens = sorted((p for p in args.run.glob("gen_*") if (p / "recording").is_dir()),
                  key=lambda p: int(p.name.split("_")[1]))
    if not gens:
        raise SystemExit(f"{args.run} holds no generation with a recording")
    nets = {f"start ({args.start})": make_agent(args.start)}
    for gen in gens:
        best = sorted(gen.glob("*/best"))
        if best:
            nets[gen.name] = load_learned_agent(best[0])
    for item in args.net:
        name, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--net {item!r}: expected NAME=PATH")
        nets[name] = load_learned_agent(path)
    print(f"{cpu_model()}, load {os.getloadavg()[0]:.2f}")
    print(f"{'recording':<10}{'decisions':>10}{'departures':>11}  {'network':<18}"
          f"{'agrees, all':>12}{'on departures':>15}{'on the rest':>13}"
          f"{'held-out departures':>21}{'regret: trained':>17}{'held out':>10}")
    for gen in gens:
        obs, masks, cards, values, held = recording(gen / "recording")
        keep = (masks.sum(axis=1) > 1) & (held | (not args.held_out))
        obs, masks, cards, values, held = (obs[keep], masks[keep], cards[keep], values[keep],
                                           held[keep])
        valued = ~np.isnan(values[np.arange(len(cards)), cards])
        start = None
        for name, agent in nets.items():
            picked = network_cards(agent, obs, masks)
            if start is None:
                start = picked
            away = start != cards
            unseen = away & held
            lost = regret(picked, cards, values)
            print(f"{gen.name:<10}{cards.size:>10}{int(away.sum()):>11}  {name:<18}"
                  f"{np.mean(picked == cards):>12.3f}{np.mean(picked[away] == cards[away]):>15.3f}"
                  f"{np.mean(picked[~away] == cards[~away]):>13.3f}"
                  f"{np.mean(picked[unseen] == cards[unseen]):>14.3f} of {int(unseen.sum()):>4}"
                  f"{mean(lost[valued & ~held]):>17.3f}{mean(lost[valued & held]):>10.3f}")


if __name__ == "__main__":
    main()
