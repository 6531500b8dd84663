"""The statistics page's plot (issue 25): the running win rate and the running points per game
after each game, one line per opponent in each of two panels, every name escaped."""

from __future__ import annotations

import re

import pytest

from crib_play.stats import over_time_svg, player_stats


def summary(opponent: str, won: bool, margin: int) -> dict:
    roles = {"dealer": {"deals": 0, "pegging": 0, "hand": 0, "crib": 0, "heels": 0},
             "pone": {"deals": 0, "pegging": 0, "hand": 0}}
    return {"opponent": opponent, "won": won, "margin": margin, "skunk_given": False,
            "double_skunk_given": False, "skunk_taken": False, "double_skunk_taken": False,
            "roles": roles, "regret_sum": 0.0, "discards": 0, "claims": 0, "claims_right": 0}


def test_points_over_time_is_the_running_mean_margin():
    games = [summary("greedy", True, 20), summary("greedy", False, -40),
             summary("<b>x</b>", True, 5), summary("greedy", True, 11)]
    figures = player_stats(games)["opponents"]
    assert figures["greedy"]["over_time"] == pytest.approx([1, 0.5, 2 / 3])
    assert figures["greedy"]["points_over_time"] == pytest.approx([20, -10, -3])
    assert figures["<b>x</b>"]["points_over_time"] == [5]


def test_the_svg_has_both_panels_one_line_per_opponent_and_escapes_names():
    games = [summary("greedy", True, 20), summary("greedy", False, -40),
             summary("<b>x</b>", True, 5)]
    svg = over_time_svg(player_stats(games))
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert len(re.findall(r'<polyline class="over_time"', svg)) == 2
    assert len(re.findall(r'<polyline class="points_over_time"', svg)) == 2
    assert "win rate (running" in svg and "points per game (running" in svg
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg
    assert "+20" in svg and "-20" in svg  # the axis reaches the largest running mean (20)
    empty = over_time_svg(player_stats([]))
    assert "<polyline" not in empty and empty.endswith("</svg>")
