"""The player's home in a real browser (headless Chromium, as ``test_browser``): two browser
contexts are two players who cannot see each other's games, the statistics page draws what
``/api/stats`` says (under the Content-Security-Policy), and the page offers the game in
progress (issue 25)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("uvicorn", reason="crib serve needs uvicorn (the play extra)")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (the dev extra installs it)")

from test_browser import chromium, running  # noqa: E402

from crib_play.server import create_app  # noqa: E402


def finish_through(request, view: dict) -> dict:
    """Play ``view``'s game to the end with the browser context's own cookie (the scripted
    person: continue after a show, else the first legal cards)."""
    for _ in range(5000):
        if view["over"]:
            return view
        if view["show"] is not None:
            answer = request.post(f"/api/games/{view['id']}/continue")
        else:
            answer = request.post(f"/api/games/{view['id']}/move",
                                  data={"cards": view["legal"][:view["cards_needed"]]})
        assert answer.ok, answer.text()
        view = answer.json()
    raise AssertionError("the game did not end")


@pytest.fixture()
def browser():
    with chromium() as launched:
        yield launched


def test_two_players_statistics_page_and_the_game_in_progress(browser, tmp_path):
    app = create_app(db_path=tmp_path / "games.sqlite3")
    with running(app) as url:
        ann = browser.new_context(base_url=url, viewport={"width": 1300, "height": 900})
        bob = browser.new_context(base_url=url)
        page = ann.new_page()
        page.set_default_timeout(15_000)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(f"{m.text} {m.location.get('url')}")
                if m.type == "error" and "favicon.ico" not in str(m.location) else None)
        page.goto("/")
        game = ann.request.post("/api/games", data={"opponent": "random", "seed": 4}).json()
        assert bob.request.get(f"/api/games/{game['id']}").status == 404
        assert bob.request.post(f"/api/games/{game['id']}/move",
                                data={"cards": game["legal"][:2]}).status == 404
        finish_through(ann.request, game)
        finish_through(ann.request, ann.request.post(
            "/api/games", data={"opponent": "greedy", "seed": 5}).json())

        page.goto("/stats")
        page.wait_for_selector("body[data-loaded='1']")
        stats = ann.request.get("/api/stats").json()
        rows = page.locator("#by-opponent tbody tr")
        assert rows.count() == 2
        for i, name in enumerate(sorted(stats["opponents"])):
            o = stats["opponents"][name]
            cells = rows.nth(i).locator("td").all_inner_texts()
            assert cells[:3] == [name, str(o["games"]), str(o["wins"])]
            assert cells[4] == f"{o['skunks_given']} / {o['skunks_taken']}"
            assert cells[8] == f"{o['discard_regret']:.2f}"
        page.fill("#player-name", "Ann")
        page.click("#save-name")
        page.wait_for_function("() => document.querySelector('#summary').textContent"
                               ".startsWith('Ann:')")
        page.wait_for_function("() => document.querySelector('#plot').complete && "
                               "document.querySelector('#plot').naturalWidth > 0")

        other = bob.new_page()
        other.goto(url + "/stats")
        other.wait_for_selector("body[data-loaded='1']")
        assert other.locator("#by-opponent tbody tr").count() == 0
        assert "No games yet" in other.inner_text("#summary")

        unfinished = ann.request.post("/api/games", data={"opponent": "random", "seed": 6})
        page.goto("/")
        page.wait_for_selector("#resume", state="visible")
        page.click("#resume")
        # The game shows before its board is drawn: wait for the hand itself.
        hand = len(unfinished.json()["hand"])
        page.wait_for_function(f"() => document.querySelectorAll('#hand .card').length == {hand}")
        assert page.locator("#hand .card").count() == hand
        other.goto(url + "/")
        other.wait_for_selector("#opponent option[value=random]", state="attached")
        assert other.locator("#resume").is_hidden()
        assert problems == []  # nothing refused by the Content-Security-Policy, no script error
