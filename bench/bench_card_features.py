"""Benchmark: card features per decision, one row at a time (``card_features``, Python) against a
batch (``card_features_batch``, compiled), on decisions from random games of the compiled core.

Decisions are split by kind because they cost very differently: a discard weighs every kept four
against 45 or 46 starters, a play step only a few candidate lines. ``mixed`` is the natural mix of
whole random games (4 discard steps per deal, the rest play steps). Every figure is the best of
``--repeats`` passes; the batch is also checked equal to the row-by-row result.

Run: ``.venv/bin/python bench/bench_card_features.py [--batch 512] [--rows 512] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from agents.card_features import card_features  # noqa: E402
from agents.card_features_kernels import card_features_batch  # noqa: E402
from crib_env.fast import P_DISCARD, P_PLAY, GameBatch  # noqa: E402


def decisions(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At least ``n`` (observation, mask, phase) decisions of the player to move in random games."""
    games = GameBatch(64).reset(seed=seed)
    obs, masks, phases = [], [], []
    while sum(len(m) for m in masks) < n:
        mask = games.legal_masks()
        live = mask.any(axis=1)
        obs.append(games.observe(games.to_move)[live])
        masks.append(mask[live])
        phases.append(games.phase[live].copy())
        games.step(games.random_actions())
        if games.over.all():
            seed += games.n
            games.reset(seed=seed)
    return np.concatenate(obs), np.concatenate(masks), np.concatenate(phases)


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=512, help="rows per card_features_batch call")
    parser.add_argument("--rows", type=int, default=512, help="decisions timed one at a time")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    obs, masks, phases = decisions(20 * args.batch)
    card_features_batch(obs[:1], masks[:1])  # compile or load the kernels outside the timing
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, batch k={args.batch}, best of {args.repeats}")
    print(f"{'decisions':>10} {'one-row /s':>12} {'batch /s':>12} {'speed-up':>9}  equal")
    mixed = np.random.default_rng(0).permutation(len(obs))  # any rows, not just the first steps
    for label, rows in (("mixed", mixed),
                        ("discard", np.flatnonzero(phases == P_DISCARD)),
                        ("play", np.flatnonzero(phases == P_PLAY))):
        o, m = obs[rows[:args.batch]], masks[rows[:args.batch]]
        o1, m1 = o[:args.rows], m[:args.rows]
        single = best_of(args.repeats, lambda o1=o1, m1=m1: [
            card_features(x, y) for x, y in zip(o1, m1, strict=True)])
        batch = best_of(args.repeats, lambda o=o, m=m: card_features_batch(o, m))
        equal = bool((card_features_batch(o, m)
                      == np.stack([card_features(x, y) for x, y in zip(o, m, strict=True)])).all())
        one_rate, batch_rate = len(o1) / single, len(o) / batch
        print(f"{label:>10} {one_rate:>12,.0f} {batch_rate:>12,.0f} {batch_rate / one_rate:>8.0f}x  "
              f"{equal}")


if __name__ == "__main__":
    main()
