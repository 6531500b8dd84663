"""``crib serve``'s API through FastAPI's TestClient: validation, hidden information, independence
of games, replays (issue 13)."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx (the dev extra)")

import warnings  # noqa: E402

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from crib_env.cards import card_str  # noqa: E402
from crib_play.server import create_app  # noqa: E402
from training.record import read_records, replay  # noqa: E402


@pytest.fixture()
def client(tmp_path):
    return TestClient(create_app(record_path=tmp_path / "games.jsonl"))


def new_game(client, **body):
    response = client.post("/api/games", json={"opponent": "random", **body})
    assert response.status_code == 200, response.text
    return response.json()


def sessions(client):
    """The server's sessions by id (to check the browser's view against the engine)."""
    return {k: v[0] for k, v in client.app.state.games.items()}


def test_get_root_is_the_page(client):
    response = client.get("/")
    assert response.status_code == 200 and "text/html" in response.headers["content-type"]
    assert 'id="hand"' in response.text and "/static/app.js" in response.text
    assert client.get("/static/app.js").status_code == 200


def test_opponents_lists_agent_names_and_checkpoints(client):
    data = client.get("/api/opponents").json()
    assert data["names"] == ["random", "greedy", "standard", "expert", "champion", "champion-search"]
    assert any(path.endswith("champion") for path in data["checkpoints"])


@pytest.mark.parametrize("body, status, reason", [
    ({"opponent": "nobody"}, 400, "unknown opponent 'nobody'"),
    ({"opponent": "/etc"}, 400, "unknown opponent '/etc'"),
    ({"opponent": "random", "seed": -1}, 422, "greater than or equal to 0"),
    ({"opponent": "random", "target": 0}, 422, "greater than or equal to 1"),
    ({"opponent": "random", "colour": "red"}, 422, "Extra inputs are not permitted"),
    ({}, 422, "Field required"),
])
def test_bad_new_game_requests_say_why(client, body, status, reason):
    response = client.post("/api/games", json=body)
    assert response.status_code == status
    assert reason in json.dumps(response.json()["detail"])


def test_illegal_and_malformed_moves_leave_the_game_unchanged(client):
    game = new_game(client, seed=4)
    gid = game["id"]
    while not game["your_turn"]:
        game = client.post(f"/api/games/{gid}/continue").json()
    hand = game["hand"]
    outside = next(card_str(c) for c in range(52) if card_str(c) not in hand)
    for body, status, reason in (
            ({"cards": hand[:1]}, 400, "lay 2 cards to the crib, got 1"),
            ({"cards": [hand[0], outside]}, 400, "not in your hand"),
            ({"cards": ["QQ", hand[0]]}, 400, "bad card 'QQ'"),
            ({"cards": [hand[0], hand[0]]}, 400, "the same card twice"),
            ({"cards": []}, 400, "lay 2 cards to the crib, got 0"),
            ({"cards": hand[:3]}, 422, "at most 2 items"),
            ({"card": hand[0]}, 422, "Field required"),
            ({"cards": [7, 8]}, 422, "valid string")):
        response = client.post(f"/api/games/{gid}/move", json=body)
        assert response.status_code == status, (body, response.text)
        assert reason in json.dumps(response.json()["detail"]), response.text
        assert client.get(f"/api/games/{gid}").json() == game
    assert client.post(f"/api/games/{gid}/continue").status_code == 409
    assert client.post(f"/api/games/{gid}/claim", json={"hand": 4}).status_code == 409
    assert client.post("/api/games/nope/move", json={"cards": hand[:2]}).status_code == 404


def play_to_end(client, game, rng, on_view=None):
    gid = game["id"]
    while not game["over"] or (game["show"] and game["show"]["claims_needed"]):
        if on_view is not None:
            on_view(game)
        if game["show"] is not None:
            if game["show"]["claims_needed"]:
                claims = {w: 5 for w in game["show"]["claims_needed"]}
                game = client.post(f"/api/games/{gid}/claim", json=claims).json()
                continue
            game = client.post(f"/api/games/{gid}/continue").json()
            continue
        response = client.post(f"/api/games/{gid}/move",
                               json={"cards": rng.sample(game["legal"], game["cards_needed"])})
        assert response.status_code == 200, response.text
        game = response.json()
    return game


def test_the_browser_never_receives_the_opponents_hand_or_the_stock(client):
    game = new_game(client, seed=21)
    session = sessions(client)[game["id"]]
    checked = []

    def check(view):
        g = session.game
        if view["show"] is not None:
            return  # the show lays the hands open
        hidden = {*g.hands[1], *g.discards[1]}
        if g.starter is None:
            hidden.add(g._next_starter)
        text = json.dumps(view)
        leaked = [card_str(c) for c in hidden if f'"{card_str(c)}"' in text]
        assert not leaked, f"the page was sent {leaked}"
        checked.append(1)

    final = play_to_end(client, game, random.Random(3), on_view=check)
    assert len(checked) > 20
    g = session.game
    assert (final["scores"]["you"]["front"], final["scores"]["opponent"]["front"]) == \
        tuple(g.scores)


def test_games_are_independent_and_recorded(client, tmp_path):
    a, b = new_game(client, seed=1), new_game(client, seed=1)
    assert a["id"] != b["id"] and a["hand"] == b["hand"]  # same seed, same deal
    rng = random.Random(0)
    a = client.post(f"/api/games/{a['id']}/move",
                    json={"cards": rng.sample(a["legal"], a["cards_needed"])}).json()
    assert client.get(f"/api/games/{b['id']}").json() == b
    final = play_to_end(client, a, rng)
    records = read_records(tmp_path / "games.jsonl")
    assert len(records) == 1
    game = replay(records[0])
    assert [final["scores"]["you"]["front"], final["scores"]["opponent"]["front"]] == game.scores
    frames = client.post("/api/replay", json={"record": records[0]}).json()["frames"]
    assert len(frames) == len(records[0]["actions"]) + 1
    assert [s["front"] for s in frames[-1]["scores"]] == game.scores
    assert all(len(f["hands"][0]) + len(f["hands"][1]) <= 12 for f in frames)


def test_count_practice_through_the_api(client):
    game = new_game(client, seed=8, practice=True)
    gid, rng = game["id"], random.Random(8)
    while not (game["show"] and game["show"]["claims_needed"]):
        game = client.post(f"/api/games/{gid}/move", json={
            "cards": rng.sample(game["legal"], game["cards_needed"])}).json()
    needed = game["show"]["claims_needed"]
    assert all(c["points"] is None for c in game["show"]["counts"] if c["owner"] == "you")
    bad = client.post(f"/api/games/{gid}/claim", json={w: 30 for w in needed})
    assert bad.status_code == 422
    game = client.post(f"/api/games/{gid}/claim", json={w: 2 for w in needed}).json()
    assert [c["claimed"] for c in game["claims"]] == [2] * len(needed)
    assert all(c["points"] is not None for c in game["show"]["counts"])


def test_analysis_gives_the_15_throws_and_the_chance_to_win(client):
    game = new_game(client, seed=2)
    while not game["your_turn"]:
        game = client.post(f"/api/games/{game['id']}/continue").json()
    data = client.get(f"/api/games/{game['id']}/analysis").json()
    assert data["kind"] == "discard" and len(data["options"]) == 15
    nets = [o["net"] for o in data["options"]]
    assert nets == sorted(nets, reverse=True)
    # the packaged win-odds table's chance for 0-0 with this deal's dealer (about 56% / 44%)
    from crib_env.odds import win_probability

    assert data["win_chance"] == win_probability(0, 0, game["dealer"] == "you")
    assert 0.4 < data["win_chance"] < 0.6 and data["win_chance_note"] is None


def test_a_bad_replay_is_refused(client):
    response = client.post("/api/replay", json={"record": {"version": 1}})
    assert response.status_code == 400 and "lacks" in response.json()["detail"]
