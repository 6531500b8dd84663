"""Round robin (`crib tournament`): win matrix, Bradley-Terry ratings with intervals, heatmap."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from crib_cli.main import app
from training.tournament import bradley_terry, rating_intervals, tournament


def test_bradley_terry_on_the_elo_scale():
    # 76% wins is a 200-point Elo gap: 400 * log10(76 / 24) = 200.2
    ratings = bradley_terry(np.array([[0, 76], [24, 0]]), prior=0)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(76 / 24), abs=0.01)
    assert ratings.sum() == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_orders_a_transitive_field_and_stays_finite_on_a_whitewash():
    wins = np.array([[0, 0, 10],
                     [20, 0, 5],
                     [10, 15, 0]])  # 0 never beats 1
    ratings = bradley_terry(wins)
    assert np.all(np.isfinite(ratings))
    assert ratings[0] < ratings[2] and ratings[0] < ratings[1]
    even = bradley_terry(np.array([[0, 10, 10], [10, 0, 10], [10, 10, 0]]))
    assert even == pytest.approx([0, 0, 0], abs=1e-6)


def test_rating_intervals_match_the_fisher_information_and_shrink_with_games():
    # Two agents, 76-24: var(theta_1 - theta_2) = 1 / (n p (1 - p)); each centred rating carries
    # half the gap, so its standard error is half of that difference's, times 400 / ln 10.
    wins = np.array([[0, 76], [24, 0]])
    se = 0.5 / math.sqrt(100 * 0.76 * 0.24) * 400 / math.log(10)
    ci = rating_intervals(wins, prior=0)
    ratings = bradley_terry(wins, prior=0)
    assert ci[:, 1] - ratings == pytest.approx([1.959964 * se] * 2, rel=1e-4)
    assert ratings - ci[:, 0] == pytest.approx([1.959964 * se] * 2, rel=1e-4)
    width = lambda w: float(np.ptp(rating_intervals(w)[0]))  # noqa: E731
    assert width(wins * 25) == pytest.approx(width(wins) / 5, rel=0.02)
    # a whitewash is weak evidence of how far apart: a wide, but finite, interval
    whitewash = rating_intervals(np.array([[0, 40], [0, 0]]))
    assert np.all(np.isfinite(whitewash)) and np.ptp(whitewash[0]) > 4 * width(wins)


def test_tournament_round_robin_is_complete_and_reproducible():
    first = tournament(["random", "random", "random"], games=6, seed=3, progress=False)
    assert first.agents == ["random", "random#2", "random#3"]
    played = first.wins + first.wins.T
    assert np.all(played[~np.eye(3, dtype=bool)] == 6)
    assert np.all(np.diag(first.wins) == 0)
    assert len(first.reports) == 3
    again = tournament(["random", "random", "random"], games=6, seed=3, progress=False)
    assert np.array_equal(first.wins, again.wins)
    assert first.to_dict()["ratings"] == again.to_dict()["ratings"]
    rates = first.win_rates
    assert np.isnan(rates[0, 0]) and rates[0, 1] + rates[1, 0] == pytest.approx(1.0)


def test_tournament_errors_name_the_problem():
    with pytest.raises(ValueError, match="at least two agents"):
        tournament(["random"], games=4, progress=False)
    with pytest.raises(ValueError, match="unknown agent 'wizard'"):
        tournament(["random", "wizard"], games=4, progress=False)
    with pytest.raises(ValueError, match="games"):
        tournament(["random", "random"], games=0, progress=False)


def test_cli_tournament_writes_matrix_ratings_and_heatmap(tmp_path):
    out = tmp_path / "t"
    result = CliRunner().invoke(app, ["tournament", "--agents", "random,random", "--games", "4",
                                      "--seed", "1", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "win rate" in result.output and "Bradley-Terry" in result.output
    data = json.loads((out / "tournament.json").read_text())
    assert data["agents"] == ["random", "random#2"]
    assert data["wins"][0][1] + data["wins"][1][0] == 4
    assert len(data["ratings"]) == 2 and len(data["ratings"][0]["elo_ci95"]) == 2
    png = (out / "win_rates.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_cli_tournament_unknown_agent_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["tournament", "--agents", "random,nobody", "--games", "2",
                                      "--output", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown agent 'nobody'" in result.output
