"""``crib serve --db``: players kept apart, games surviving SIGKILL, statistics equal to figures
computed from the records (issue 25)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
httpx = pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx (the dev extra)")

import warnings  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from agents.analysis import analyze_discards  # noqa: E402
from crib_env.cards import parse_cards  # noqa: E402
from crib_play.players import COOKIE  # noqa: E402
from crib_play.server import create_app  # noqa: E402
from crib_play.session import GameSession  # noqa: E402
from training.stats import wilson_interval  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def person_request(view: dict) -> tuple[str, dict | None]:
    """The scripted person: continue after a show, else lay the first legal cards."""
    if view["show"] is not None:
        return "continue", None
    return "move", {"cards": view["legal"][:view["cards_needed"]]}


def step(client, game_id: str, view: dict) -> dict:
    path, body = person_request(view)
    answer = client.post(f"/api/games/{game_id}/{path}", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def finish(client, view: dict, most: int = 5000) -> dict:
    for _ in range(most):
        if view["over"]:
            return view
        view = step(client, view["id"], view)
    raise AssertionError("the game did not end")


@pytest.fixture()
def app(tmp_path):
    return create_app(db_path=tmp_path / "games.sqlite3")


def test_the_player_cookie_is_secret_http_only_and_same_site_lax(app):
    client = TestClient(app)
    answer = client.post("/api/games", json={"opponent": "random", "seed": 1})
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert len(client.cookies[COOKIE]) >= 40  # 256 random bits
    assert client.get("/api/player").json()["name"].startswith("guest-")
    assert client.post("/api/player", json={"name": "Ann"}).json() == {"name": "Ann"}
    other = TestClient(app)
    taken = other.post("/api/player", json={"name": "Ann"})
    assert taken.status_code == 409 and "taken" in taken.json()["detail"]
    assert other.post("/api/player", json={"name": "<b>x</b>"}).status_code == 400


def test_two_players_cannot_see_or_move_each_others_games(app):
    ann, bob = TestClient(app), TestClient(app)
    game = ann.post("/api/games", json={"opponent": "random", "seed": 5}).json()
    gid = game["id"]
    for method, path, body in (("GET", f"/api/games/{gid}", None),
                               ("POST", f"/api/games/{gid}/move", {"cards": game["legal"][:2]}),
                               ("POST", f"/api/games/{gid}/continue", None),
                               ("POST", f"/api/games/{gid}/claim", {"hand": 4}),
                               ("GET", f"/api/games/{gid}/analysis", None)):
        answer = bob.request(method, path, json=body)
        assert answer.status_code == 404, (path, answer.text)
        assert TestClient(app).request(method, path, json=body).status_code == 404  # no cookie
    assert ann.get(f"/api/games/{gid}").json() == game  # untouched by bob's tries
    finish(ann, game)
    assert ann.get("/api/stats").json()["games"] == 1
    assert bob.get("/api/stats").json()["games"] == 0


def expected_figures(records: list[dict]) -> dict:
    """The statistics page's figures for ``records`` (the person in seat 0), computed here
    from the records alone, one straightforward loop per figure."""
    out = {}
    for name in sorted({r["players"][1] for r in records}):
        mine = [r for r in records if r["players"][1] == name]
        wins = sum(r["winner"] == 0 for r in mine)
        loser = [(r["winner"] == 0, r["scores"][1 - r["winner"]]) for r in mine]
        deals = [(d["dealer"] == 0, d) for r in mine for d in r["deals"]]
        dealt = [d for mine_deal, d in deals if mine_deal and d["completed"]]
        poned = [d for mine_deal, d in deals if not mine_deal and d["completed"]]
        regrets = []
        for is_dealer, d in deals:
            options = analyze_discards(d["hands"][0], dealer=is_dealer)
            chosen = [o for o in options if sorted(o.discard) ==
                      sorted(parse_cards(" ".join(d["discards"][0])))]
            regrets.append(options[0].net - chosen[0].net)
        out[name] = {
            "games": len(mine), "wins": wins, "win_rate": wins / len(mine),
            "win_rate_ci95": list(wilson_interval(wins, len(mine))),
            "skunks_given": sum(w and 61 <= s <= 90 for w, s in loser),
            "skunks_taken": sum(not w and 61 <= s <= 90 for w, s in loser),
            "double_skunks_given": sum(w and s <= 60 for w, s in loser),
            "double_skunks_taken": sum(not w and s <= 60 for w, s in loser),
            "dealer": {"pegging": sum(d["points"]["pegging"][0] for d in dealt) / len(dealt),
                       "hand": sum(d["points"]["hand"][0] for d in dealt) / len(dealt),
                       "crib": sum(d["points"]["crib"] for d in dealt) / len(dealt)},
            "pone": {"pegging": sum(d["points"]["pegging"][0] for d in poned) / len(poned),
                     "hand": sum(d["points"]["hand"][0] for d in poned) / len(poned)},
            "discard_regret": sum(regrets) / len(regrets),
        }
    return out


def test_statistics_after_three_scripted_games_equal_the_records_figures(app, tmp_path):
    client = TestClient(app)
    client.post("/api/player", json={"name": "Ann"})
    for opponent, seed in (("random", 1), ("random", 2), ("greedy", 3)):
        finish(client, client.post("/api/games", json={"opponent": opponent,
                                                       "seed": seed}).json())
    records = [g["record"] for g in app.state.games.finished()]
    assert len(records) == 3
    want = expected_figures(records)
    got = client.get("/api/stats").json()
    assert got["player"] == "Ann" and got["games"] == 3
    assert got["wins"] == sum(r["winner"] == 0 for r in records)
    assert set(got["opponents"]) == set(want) == {"random", "greedy"}
    for name, figures in want.items():
        o = got["opponents"][name]
        for key in ("games", "wins", "skunks_given", "skunks_taken", "double_skunks_given",
                    "double_skunks_taken"):
            assert o[key] == figures[key], (name, key)
        assert o["win_rate"] == pytest.approx(figures["win_rate"])
        assert o["win_rate_ci95"] == pytest.approx(figures["win_rate_ci95"])
        assert o["discard_regret"] == pytest.approx(figures["discard_regret"])
        for role in ("dealer", "pone"):
            for part, value in figures[role].items():
                assert o["points_per_deal"][role][part] == pytest.approx(value), (role, part)
        assert len(o["over_time"]) == figures["games"]
    svg = client.get("/api/stats/plot.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert "<polyline" in svg.text and "random" in svg.text and "<script" not in svg.text
    page = client.get("/stats")
    assert page.status_code == 200 and "/static/stats.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]

    # the same figures from the command line, on the same file
    app.state.games.db.close()
    from typer.testing import CliRunner

    from crib_cli.main import app as cli

    result = CliRunner().invoke(cli, ["stats", "--db", str(tmp_path / "games.sqlite3"),
                                      "--player", "Ann", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["Ann"] == {k: v for k, v in got.items() if k != "player"}


def test_a_full_disk_answers_507_and_the_game_goes_on_from_the_file(app):
    client = TestClient(app)
    view = client.post("/api/games", json={"opponent": "random", "seed": 9}).json()
    store = app.state.games
    pages = store.db.read("PRAGMA page_count")[0][0]
    store.db.conn.execute(f"PRAGMA max_page_count = {pages}")
    for _ in range(400):
        path, body = person_request(view)
        answer = client.post(f"/api/games/{view['id']}/{path}", json=body)
        if answer.status_code != 200:
            break
        view = answer.json()
    assert answer.status_code == 507 and "disk is full" in answer.json()["detail"]
    assert client.get(f"/api/games/{view['id']}").json() == view  # the last accepted move
    store.db.conn.execute("PRAGMA max_page_count = 1073741823")
    finish(client, view)


def test_serving_beyond_this_machine_prints_a_warning(tmp_path, monkeypatch, capsys):
    import uvicorn

    from crib_play import server

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    server.serve_command(host="0.0.0.0", port=8123, db_path=tmp_path / "g.sqlite3")
    out = capsys.readouterr()
    assert "warning" in out.err and "0.0.0.0" in out.err
    assert f"games in {tmp_path / 'g.sqlite3'}" in out.out
    server.serve_command(host="127.0.0.1", port=8123, db_path=tmp_path / "g.sqlite3")
    assert "warning" not in capsys.readouterr().err


# -- a real server, killed ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "crib_cli", "serve", "--port", str(port),
                                "--db", str(db)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/player", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            pytest.fail(f"crib serve exited: {process.stdout.read()}")
        time.sleep(0.2)
    process.kill()
    pytest.fail("crib serve did not start within 120 s")


def test_a_game_survives_sigkill_of_the_server_with_the_same_cards(tmp_path):
    db, port = tmp_path / "games.sqlite3", free_port()
    url = f"http://127.0.0.1:{port}"
    reference = GameSession.against("random", seed=21)  # the same game, never interrupted
    process = start_server(db, port)
    try:
        client = httpx.Client(base_url=url, timeout=30)
        view = client.post("/api/games", json={"opponent": "random", "seed": 21}).json()
        for _ in range(25):  # a few deals in: the agent has drawn from its generator many times
            view = step(client, view["id"], view)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        process = start_server(db, port)
        again = client.get(f"/api/games/{view['id']}")
        assert again.status_code == 200 and again.json() == view  # exactly where it was
        final = finish(client, view)
    finally:
        process.kill()
        process.wait(10)
    from crib_play.commands import apply_command, continue_, move

    while not reference.over:
        kind, body = person_request(reference.view())
        apply_command(reference, continue_() if kind == "continue" else move(body["cards"]))
    assert {k: v for k, v in final.items() if k != "id"} == reference.view()


def test_a_client_that_drops_its_cookie_cannot_fill_the_disk(app, monkeypatch):
    from crib_play import saved

    monkeypatch.setattr(saved, "MAX_GAMES_PER_ADDRESS", 3)
    codes = [TestClient(app).post("/api/games", json={"opponent": "random"}).status_code
             for _ in range(5)]  # a fresh cookie jar each time: five guests, one address
    assert codes == [200, 200, 200, 429, 429]


def test_the_players_games_in_progress_are_listed_for_the_page(app):
    ann = TestClient(app)
    game = ann.post("/api/games", json={"opponent": "random", "seed": 2}).json()
    assert ann.get("/api/player/games").json() == {"in_progress": [game["id"]], "finished": []}
    assert TestClient(app).get("/api/player/games").json() == {"in_progress": [],
                                                               "finished": []}
    final = finish(ann, game)
    assert ann.get("/api/player/games").json() == {"in_progress": [], "finished": [{
        "id": game["id"], "opponent": "random",
        "scores": [final["scores"]["you"]["front"], final["scores"]["opponent"]["front"]],
        "winner": 0 if final["winner"] == "you" else 1, "reviewed": False}]}


def test_count_practice_accuracy_is_counted_from_the_claims():
    from crib_play.stats import game_summary, player_stats

    session = GameSession.against("random", seed=8, practice=True)
    from crib_play.commands import apply_command, claim, continue_, move

    right = 0
    while not session.over:
        if session.pause is not None and session.pause.claims_needed:
            actual = session._show_points(session.pause)
            wrong = len(session.claims) % 3 == 0  # every third claim is wrong on purpose
            apply_command(session, claim(**{w: (actual[w] + 1) % 29 if wrong else actual[w]
                                            for w in session.pause.claims_needed}))
        elif session.pause is not None:
            apply_command(session, continue_())
        else:
            apply_command(session, move(session.view()["legal"][:session.cards_needed()]))
    right = sum(c["right"] for c in session.claims)
    practice = player_stats([game_summary(session.record())])["opponents"]["random"][
        "count_practice"]
    assert practice["claims"] == len(session.claims) > 3 and practice["right"] == right
    assert practice["accuracy"] == pytest.approx(right / len(session.claims)) and right < \
        len(session.claims)


def test_each_throw_gets_its_chance_to_win_at_the_board_position():
    from crib_play.chances import ANALYSIS_SIMS, throw_win_chances

    session = GameSession.against("random", seed=12)
    while not session.your_turn:
        session.continue_()
    session.game.scores[0], session.game.scores[1] = 112, 104  # near the end: throws differ most
    analysis = session.analysis()
    assert analysis["sims"] == ANALYSIS_SIMS
    want = throw_win_chances(session.game.hands[0], session.game.dealer == 0, 112, 104, 121,
                             ANALYSIS_SIMS)
    for o in analysis["options"]:
        chance = want[frozenset(parse_cards(" ".join(o["throw"])))]
        assert o["win_chance"] == pytest.approx(chance.chance, abs=1e-4)
        assert o["win_stderr"] == pytest.approx(chance.stderr, abs=1e-4)
    assert all(0 <= o["win_chance"] <= 1 for o in analysis["options"])
    assert len({o["win_chance"] for o in analysis["options"]}) > 1
