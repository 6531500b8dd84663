"""The peg board's geometry (``crib_play.board``): streets of 30 holes in groups of 5, back and
forth, one track per player, the start and game holes, the skunk lines at 90 and 60 (issue 25)."""

from __future__ import annotations

import pytest

from crib_env.game import DOUBLE_SKUNK_MARGIN, SKUNK_MARGIN
from crib_play.board import GROUP, HOLE_DX, STREET, board_layout


@pytest.fixture(scope="module")
def board():
    return board_layout(121)


def test_121_has_four_streets_of_30_and_every_hole_once_per_track(board):
    assert [(s["first"], s["last"]) for s in board["streets"]] == [(1, 30), (31, 60), (61, 90),
                                                                  (91, 120)]
    for track in board["holes"]:
        assert len(track) == 122  # scores 0..121
        assert len({tuple(p) for p in track}) == 122  # no two scores share a hole
        for x, y in track:
            assert 0 <= x <= board["width"] and 0 <= y <= board["height"]
    # the two tracks never share a hole, except the one game hole at 121
    you, them = ({tuple(p) for p in t[:121]} for t in board["holes"])
    assert not you & them
    assert board["holes"][0][121] == board["holes"][1][121]


def test_a_street_is_one_row_per_track_and_the_streets_go_back_and_forth(board):
    holes = board["holes"][0]
    for k in range(4):
        street = holes[k * STREET + 1:(k + 1) * STREET + 1]
        assert len({y for _, y in street}) == 1  # one row
        xs = [x for x, _ in street]
        assert xs == (sorted(xs) if k % 2 == 0 else sorted(xs, reverse=True))
    assert holes[30][1] < holes[31][1]  # 31 starts the next street, below
    assert holes[30][0] == holes[31][0]  # at the end where 30 is: the board turns back
    # the other track runs beside, in the same street
    them = board["holes"][1]
    assert all(them[s][0] == holes[s][0] and them[s][1] > holes[s][1] for s in range(1, 121))


def test_holes_come_in_groups_of_five(board):
    holes = board["holes"][0]
    steps = [round(abs(holes[s + 1][0] - holes[s][0]), 2) for s in range(1, STREET)]
    inside = {steps[i] for i in range(len(steps)) if (i + 1) % GROUP}
    between = {steps[i] for i in range(len(steps)) if (i + 1) % GROUP == 0}
    assert inside == {HOLE_DX} and len(between) == 1 and between.pop() > HOLE_DX
    assert sum(1 for i in range(len(steps)) if steps[i] > HOLE_DX) == STREET // GROUP - 1


def test_the_skunk_lines_cross_the_tracks_just_past_90_and_60(board):
    lines = {line["name"]: line for line in board["lines"]}
    assert lines["skunk"]["score"] == 121 - SKUNK_MARGIN == 90
    assert lines["double skunk"]["score"] == 121 - DOUBLE_SKUNK_MARGIN == 60
    holes = board["holes"]
    for line in lines.values():
        n = line["score"]
        assert line["x1"] == line["x2"]  # across the street
        for track in holes:
            x, y = track[n]
            assert line["y1"] < y < line["y2"]  # every track crosses it
        # past hole n in the direction its street runs (60's street runs right to left)
        direction = 1 if (n - 1) // STREET % 2 == 0 else -1
        assert (line["x1"] - holes[0][n][0]) * direction > 0
        assert (line["x1"] - holes[0][n - 1][0]) * direction > 0


def test_start_and_game_holes_sit_beyond_the_streets(board):
    for track in board["holes"]:
        start, first = track[0], track[1]
        assert start[1] == first[1] and start[0] < first[0]  # before hole 1, in its row
    last_street = [p[0] for p in board["holes"][0][91:121]]
    assert board["holes"][0][121][0] < min(last_street)  # the fourth street runs to the left


def test_a_shorter_game_has_fewer_streets_and_bad_sizes_are_refused():
    short = board_layout(31)
    assert [(s["first"], s["last"]) for s in short["streets"]] == [(1, 30)]
    assert short["lines"] == []  # no score of a game to 31 is 61 or 31 behind the target
    assert len(board_layout(61)["streets"]) == 2
    assert board_layout(121, tracks=3)["holes"][2][1][1] > board_layout(121)["holes"][1][1][1]
    for bad, words in (({"target": 1}, "target must be"), ({"target": 122}, "target must be"),
                       ({"target": True}, "target must be"), ({"tracks": 4}, "tracks must be")):
        with pytest.raises(ValueError, match=words):
            board_layout(**bad)


def test_the_server_gives_the_layout():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from crib_play.server import create_app

    client = TestClient(create_app())
    assert client.get("/api/board").json() == board_layout(121)
    assert client.get("/api/board?target=61").json()["target"] == 61
    assert client.get("/api/board?target=500").status_code == 422
