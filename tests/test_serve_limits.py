"""``crib serve`` under hostile and careless input (issue 27): every limit of ``crib_play.limits``
refused with a status and a reason that names it, no error that echoes unbounded input, replays and
analyses on their own bounded pool, no eviction of anyone's game, every checkpoint findable, and a
Content-Security-Policy on every answer."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx (the dev extra)")

import warnings  # noqa: E402

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from fastapi import HTTPException  # noqa: E402

import crib_play.server as server  # noqa: E402
from agents.registry import SHIPPED_CHECKPOINTS  # noqa: E402
from crib_env.game import Game  # noqa: E402
from crib_play import limits  # noqa: E402
from crib_play.store import MAX_GAMES_PER_CLIENT, MemoryStore  # noqa: E402
from crib_play.talk import PegCounter, pegs  # noqa: E402
from training.record import game_record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def client():
    return TestClient(server.create_app())


def random_record(target: int, seed: int = 0) -> dict:
    import random

    rng = random.Random(seed)
    game = Game(target=target, seed=seed, first_dealer=0)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return game_record(game, ["a", "b"], 0)


# -- request bodies -----------------------------------------------------------------------------

def test_a_body_past_the_limit_is_refused_before_it_is_read(client, monkeypatch):
    from starlette.requests import Request

    read = []
    original = Request.body

    async def spy(self):
        read.append(self.url.path)
        return await original(self)

    monkeypatch.setattr(Request, "body", spy)
    stray = '{"opponent": "random", "x": "' + "a" * 50_000_000 + '"}'  # the 50 MB field
    response = client.post("/api/games", content=stray, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert "MAX_BODY_BYTES" in response.json()["detail"] and len(response.content) < 500
    assert read == []  # refused from Content-Length, before FastAPI read or parsed it

    def chunks():  # no Content-Length: counted as it comes
        for _ in range(40):
            yield b"a" * 65536

    response = client.post("/api/replay", content=chunks(),
                           headers={"content-type": "application/json"})
    assert response.status_code == 413 and "MAX_BODY_BYTES" in response.json()["detail"]
    assert client.post("/api/games", json={"opponent": "random"}).status_code == 200


def test_errors_name_bad_input_without_echoing_it_whole(client):
    stray = '{"opponent": "random", "x": "' + "a" * 900_000 + '"}'  # inside the body limit
    response = client.post("/api/games", content=stray, headers={"content-type": "application/json"})
    assert response.status_code == 422 and len(response.content) < 2_000
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "x"] and "Extra inputs are not permitted" in error["msg"]
    assert error["input"].endswith("(900000 characters)")
    response = client.post("/api/games", json={"opponent": "b" * 500})
    assert response.status_code == 400 and "unknown opponent" in response.json()["detail"]
    assert len(response.content) < 1_000
    game = client.post("/api/games", json={"opponent": "random"}).json()
    response = client.post(f"/api/games/{game['id']}/move", json={"cards": ["Q" * 100_000]})
    assert response.status_code == 422 and len(response.content) < 2_000
    response = client.get("/api/games/" + "z" * 60_000)
    assert response.status_code == 404 and len(response.content) < 500


# -- replay records -----------------------------------------------------------------------------

@pytest.mark.parametrize("change, status, reason", [
    ({"target": 600}, 413, "MAX_RECORD_TARGET (121)"),
    ({"actions": ["5H"] * (limits.MAX_RECORD_ACTIONS + 1)}, 413, "MAX_RECORD_ACTIONS"),
    ({"deals": [{}] * (limits.MAX_RECORD_DEALS + 1)}, 413, "MAX_RECORD_DEALS"),
    ({"players": ["a" * 201, "b"]}, 413, "MAX_PLAYER_NAME"),
    ({"target": "121"}, 400, "target must be a whole number"),
    ({"players": ["only one"]}, 400, "players must be two names"),
    ({"scores": [121]}, 400, "scores must be two whole numbers"),
    ({"actions": "5H 5D"}, 400, "actions must be a list"),
    ({"actions": ["5H", 7]}, 400, "not a replayable game record"),
])
def test_a_record_past_a_limit_or_malformed_is_refused_with_the_reason(client, change, status,
                                                                      reason):
    record = {**random_record(121), **change}
    response = client.post("/api/replay", json={"record": record})
    assert response.status_code == status, response.text
    assert reason in response.json()["detail"]


def test_the_longest_game_replays_within_the_limits(client):
    record = random_record(121, seed=5)
    assert len(record["actions"]) <= limits.MAX_RECORD_ACTIONS
    response = client.post("/api/replay", json={"record": record})
    assert response.status_code == 200
    frames = response.json()["frames"]
    assert len(frames) == len(record["actions"]) + 1


def test_the_peg_counter_reads_each_log_entry_once_and_agrees_with_pegs():
    """Replays follow the pegs with ``PegCounter``: each step reads only the new log entries, so
    a record of n actions costs n reads, not n^2 / 2 (what re-reading the log each step cost)."""

    class CountingLog(list):
        reads = 0

        def __getitem__(self, index):
            CountingLog.reads += 1
            return super().__getitem__(index)

    record = random_record(121, seed=2)
    from training.record import replay_steps

    counter, log = PegCounter(), CountingLog()
    for game in replay_steps(record):
        log.extend(game.log[len(log):])
        counter.update(log)
        front, back = pegs(list(log))
        assert (counter.front, counter.back) == (front, back)
    assert CountingLog.reads == len(log)


# -- the expensive pool -------------------------------------------------------------------------

def test_saturated_replays_never_starve_another_game(monkeypatch):
    """Replays blocked inside the pool: at most EXPENSIVE_WORKERS run, EXPENSIVE_QUEUE wait, the
    rest are refused 503 at once; meanwhile another game's GET and move answer, before any replay
    has finished."""
    release, inside, most = threading.Event(), [0], [0]
    lock = threading.Lock()

    def blocked(record):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        release.wait(60)
        with lock:
            inside[0] -= 1
        return []

    monkeypatch.setattr(server, "replay_frames", blocked)
    app = server.create_app()
    pool = app.state.expensive
    sent = pool.workers + pool.queue + 24  # past the 40 threads that serve the sync endpoints
    record = random_record(121)
    with TestClient(app) as client:
        game = client.post("/api/games", json={"opponent": "random", "seed": 1}).json()
        answers: list[int] = []

        def replay():
            answers.append(client.post("/api/replay", json={"record": record}).status_code)

        threads = [threading.Thread(target=replay) for _ in range(sent)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while answers.count(503) < sent - pool.workers - pool.queue \
                or pool.load() != (pool.workers, pool.queue):
            assert time.monotonic() < deadline, (answers, pool.load())
            time.sleep(0.02)
        got = client.get(f"/api/games/{game['id']}")
        moved = client.post(f"/api/games/{game['id']}/move",
                            json={"cards": got.json()["legal"][:2]})
        assert got.status_code == 200 and moved.status_code == 200
        assert answers.count(200) == 0 and inside[0] == pool.workers  # nothing finished yet
        release.set()
        for t in threads:
            t.join(30)
    assert answers.count(200) == pool.workers + pool.queue and most[0] == pool.workers
    assert all(a in (200, 503) for a in answers)


# -- games: a per-client cap, no eviction -------------------------------------------------------

def test_200_creations_from_one_client_leave_another_clients_game_playable():
    app = server.create_app()
    other = TestClient(app, client=("10.0.0.2", 50000))
    hostile = TestClient(app, client=("10.0.0.1", 50000))
    game = other.post("/api/games", json={"opponent": "random", "seed": 4}).json()
    codes = [hostile.post("/api/games", json={"opponent": "random"}) for _ in range(201)]
    assert [c.status_code for c in codes].count(200) == MAX_GAMES_PER_CLIENT
    refused = [c for c in codes if c.status_code != 200]
    assert {c.status_code for c in refused} == {429}
    assert "MAX_GAMES_PER_CLIENT" in refused[0].json()["detail"]
    assert other.get(f"/api/games/{game['id']}").json() == game  # still there, unchanged
    moved = other.post(f"/api/games/{game['id']}/move", json={"cards": game["legal"][:2]})
    assert moved.status_code == 200
    assert other.post("/api/games", json={"opponent": "random"}).status_code == 200


class FakeSession:
    def __init__(self, over: bool = False) -> None:
        self.over = over


def test_the_store_expires_untouched_games_and_frees_a_clients_finished_ones():
    now = [0.0]
    store = MemoryStore(per_client=2, total=3, finished_ttl=10, idle_ttl=100, clock=lambda: now[0])
    done, playing = FakeSession(over=True), FakeSession()
    a1, a2 = store.add("a", done), store.add("a", playing)
    a3 = store.add("a", FakeSession())  # at the cap: the client's own finished game makes room
    assert {gid for gid, _ in store.items()} == {a2, a3}
    with pytest.raises(HTTPException) as refused:  # two in progress: the cap holds
        store.add("a", FakeSession())
    assert refused.value.status_code == 429
    b1 = store.add("b", FakeSession())
    with pytest.raises(HTTPException) as full:  # the server is full: refused, nothing evicted
        store.add("c", FakeSession())
    assert full.value.status_code == 503 and store.count() == 3
    now[0] = 99
    store.get(a2)  # touched: it stays
    now[0] = 150
    assert store.get(a2).session is playing
    for gone in (a3, b1, a1):  # untouched past IDLE_TTL (a1 was dropped for room)
        with pytest.raises(HTTPException) as missing:
            store.get(gone)
        assert missing.value.status_code == 404
    playing.over = True
    now[0] = 161  # finished and untouched for FINISHED_TTL
    with pytest.raises(HTTPException) as expired:
        store.get(a2)
    assert expired.value.status_code == 404
    assert store.count() == 0


# -- checkpoints --------------------------------------------------------------------------------

def test_every_shipped_checkpoint_is_listed_first_and_every_other_one_can_be_found(tmp_path):
    runs = tmp_path / "runs"
    for i in range(60):
        folder = runs / f"r{i:02d}" / "best"
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text("{}")
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
    oldest = runs / "r00" / "best"
    shutil.rmtree(oldest)
    shutil.copytree(SHIPPED_CHECKPOINTS / "scratch", oldest)  # a real one, on no first page
    os.utime(oldest, (1, 1))
    client = TestClient(server.create_app(checkpoint_roots=(runs,)))
    data = client.get("/api/opponents").json()
    shipped = data["shipped"]
    assert {Path(p).name for p in shipped} >= {"champion", "scratch"}
    assert data["checkpoints"][:len(shipped)] == shipped
    assert data["others"]["total"] == 60 and len(data["checkpoints"]) == len(shipped) + 50
    assert str(oldest) not in data["checkpoints"]
    found = client.get("/api/opponents", params={"search": "R00/"}).json()
    assert found["checkpoints"] == [*shipped, str(oldest)] and found["others"]["total"] == 1
    page2 = client.get("/api/opponents", params={"offset": 50}).json()
    assert page2["checkpoints"][-1] == str(oldest) and len(page2["checkpoints"]) == len(shipped) + 10
    assert client.post("/api/games", json={"opponent": str(oldest)}).status_code == 200
    assert client.get("/api/opponents", params={"limit": 0}).status_code == 422


# -- the page -----------------------------------------------------------------------------------

def test_every_answer_carries_a_csp_that_forbids_inline_scripts(client):
    game = client.post("/api/games", json={"opponent": "random"}).json()
    answers = [client.get("/"), client.get("/static/app.js"), client.get("/api/opponents"),
               client.get(f"/api/games/{game['id']}"), client.get("/api/games/nope"),
               client.post("/api/games", json={}),
               client.post("/api/games", content=b"x" * (limits.MAX_BODY_BYTES + 1))]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 404, 422, 413]
    for answer in answers:
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_page_has_no_inline_script_and_inserts_no_html():
    static = ROOT / "crib_play" / "static"
    html = (static / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"\son[a-z]+\s*=", html)
    js = (static / "app.js").read_text()
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", js)
    assert json.loads(json.dumps(limits.SECURITY_HEADERS))  # plain strings, one place
