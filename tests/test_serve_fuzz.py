"""A fuzz suite over ``crib serve``'s JSON API (issue 27): random JSON bodies, paths and query
parameters for each endpoint, and mutated game records for the replay. Every answer is a clear 4xx
with a JSON ``detail`` or a valid state, never a 500; a refused request leaves the game exactly as
it was, and a GET never changes it. The quick tier runs a small budget per endpoint, the slow tier
(``make test-slow``) a large one."""

from __future__ import annotations

import json
import random
import warnings
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx (the dev extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from crib_env.cards import card_str  # noqa: E402
from crib_env.game import Game  # noqa: E402
from crib_play.server import create_app  # noqa: E402
from crib_play.store import MemoryStore  # noqa: E402
from training.record import game_record  # noqa: E402

ENDPOINTS = [
    ("POST", "/api/games"), ("GET", "/api/games/{id}"), ("POST", "/api/games/{id}/move"),
    ("POST", "/api/games/{id}/continue"), ("POST", "/api/games/{id}/claim"),
    ("GET", "/api/games/{id}/analysis"), ("POST", "/api/replay"), ("GET", "/api/opponents"),
]
GAME_KEYS = {"id", "hand", "legal", "phase", "scores", "over", "your_turn", "talk", "target"}
CARDS = [card_str(c) for c in range(52)]
KEYS = ["opponent", "seed", "target", "practice", "cards", "hand", "crib", "record", "x"]

scalars = (st.none() | st.booleans() | st.integers() | st.integers(-3, 200)
           | st.floats(allow_nan=True) | st.text(max_size=12) | st.sampled_from(CARDS)
           | st.sampled_from(["random", "greedy", "nobody", "/etc", "agents/checkpoints/scratch"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=8)
near_valid = st.dictionaries(st.sampled_from(KEYS), values | st.lists(st.sampled_from(CARDS),
                                                                     max_size=3), max_size=4)
bodies = (near_valid | values | st.binary(max_size=40)).map(lambda b: ("raw", b)
                                                             if isinstance(b, bytes) else b)
params = st.dictionaries(st.sampled_from(["search", "offset", "limit", "seed", "x"]),
                         st.text(max_size=8) | st.integers(-5, 10**12).map(str), max_size=3)
odd_ids = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


def _record(seed: int) -> dict:
    rng = random.Random(seed)
    game = Game(seed=seed, first_dealer=seed % 2)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return game_record(game, ["a", "b"], seed % 2)


RECORD = _record(0)


@st.composite
def mutated_records(draw):
    """A real record with a few keys replaced, dropped or cut short."""
    record = json.loads(json.dumps(RECORD))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(record)))
        how = draw(st.sampled_from(["replace", "drop", "cut", "inner"]))
        if how == "replace":
            record[key] = draw(values)
        elif how == "drop":
            record.pop(key)
        elif how == "cut" and isinstance(record[key], list):
            record[key] = record[key][:draw(st.integers(0, len(record[key])))]
        elif how == "inner" and isinstance(record[key], list) and record[key]:
            i = draw(st.integers(0, len(record[key]) - 1))
            record[key][i] = draw(values)
    return {"record": record}


class Table:
    """One app for the whole module (a big per-client cap: the fuzz creates many games) and the
    game the requests aim at, replaced by a fresh one when it ends."""

    def __init__(self) -> None:
        self.app = create_app(store=MemoryStore(per_client=10**6, total=10**6))
        self.client = TestClient(self.app)
        self.game_id = self.fresh()

    def fresh(self) -> str:
        answer = self.client.post("/api/games", json={"opponent": "random", "seed": 5})
        return answer.json()["id"]

    def snapshot(self) -> tuple:
        session = self.app.state.games.get(self.game_id).session
        return (json.dumps(session.view(), sort_keys=True), len(session.game.log),
                list(session.game.scores), len(session.claims))


@pytest.fixture(scope="module")
def table():
    return Table()


def check(table: Table, method: str, path: str, body, query: dict, use_real_id: bool,
          odd_id: str) -> None:
    if table.app.state.games.get(table.game_id).session.over:
        table.game_id = table.fresh()
    game_id = table.game_id if use_real_id else odd_id
    url = path.replace("{id}", quote(game_id, safe=""))
    before = table.snapshot()
    if isinstance(body, tuple):  # raw bytes, maybe not JSON at all
        response = table.client.request(method, url, params=query, content=body[1],
                                        headers={"content-type": "application/json"})
    elif method == "GET":
        response = table.client.request(method, url, params=query)
    else:  # json.dumps writes NaN and Infinity, which Python's reader takes: they are tried too
        response = table.client.request(method, url, params=query, content=json.dumps(body),
                                        headers={"content-type": "application/json"})
    status = response.status_code
    assert status < 500, (method, url, body, response.text)
    after = table.snapshot()
    if status >= 400:
        assert 400 <= status < 500
        detail = response.json()["detail"]
        assert detail and isinstance(detail, (str, list)), response.text
        assert len(response.content) < 10_000, "an error answer echoed too much"
        assert after == before, f"a refused {method} {url} changed the game"
        return
    assert status == 200
    data = response.json()
    if method == "GET" and "{id}" in path:
        assert after == before, "a GET changed the game"
    if path == "/api/opponents":
        assert {"names", "checkpoints", "shipped", "others"} <= set(data)
    elif path == "/api/replay":
        assert len(data["frames"]) == len(body["record"]["actions"]) + 1
    elif path.endswith("/analysis"):
        assert data["kind"] in ("discard", "play") and data["options"]
    else:
        assert GAME_KEYS <= set(data), sorted(data)
        if path != "/api/games":
            assert data["id"] == game_id and data == table.client.get(f"/api/games/{game_id}").json()


def fuzz(budget: int):
    def run(table, endpoint, data):
        method, path = endpoint
        if path == "/api/replay" and data.draw(st.booleans()):
            body = data.draw(mutated_records())
        else:
            body = data.draw(bodies)
        check(table, method, path, body, data.draw(params), data.draw(st.booleans()),
              data.draw(odd_ids))

    return settings(max_examples=budget, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])(given(data=st.data())(run))


_quick = fuzz(30)
_slow = fuzz(600)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[f"{m} {p}" for m, p in ENDPOINTS])
def test_fuzz_every_endpoint_answers_4xx_or_a_valid_state(table, endpoint):
    _quick(table, endpoint)


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[f"{m} {p}" for m, p in ENDPOINTS])
def test_fuzz_every_endpoint_at_length(table, endpoint):
    _slow(table, endpoint)


def test_the_fuzz_reaches_both_answers(table):
    """Not vacuous: the strategies produce accepted moves and accepted replays as well as refusals."""
    client, gid = table.client, table.fresh()
    view = client.get(f"/api/games/{gid}").json()
    while not view["your_turn"]:
        view = client.post(f"/api/games/{gid}/continue").json()
    assert client.post(f"/api/games/{gid}/move", json={"cards": view["legal"][:2]}).status_code \
        == 200
    assert client.post("/api/replay", json={"record": RECORD}).status_code == 200
    assert client.post("/api/replay", json={"record": {**RECORD, "actions": RECORD["actions"][:-1]}
                                            }).status_code == 400
