"""Scripted ladder: play one agent against another and print win rate with a 95% interval.

    .venv/bin/python bench/bench_ladder.py standard random --games 2000
    .venv/bin/python bench/bench_ladder.py expert standard --games 1000 --workers 2

Uses ``training.evaluate.evaluate`` when it is importable; otherwise a minimal loop over
``crib_env.game.Game`` (same protocol: ``encode(game, game.to_move)`` and ``game.legal_mask()``),
alternating the first dealer and the seats, with a Wilson 95% interval. Also prints the agent's
average points per deal by role (pegging, hand, crib) next to the published expert figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import make_agent  # noqa: E402
from crib_env.game import Game  # noqa: E402
from crib_env.observation import encode  # noqa: E402

#: published expert figures, points per deal (docs/RULES.md section 13)
REFERENCE = {"pone": {"pegging": 2.0, "hand": 8.1, "crib": 0.0},
             "dealer": {"pegging": 3.5, "hand": 8.0, "crib": 4.7}}


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def play_game(agents: list, seed: int, first_dealer: int, target: int = 121) -> Game:
    """One game: ``agents[p]`` plays seat p; returns the finished Game (records per deal)."""
    game = Game(target=target, seed=seed, first_dealer=first_dealer)
    for agent in agents:
        agent.reset()
    while not game.is_over:
        player = game.to_move
        game.step(agents[player].act(encode(game, player), game.legal_mask()))
    return game


def _play_range(spec_a: str, spec_b: str, seed: int, start: int, stop: int) -> list[dict]:
    agent = make_agent(spec_a, seed=seed * 1_000_003 + start)
    opponent = make_agent(spec_b, seed=seed * 1_000_003 + start + 500_000)
    results = []
    for i in range(start, stop):
        seat = i % 2  # the agent's seat alternates ...
        first_dealer = (i // 2) % 2  # ... and so does the first dealer, in every seat
        seats = [agent, opponent] if seat == 0 else [opponent, agent]
        game = play_game(seats, seed=seed * 1_000_003 + i, first_dealer=first_dealer)
        role = {"pone": np.zeros(3), "dealer": np.zeros(3)}
        deals = {"pone": 0, "dealer": 0}
        for record in game.records:
            if not record.completed:
                continue
            key = "dealer" if record.dealer == seat else "pone"
            deals[key] += 1
            role[key] += (record.pegging[seat], record.hand[seat],
                          record.crib + record.heels if key == "dealer" else 0)
        results.append({"win": game.winner == seat,
                        "margin": game.scores[seat] - game.scores[1 - seat],
                        "role": role, "deals": deals})
    return results


def run(spec_a: str, spec_b: str, games: int, seed: int, workers: int) -> dict:
    """Play the games, with ``training.evaluate.evaluate`` when importable."""
    try:
        from training.evaluate import evaluate
    except ImportError:
        return run_minimal(spec_a, spec_b, games, seed, workers)
    report = evaluate(spec_a, spec_b, games=games, seed=seed, workers=workers, progress=False)
    per_deal = {role: {k: report.per_deal["agent"][role][k] for k in ("pegging", "hand")}
                for role in ("pone", "dealer")}
    for role in ("pone", "dealer"):
        per_deal[role]["crib"] = (report.per_deal["agent"][role]["crib"]
                                  + report.per_deal["agent"][role]["heels"])
    return {"agent": spec_a, "opponent": spec_b, "games": games, "wins": report.wins,
            "win_rate": report.win_rate, "win_rate_ci95": tuple(report.win_rate_ci95),
            "points_per_game": report.points_per_game,
            "points_per_game_ci95": tuple(report.points_per_game_ci95),
            "per_deal": per_deal, "seconds": report.seconds, "evaluator": "training.evaluate"}


def run_minimal(spec_a: str, spec_b: str, games: int, seed: int, workers: int) -> dict:
    """The fallback loop over ``crib_env.game.Game`` (see the module docstring)."""
    chunks = [(spec_a, spec_b, seed, s, min(s + max(games // (4 * workers), 1), games))
              for s in range(0, games, max(games // (4 * workers), 1))]
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_play_range, *zip(*chunks, strict=True)))
    else:
        parts = [_play_range(*c) for c in chunks]
    results = [r for part in parts for r in part]
    seconds = time.perf_counter() - start
    wins = sum(r["win"] for r in results)
    margins = np.array([r["margin"] for r in results], dtype=float)
    per_deal = {}
    for key in ("pone", "dealer"):
        n = sum(r["deals"][key] for r in results)
        total = sum(r["role"][key] for r in results)
        per_deal[key] = dict(zip(("pegging", "hand", "crib"), (total / max(n, 1)).tolist(),
                                 strict=True))
    return {"agent": spec_a, "opponent": spec_b, "games": games, "wins": wins,
            "win_rate": wins / games, "win_rate_ci95": wilson(wins, games),
            "points_per_game": float(margins.mean()),
            "points_per_game_ci95": (float(margins.mean() - 1.96 * margins.std(ddof=1)
                                           / math.sqrt(games)),
                                     float(margins.mean() + 1.96 * margins.std(ddof=1)
                                           / math.sqrt(games))),
            "per_deal": per_deal, "seconds": seconds, "evaluator": "bench minimal loop"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent")
    parser.add_argument("opponent")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    report = run(args.agent, args.opponent, args.games, args.seed, args.workers)
    lo, hi = report["win_rate_ci95"]
    plo, phi = report["points_per_game_ci95"]
    print(f"{report['agent']} vs {report['opponent']}: {report['games']} games, "
          f"seed {args.seed}, {report['seconds']:.0f} s ({args.workers} worker(s), "
          f"{report['evaluator']})")
    print(f"  win rate {report['win_rate']:.3f}  95% CI [{lo:.3f}, {hi:.3f}]")
    print(f"  points per game {report['points_per_game']:+.2f}  95% CI [{plo:+.2f}, {phi:+.2f}]")
    print(f"  {report['agent']} points per deal (reference: published expert figures)")
    for key in ("pone", "dealer"):
        got, ref = report["per_deal"][key], REFERENCE[key]
        parts = ", ".join(f"{k} {got[k]:.2f} ({ref[k]:.1f})" for k in ("pegging", "hand", "crib"))
        # crib includes the dealer's heels
        print(f"    {key:6s}: {parts}, total {sum(got.values()):.2f} ({sum(ref.values()):.1f})")


if __name__ == "__main__":
    main()
