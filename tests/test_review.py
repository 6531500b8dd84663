"""Game reviews (issue 25): ``crib_play.review`` on a scripted game, ``crib review FILE --game N``,
and ``crib serve``'s reviews (computed in the background, kept with the game, bounded)."""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from agents.analysis import analyze_discards
from crib_cli.main import app as cli
from crib_env.cards import card_str, parse_cards
from crib_play.chances import throw_win_chances
from crib_play.review import MIN_LOSS, ReviewSettings, review_record
from crib_play.session import GameSession
from training.record import write_records

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx (the dev extra)")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from crib_play.review_jobs import ReviewJobs  # noqa: E402
from crib_play.server import create_app  # noqa: E402

# As tests/test_browser_review.py: a game to 31, seed 1, where the person's worst throw of the
# first deal (by the exact analyzer) gives away a large part of the chance to win.
SEED, TARGET = 1, 31
SETTINGS = ReviewSettings(sims=100, agent="champion-search:sims=8")


def scripted_game() -> tuple[dict, list[str]]:
    """The record of that game (the worst throw first, the analyzer's best after, the first legal
    card in the play) and the first deal's throw."""
    session = GameSession.against("random", seed=SEED, target=TARGET)
    first = None
    while not session.over:
        if session.pause is not None:
            session.continue_()
            continue
        view = session.view()
        if view["phase"] == "discard":
            options = analyze_discards(session.game.hands[0], dealer=session.game.dealer == 0)
            chosen = [card_str(c) for c in (options[-1] if first is None else options[0]).discard]
            first = first or chosen
            session.move(chosen)
        else:
            session.move(view["legal"][:1])
    return session.record(), first


@pytest.fixture(scope="module")
def game():
    record, first = scripted_game()
    return record, first, SETTINGS.review(record)


def test_the_clearly_worse_throw_is_listed_first_with_its_loss(game):
    record, first, review = game
    d = review["decisions"][review["biggest"][0]]
    assert d["kind"] == "discard" and d["deal"] == 1 and d["chosen"] == first
    hand = parse_cards(d["hand"])
    chances = throw_win_chances(hand, d["dealer"], 0, 0, TARGET, SETTINGS.sims, SETTINGS.seed)
    best = max(chances.values(), key=lambda c: c.chance)
    assert d["loss"] == pytest.approx(best.chance - chances[frozenset(parse_cards(first))].chance)
    assert d["loss"] > 0.10 and d["best_win"] == pytest.approx(best.chance)
    assert d["text"].startswith(f"deal 1, threw {' '.join(first)} from ")
    assert f"(-{100 * d['loss']:.1f}%)" in d["text"]


def test_every_decision_of_the_seat_is_there_in_order_with_its_options(game):
    record, _, review = game
    decisions = review["decisions"]
    assert [d["n"] for d in decisions] == list(range(len(decisions)))
    assert [d["action"] for d in decisions] == sorted(d["action"] for d in decisions)
    discards = [d for d in decisions if d["kind"] == "discard"]
    assert [d["deal"] for d in discards] == list(range(1, len(record["deals"]) + 1))
    for d in discards:
        assert len(d["options"]) == 15
        assert sorted(d["chosen"]) == sorted(record["deals"][d["deal"] - 1]["discards"][0])
    for d in decisions:
        chosen = record["actions"][d["action"]]
        if d["kind"] == "play":
            assert d["chosen"] == chosen and len(d["options"]) > 1  # a forced card is no choice
            values = {o["card"]: o["win_chance"] for o in d["options"]}
        else:
            assert chosen in d["chosen"]
            values = {" ".join(o["throw"]): o["win_chance"] for o in d["options"]}
        assert d["best_win"] == max(values.values()) and d["loss"] >= 0
        assert d["loss"] == pytest.approx(d["best_win"] - d["chosen_win"])
    ranked = [decisions[n]["loss"] for n in review["biggest"]]
    assert ranked == sorted(ranked, reverse=True) and min(ranked) >= MIN_LOSS
    worse = [d["loss"] for d in decisions if d["n"] not in review["biggest"]]
    assert len(review["biggest"]) < 5 or max(worse, default=0) <= min(ranked)


