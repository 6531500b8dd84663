"""Round robin between agents: ``crib tournament``.

Every pair of agents plays ``games`` games through ``training.evaluate.evaluate`` (seats and first
deal alternating, each pairing with its own seed derived from the tournament's). The result holds
the win matrix, Bradley-Terry ratings on the Elo scale with 95% intervals, and draws a heatmap PNG;
``crib tournament`` and its rich tables are the command line's (``crib_cli.tournament``).

Ratings: the Bradley-Terry model says agent i beats agent j with probability
``p_i / (p_i + p_j)``; the strengths are fitted by maximum likelihood (Hunter's MM iteration) and
reported as ``400 * log10(p_i)``, so a 200-point gap means about 76% wins, as in Elo, and centred
so the field's mean is 0. Each pairing gets ``PRIOR_GAMES`` virtual games split evenly, which keeps
the fit finite when one agent wins every game (greedy against random). The 95% intervals come from
the Fisher information at the fit (normal approximation on the log-strength scale).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.files import save_figure

from .evaluate import EvaluationReport, build_agent, derive_seed, evaluate, process_pool
from .stats import Z95

PRIOR_GAMES = 1.0  # virtual games per pairing, half won by each side
ELO_SCALE = 400.0 / math.log(10.0)  # natural-log strength -> Elo points


def bradley_terry(wins: np.ndarray, prior: float = PRIOR_GAMES, iterations: int = 10_000,
                  tolerance: float = 1e-10) -> np.ndarray:
    """Elo-scale Bradley-Terry ratings (mean 0) from ``wins[i, j]`` = games i won against j.

    Pairs that never met (``wins[i, j] + wins[j, i] == 0``) get no prior games; every agent must be
    connected to the others through games played.
    """
    wins = np.asarray(wins, dtype=float)
    k = wins.shape[0]
    if wins.shape != (k, k) or k < 2:
        raise ValueError(f"wins must be a square matrix of at least 2 agents, got {wins.shape}")
    played = wins + wins.T
    met = played > 0
    np.fill_diagonal(met, False)
    w = wins + np.where(met, prior / 2, 0.0)
    n = played + np.where(met, prior, 0.0)
    np.fill_diagonal(n, 0.0)
    total_wins = w.sum(axis=1) - np.diag(w)
    if np.any(n.sum(axis=1) == 0):
        raise ValueError("every agent must have played at least one game")
    strength = np.ones(k)
    for _ in range(iterations):
        denom = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = total_wins / denom
        new /= math.exp(np.mean(np.log(new)))  # fix the scale: geometric mean 1
        done = np.max(np.abs(new - strength)) < tolerance
        strength = new
        if done:
            break
    ratings = ELO_SCALE * np.log(strength)
    return ratings - ratings.mean()


def rating_intervals(wins: np.ndarray, prior: float = PRIOR_GAMES) -> np.ndarray:
    """``(k, 2)`` array of 95% intervals of the ``bradley_terry`` ratings, from the Fisher
    information at the fit (ratings relative to the field mean, as reported).

    The information matrix of the log-strengths is the graph Laplacian with edge weights
    ``n_ij p_ij (1 - p_ij)``; its pseudo-inverse is the covariance of the mean-centred ratings. A
    whitewash carries little information (p near 1), so its interval is wide: the data say the
    loser is far below, not how far.
    """
    wins = np.asarray(wins, dtype=float)
    ratings = bradley_terry(wins, prior)
    played = wins + wins.T
    met = played > 0
    np.fill_diagonal(met, False)
    n = played + np.where(met, prior, 0.0)
    np.fill_diagonal(n, 0.0)
    theta = ratings / ELO_SCALE
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
    weight = n * p * (1.0 - p)
    laplacian = np.diag(weight.sum(axis=1)) - weight
    se = ELO_SCALE * np.sqrt(np.clip(np.diag(np.linalg.pinv(laplacian)), 0.0, None))
    return np.stack([ratings - Z95 * se, ratings + Z95 * se], axis=1)


@dataclass
class TournamentResult:
    """A finished round robin. ``wins[i][j]``: games agent i won against agent j."""

    agents: list[str]
    games: int  # per pairing
    seed: int
    wins: np.ndarray
    ratings: np.ndarray  # Elo scale, mean 0
    rating_ci95: np.ndarray  # (k, 2)
    reports: list[EvaluationReport]  # one per pairing, row agent as "agent"

    @property
    def win_rates(self) -> np.ndarray:
        """Row agent's win rate against the column agent (NaN on the diagonal)."""
        played = self.wins + self.wins.T
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = self.wins / played
        np.fill_diagonal(rates, np.nan)
        return rates

    def to_dict(self) -> dict[str, Any]:
        rates = self.win_rates
        return {
            "agents": self.agents,
            "games_per_pairing": self.games,
            "seed": self.seed,
            "wins": self.wins.astype(int).tolist(),
            "win_rates": [[None if math.isnan(v) else round(float(v), 6) for v in row]
                          for row in rates],
            "ratings": [{"agent": a, "elo": round(float(r), 1),
                         "elo_ci95": [round(float(lo), 1), round(float(hi), 1)]}
                        for a, r, (lo, hi) in zip(self.agents, self.ratings, self.rating_ci95,
                                                  strict=True)],
            "pairings": [r.to_dict() for r in self.reports],
        }

    def save_heatmap(self, path: Path) -> Path:
        """Draw the win-rate matrix to a PNG at ``path``."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        k = len(self.agents)
        rates = self.win_rates
        size = 2.0 + 1.1 * k
        fig, ax = plt.subplots(figsize=(size + 1.5, size))
        image = ax.imshow(np.ma.masked_invalid(rates), cmap="RdYlGn", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(k), self.agents, rotation=30, ha="right")
        ax.set_yticks(range(k), [f"{a} ({r:+.0f})" for a, r in zip(self.agents, self.ratings,
                                                                  strict=True)])
        ax.set_xlabel("opponent")
        ax.set_ylabel("agent (rating)")
        for i in range(k):
            for j in range(k):
                text = "-" if i == j else f"{rates[i, j]:.0%}"
                ax.text(j, i, text, ha="center", va="center", fontsize=10)
        ax.set_title(f"win rate, row vs column ({self.games} games per pairing)")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        fig.tight_layout()
        path = Path(path)
        save_figure(fig, path, dpi=120)
        plt.close(fig)
        return path


def _labels(specs: Sequence[str]) -> list[str]:
    """Display names, made unique (``random``, ``random#2``) when a spec is listed twice."""
    labels, seen = [], {}
    for spec in specs:
        name = spec.strip()
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return labels


def tournament(agent_specs: Sequence[str], games: int, seed: int = 0, workers: int = 1,
               progress: bool = True, target: int = 121, regret: bool = False,
               duplicate: bool = False, ray: str | None = None) -> TournamentResult:
    """Play a round robin of ``games`` games per pairing; see the module docstring. ``ray``: play
    the blocks of all pairings at once as Ray tasks (``training.ray_backend``), same result."""
    specs = [s.strip() for s in agent_specs]
    if len(specs) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(specs)}: {specs}")
    if isinstance(games, bool) or not isinstance(games, int) or games <= 0:
        raise ValueError(f"games must be a positive whole number, got {games!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers <= 0:
        raise ValueError(f"workers must be a positive whole number, got {workers!r}")
    for spec in specs:
        build_agent(spec, seed=0)  # every name checked before the first game
    labels = _labels(specs)
    k = len(specs)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if ray is not None:
        from .ray_backend import RayPool

        pool = RayPool(ray, num_cpus=workers)
    else:
        pool = process_pool(workers) if workers > 1 else None

    def play(pair: tuple[int, int]) -> EvaluationReport:
        i, j = pair
        return evaluate(specs[i], specs[j], games, seed=derive_seed(seed, "pairing", i, j),
                        duplicate=duplicate, workers=workers, progress=progress, target=target,
                        regret=regret, pool=pool)

    try:
        if ray is None:
            reports = [play(pair) for pair in pairs]
        else:
            # Every pairing at once, each from its own thread that waits on its blocks: a cluster
            # has more cores than one pairing has blocks, and none idles at a pairing's tail.
            cpus = pool.workers  # joins Ray here, before the threads
            with ThreadPoolExecutor(len(pairs)) as threads:
                reports = list(threads.map(play, pairs))
            for report in reports:
                report.workers = cpus
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    wins = np.zeros((k, k))
    for (i, j), report in zip(pairs, reports, strict=True):
        report.agent, report.opponent = labels[i], labels[j]
        wins[i, j], wins[j, i] = report.wins, report.losses
    ratings = bradley_terry(wins)
    intervals = rating_intervals(wins)
    return TournamentResult(labels, games, seed, wins, ratings, intervals, reports)
