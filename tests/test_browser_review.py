"""The game review in a real browser (headless Chromium, as ``test_browser``): a scripted game in
which the person throws a clearly worse pair at the first deal is reviewed, and the page lists
that throw first with the win-chance loss the simulation gives it, and marks it on the move list
(issue 25). With ``CRIB_SCREENSHOTS=DIR`` the review and the board are saved as PNGs."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
pytest.importorskip("uvicorn", reason="crib serve needs uvicorn (the play extra)")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (the dev extra installs it)")

from test_browser import chromium, running, shoot  # noqa: E402

from agents.analysis import analyze_discards  # noqa: E402
from crib_env.cards import card_str, parse_cards  # noqa: E402
from crib_play.chances import throw_win_chances  # noqa: E402
from crib_play.review import ReviewSettings  # noqa: E402
from crib_play.review_jobs import ReviewJobs  # noqa: E402
from crib_play.server import create_app  # noqa: E402

# A short game (to 31) keeps the review quick; seed 1 deals the person 4D 5C 6H 8C TS KS as pone,
# whose worst throw by the exact analyzer (5C 8C) gives away about 18 points of win chance.
SEED, TARGET = 1, 31
SETTINGS = ReviewSettings(sims=100, agent="champion-search:sims=8")


def play_scripted(request, view: dict) -> tuple[dict, dict]:
    """The person throws the worst pair at the first deal and the analyzer's best after it, and
    lays the first legal card; returns the final view and the first deal's throw."""
    first = None
    for _ in range(500):
        if view["over"]:
            return view, first
        gid = view["id"]
        if view["show"] is not None:
            view = request.post(f"/api/games/{gid}/continue").json()
            continue
        if view["phase"] == "discard":
            options = analyze_discards(view["hand"], dealer=view["dealer"] == "you")
            chosen = options[-1] if first is None else options[0]
            if first is None:
                first = {"hand": list(view["hand"]), "dealer": view["dealer"] == "you",
                         "throw": [card_str(c) for c in chosen.discard]}
            answer = request.post(f"/api/games/{gid}/move",
                                  data={"cards": [card_str(c) for c in chosen.discard]})
        else:
            answer = request.post(f"/api/games/{gid}/move", data={"cards": view["legal"][:1]})
        assert answer.ok, answer.text()
        view = answer.json()
    raise AssertionError("the game did not end")


@pytest.mark.slow  # about half a minute on a busy two-core machine (the quick tier has
# tests/test_review.py's test of the same game through the API)
def test_the_review_lists_a_clearly_worse_throw_first_with_its_loss(tmp_path):
    app = create_app(db_path=tmp_path / "games.sqlite3", reviews=ReviewJobs(SETTINGS))
    with chromium() as browser, running(app) as url:
        context = browser.new_context(base_url=url, viewport={"width": 1100, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text)
                if m.type == "error" and "favicon.ico" not in str(m.location) else None)
        page.goto("/")
        view = context.request.post("/api/games", data={"opponent": "random", "seed": SEED,
                                                        "target": TARGET}).json()
        final, first = play_scripted(context.request, view)

        # What the review must say about that throw: the simulation at 0-0, the same settings.
        hand = parse_cards(first["hand"])
        chances = throw_win_chances(hand, first["dealer"], 0, 0, TARGET, SETTINGS.sims,
                                    SETTINGS.seed)
        best = max(chances.values(), key=lambda c: c.chance)
        loss = best.chance - chances[frozenset(parse_cards(first["throw"]))].chance
        assert loss > 0.10  # clearly worse

        for n, opponent in enumerate(("greedy", "random", "greedy", "random", "greedy")):
            other = context.request.post("/api/games", data={"opponent": opponent,
                                                             "seed": 10 + n,
                                                             "target": TARGET}).json()
            play_scripted(context.request, other)
        page.goto("/stats")
        page.wait_for_selector("body[data-loaded='1']")
        page.fill("#player-name", "Ann")
        page.click("#save-name")
        page.wait_for_function("() => document.querySelector('#summary').textContent"
                               ".startsWith('Ann:')")
        page.wait_for_function("() => document.querySelector('#plot').complete && "
                               "document.querySelector('#plot').naturalWidth > 0")
        links = page.locator("#games-list a")
        assert links.count() == 6  # every finished game, newest first, each with its review
        assert links.last.get_attribute("href") == f"/#review={final['id']}"
        shoot(page, "stats", clip={"x": 0, "y": 0, "width": 1100, "height": 900})

        page.goto(f"/#game={final['id']}")
        page.wait_for_selector("#review-game", state="visible")  # the button at the game's end
        page.click("#review-game")
        page.wait_for_selector("#review[data-loaded='1']", timeout=120_000)  # computed meanwhile
        top = page.locator("#review-biggest li").first
        assert top.get_attribute("data-n") == "0"  # the first decision: the first deal's throw
        assert float(top.get_attribute("data-loss")) == pytest.approx(loss, abs=1e-4)
        text = top.inner_text()
        assert text.startswith(f"deal 1, threw {' '.join(first['throw'])}")
        assert f"(-{100 * loss:.1f}%)" in text
        marked = page.locator("#review-moves li.marked")
        assert marked.count() == page.locator("#review-biggest li").count()
        assert marked.first.get_attribute("data-n") == "0"
        assert page.locator("#review-moves li").first.inner_text().startswith("! deal 1, threw")
        review = context.request.get(f"/api/games/{final['id']}/review").json()["review"]
        assert review["biggest"][0] == 0 and review["decisions"][0]["kind"] == "discard"
        box = page.locator("#review").bounding_box()  # in the viewport; the clip is in the page
        top_y = box["y"] + page.evaluate("window.scrollY")
        shoot(page, "review", clip={"x": box["x"], "y": top_y, "width": min(box["width"], 900),
                                    "height": min(box["height"], 420)})
        assert problems == []