def test_the_other_seat_is_reviewed_from_its_own_cards(game):
    record, _, _ = game
    review = review_record(record, seat=1, sims=10, agent="champion-search:sims=2")
    assert review["seat"] == 1
    deal = record["deals"][0]
    first = next(d for d in review["decisions"] if d["kind"] == "discard")
    assert sorted(first["hand"]) == sorted(deal["hands"][1])
    assert sorted(first["chosen"]) == sorted(deal["discards"][1])


@pytest.mark.parametrize("kwargs, words", [({"seat": 2}, "--seat must be 0 or 1"),
                                           ({"sims": 1}, "--sims must be"),
                                           ({"agent": "random"}, "does not value its choices")])
def test_bad_settings_are_refused(game, kwargs, words):
    with pytest.raises(ValueError, match=words):
        review_record(game[0], **kwargs)


def test_a_record_that_does_not_replay_is_refused(game):
    broken = {**game[0], "scores": [1, 2]}
    with pytest.raises(ValueError, match="does not replay"):
        review_record(broken, sims=10)


def test_crib_review_prints_the_biggest_losses_first_and_json(game, tmp_path, monkeypatch):
    record, first, review = game
    path = tmp_path / "games.jsonl"
    write_records(path, [{**record, "players": ["Ann", "Bob"]}, record])
    asked = []  # the review itself is review_record's (above); here, what the command does with it

    def reviewed(rec, **settings):
        asked.append((rec, settings))
        return review

    monkeypatch.setattr("crib_play.review_report.review_record", reviewed)
    result = CliRunner().invoke(cli, ["review", str(path), "--game", "1", "--sims", "77",
                                      "--agent", "champion-search:sims=2", "--seed", "5",
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == review
    assert asked == [(record, {"seat": 0, "sims": 77, "agent": "champion-search:sims=2",
                               "seed": 5})]
    table = CliRunner().invoke(cli, ["review", str(path), "--game", "1"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert asked[-1] == (record, {"seat": 0, "sims": 2000, "agent": "champion-search",
                                  "seed": 0})
    text = table.output
    assert text.index("biggest losses") < text.index("every decision")
    top = next(line for line in text.splitlines() if line.strip("│ ").startswith("1 "))
    assert f"threw {' '.join(first)}" in top
    marked = [line for line in text.splitlines() if line.strip("│ ").startswith("!")]
    assert len(marked) == len(review["biggest"])
    for bad, words in ((["--game", "2"], "--game must be 0..1"), (["--seat", "3"], "--seat"),
                       (["--sims", "0"], "--sims")):
        refused = CliRunner().invoke(cli, ["review", str(path), *bad])
        assert refused.exit_code == 2 and words in refused.output, refused.output
    assert len(asked) == 2  # nothing reviewed for a refused command


# -- crib serve ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeldReviews(ReviewSettings):
    """Reviews that wait for ``release`` (to see the queue and the caps), then are trivial."""

    release: threading.Event = threading.Event()

    def review(self, record, seat=0):
        self.release.wait(30)
        return {"decisions": [], "biggest": [], "scores": record["scores"]}


def finish(client, view):
    while not view["over"]:
        if view["show"] is not None:
            view = client.post(f"/api/games/{view['id']}/continue").json()
        else:
            view = client.post(f"/api/games/{view['id']}/move",
                               json={"cards": view["legal"][:view["cards_needed"]]}).json()
    return view


def test_a_finished_games_review_is_computed_kept_with_the_game_and_only_its_players(tmp_path):
    db = tmp_path / "games.sqlite3"
    jobs = ReviewJobs(SETTINGS)
    client = TestClient(create_app(db_path=db, reviews=jobs))
    view = client.post("/api/games", json={"opponent": "random", "seed": SEED,
                                           "target": TARGET}).json()
    answer = client.get(f"/api/games/{view['id']}/review")
    assert answer.status_code == 409 and "not over" in answer.json()["detail"]
    view = finish(client, view)
    answer = client.get(f"/api/games/{view['id']}/review")
    assert answer.status_code == 202 and answer.json() == {"status": "computing"}
    assert jobs.wait(300)
    answer = client.get(f"/api/games/{view['id']}/review")
    assert answer.status_code == 200 and answer.json()["status"] == "done"
    review = answer.json()["review"]
    assert review["scores"] == [view["scores"]["you"]["front"],
                                view["scores"]["opponent"]["front"]]
    stranger = TestClient(client.app)
    assert stranger.get(f"/api/games/{view['id']}/review").status_code == 404
    listed = client.get("/api/player/games").json()["finished"]
    assert [g["id"] for g in listed] == [view["id"]] and listed[0]["reviewed"]
    # kept in the file: a new server on it answers at once, computing nothing
    idle = ReviewJobs(HeldReviews())
    again = TestClient(create_app(db_path=db, reviews=idle), cookies=client.cookies)
    answer = again.get(f"/api/games/{view['id']}/review")
    assert answer.status_code == 200 and answer.json()["review"] == review
    assert idle.state(("game", view["id"]))[0] == "none"


def test_crib_serve_reviews_each_game_as_it_ends(tmp_path):
    held = HeldReviews(release=threading.Event())
    jobs = ReviewJobs(held, eager=True)
    client = TestClient(create_app(reviews=jobs))
    view = finish(client, client.post("/api/games", json={"opponent": "random", "seed": 3,
                                                          "target": 15}).json())
    assert jobs.state(("game", view["id"]))[0] == "computing"  # queued by the last move
    held.release.set()
    assert jobs.wait(30)
    answer = client.get(f"/api/games/{view['id']}/review")
    assert answer.status_code == 200 and answer.json()["review"]["decisions"] == []


def test_a_recorded_games_review_and_the_limits(game):
    held = HeldReviews(release=threading.Event())
    jobs = ReviewJobs(held, queue=4, per_client=2)
    client = TestClient(create_app(reviews=jobs))
    record = game[0]
    first = client.post("/api/review", json={"record": record})
    assert first.status_code == 202 and first.json()["status"] == "computing"
    same = client.post("/api/review", json={"record": record})  # the same record: one job
    assert same.status_code == 202 and same.json()["id"] == first.json()["id"]
    second = client.post("/api/review", json={"record": {**record, "players": ["A", "B"]}})
    assert second.status_code == 202
    third = client.post("/api/review", json={"record": {**record, "players": ["C", "D"]}})
    assert third.status_code == 429 and "MAX_REVIEWS_PER_CLIENT" in third.json()["detail"]
    bad = client.post("/api/review", json={"record": {**record, "scores": [0, 0]}})
    assert bad.status_code == 400 and "not a replayable game record" in bad.json()["detail"]
    long = client.post("/api/review", json={"record": {**record, "actions": ["AS"] * 5000}})
    assert long.status_code == 413
    for n in range(2):  # another address fills the queue (4)
        jobs.submit(("record", f"x{n}"), record, "10.0.0.9")
    full = client.post("/api/review", json={"record": {**record, "players": ["E", "F"]}})
    assert full.status_code == 503 and "REVIEW_QUEUE" in full.json()["detail"]
    held.release.set()
    assert jobs.wait(30)
    done = client.get(f"/api/reviews/{first.json()['id']}")
    assert done.status_code == 200 and done.json()["review"]["scores"] == record["scores"]
    assert client.get("/api/reviews/nothing-here").status_code == 404


def test_a_failed_review_says_why():
    class Broken(ReviewSettings):
        def review(self, record, seat=0):
            raise ValueError("no agent here")

    record, _ = scripted_game()
    jobs = ReviewJobs(Broken())
    client = TestClient(create_app(reviews=jobs))
    key = client.post("/api/review", json={"record": record}).json()["id"]
    assert jobs.wait(30)
    answer = client.get(f"/api/reviews/{key}")
    assert answer.status_code == 500 and "no agent here" in answer.json()["detail"]
