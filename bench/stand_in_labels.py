"""How far a network standing in for the expert in the rollouts teacher's rollouts moves its values.

The rollouts teacher (``training.algos.rollout_teacher``) values each legal card of the play by
playing the rest of the real deal out; with ``opponent=rival`` the expert lays the opponent's cards
(a Monte Carlo search per card), with ``opponent=PATH`` a network does (one forward pass a step for
all rows). This records the same chunk of games (the network against the expert) three ways and
compares their values decision by decision, centred on each decision's mean over its legal cards
(what the fits learn): the expert itself again with another random stream in every rollout (how
much the expert's values vary by themselves), and the network standing in for it. It prints the
seconds each recording took, how often the best card agrees, the correlation of the centred values
and their mean absolute difference.

    PYTHONPATH=. python bench/stand_in_labels.py [--net PATH] [--stand-in PATH] [--games N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from training import per_row
from training.algos.rollout_teacher import record_rollout_chunk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def _record(teacher: str, games: int, seed: int) -> tuple[dict[str, np.ndarray], float]:
    started = time.perf_counter()
    chunk = record_rollout_chunk(teacher, "expert", seed, 0, games)
    return chunk, time.perf_counter() - started


def _with_other_streams(teacher: str, games: int, seed: int) -> tuple[dict[str, np.ndarray], float]:
    """The chunk recorded with every rollout's copy of the expert given a fresh random stream (the
    real games' copies keep theirs, so the games are the same)."""
    branch = per_row.PerRowAgent.branch

    def reseeded(self: per_row.PerRowAgent, rows: np.ndarray) -> per_row.PerRowAgent:
        twin = branch(self, rows)
        for i, twin_copy in twin.copies.items():
            twin_copy.rng = np.random.default_rng([seed, len(twin.copies), i])
        return twin

    per_row.PerRowAgent.branch = reseeded
    try:
        return _record(teacher, games, seed)
    finally:
        per_row.PerRowAgent.branch = branch


def compare(base: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> dict[str, float]:
    """Agreement of two recordings of the same games on their valued decisions."""
    if not np.array_equal(base["cards"], other["cards"]):
        raise SystemExit("the two recordings played different games")
    valued = ~np.isnan(base["margins"]).all(axis=1)
    a, b = base["margins"][valued], other["margins"][valued]
    best_a = np.nan_to_num(a, nan=-1.0).argmax(axis=1)
    best_b = np.nan_to_num(b, nan=-1.0).argmax(axis=1)
    ca = a - np.nanmean(a, axis=1, keepdims=True)
    cb = b - np.nanmean(b, axis=1, keepdims=True)
    legal = ~np.isnan(ca)
    return {"decisions": int(valued.sum()), "same_best": float((best_a == best_b).mean()),
            "correlation": float(np.corrcoef(ca[legal], cb[legal])[0, 1]),
            "mean_abs_difference": float(np.abs(ca[legal] - cb[legal]).mean()),
            "mean_abs_value": float(np.abs(ca[legal]).mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", default="agents/checkpoints/exit_default_gen3",
                        help="the network whose decisions are valued")
    parser.add_argument("--stand-in", default="agents/checkpoints/distilled",
                        help="the network laying the expert's cards in the rollouts")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    teacher = f"rollouts:net={args.net},opponent="
    base, base_s = _record(teacher + "rival", args.games, args.seed)
    again, again_s = _with_other_streams(teacher + "rival", args.games, args.seed)
    stand_in, stand_in_s = _record(teacher + args.stand_in, args.games, args.seed)
    print(f"# {args.games} games of {args.net} against the expert, seed {args.seed}; "
          f"CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    print("| in the rollouts | seconds | same best card | correlation of centred values "
          "| mean abs difference (mean abs centred value) |")
    print("|---|---|---|---|---|")
    print(f"| the expert | {base_s:.1f} | - | - | - |")
    for name, chunk, seconds in (("the expert, other random streams", again, again_s),
                                 (args.stand_in, stand_in, stand_in_s)):
        c = compare(base, chunk)
        print(f"| {name} | {seconds:.1f} | {c['same_best']:.3f} | {c['correlation']:.3f} | "
              f"{c['mean_abs_difference']:.4f} ({c['mean_abs_value']:.4f}) |")


if __name__ == "__main__":
    main()
