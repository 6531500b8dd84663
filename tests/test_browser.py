"""``crib serve`` in a real browser: headless Chromium (Debian's ``chromium`` package, installed by
``make browser``) driven by Playwright plays a whole game against ``random`` by clicking, checks
that the scores on the page are the engine's, tries illegal clicks and opens a replay (issue 13);
plays a checkpoint whose folder is named like an HTML tag and checks that no script runs and the
name shows as text (issue 27).

Skipped, with the reason, only where Playwright or a Chromium binary is missing. With
``CRIB_SCREENSHOTS=DIR`` the board is saved at the deal, mid-play, at the show and in the replay (the README's
pictures come from ``CRIB_SCREENSHOTS=docs/img``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="crib serve needs the play extra (pip install -e '.[play]')")
uvicorn = pytest.importorskip("uvicorn", reason="crib serve needs uvicorn (the play extra)")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (the dev extra installs it)")

from agents.registry import SHIPPED_CHECKPOINTS  # noqa: E402
from crib_play.server import create_app  # noqa: E402
from training.record import read_records, replay  # noqa: E402

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


@contextlib.contextmanager
def chromium():
    """Debian's headless Chromium under Playwright (the test is skipped without one)."""
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium binary (run `make browser`, or apt-get install chromium; "
                    "CRIB_CHROMIUM=PATH names another)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True,
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


def chromium_path() -> str | None:
    """The Chromium binary: $CRIB_CHROMIUM, Debian's path, or one on PATH."""
    for candidate in (os.environ.get("CRIB_CHROMIUM"), *CHROMIUM_PATHS):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def running(app):
    """``app`` served by uvicorn on a free port in this process (a thread); yields its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("crib serve did not start within 20 s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``crib serve`` on a free port in this process (a thread), recording finished games."""
    record = tmp_path_factory.mktemp("serve") / "games.jsonl"
    app = create_app(record_path=record)
    with running(app) as url:
        yield url, record, app


@pytest.fixture(scope="module")
def page(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.set_default_timeout(15_000)
        yield page


def shoot(page, name: str, clip: dict | None = None) -> None:
    """With ``CRIB_SCREENSHOTS=DIR``, the page as it shows now (or the ``clip`` box of it) saved
    as DIR/NAME.png; without it nothing is written."""
    folder = os.environ.get("CRIB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=clip is not None,
                        clip=clip)


def click_and_wait(page, target):
    """Click ``target`` (a selector or a locator), wait for the API's answer and for the page to
    have drawn it (the page counts its redraws in ``body[data-renders]``); returns the response."""
    before = int(page.get_attribute("body", "data-renders") or 0)
    with page.expect_response(lambda r: "/api/" in r.url and r.request.method != "GET") as info:
        if isinstance(target, str):
            page.click(target)
        else:
            target.click()
    page.wait_for_function("n => Number(document.body.dataset.renders || 0) > n", arg=before)
    return info.value


def shown_scores(page) -> tuple[int, int]:
    scores = [page.inner_text(f"#lane-{side} .score").split()[0] for side in ("you", "opponent")]
    return int(scores[0]), int(scores[1])


def test_a_whole_game_by_clicking_then_its_replay(server, page):
    started = time.monotonic()
    url, record_path, app = server
    page.goto(url + "/")
    page.wait_for_selector("#opponent option[value=random]", state="attached")
    page.select_option("#opponent", "random")
    page.fill("#seed", "7")
    click_and_wait(page, "#new-game")
    page.wait_for_selector("#hand button.card")
    shoot(page, "deal")

    # An illegal click: throwing with no cards chosen is refused with the reason, nothing changes.
    hand_before = page.inner_text("#hand")
    if page.is_visible("#throw"):
        response = click_and_wait(page, "#throw")
        assert response.status == 400
        assert "lay 2 cards to the crib, got 0" in page.inner_text("#message")
        assert page.inner_text("#hand") == hand_before

    illegal_tried = shot_play = shot_show = False
    for _ in range(600):
        if page.is_visible("#result") and not page.is_visible("#continue"):
            break
        if page.is_visible("#show-area"):
            if not shot_show:
                shoot(page, "show")
                shot_show = True
            if page.is_visible("#continue"):
                click_and_wait(page, "#continue")
                continue
            break  # the game ended in this show
        if page.is_visible("#throw"):
            page.locator("#hand button.card").nth(0).click()  # the hand redraws on each choice
            page.locator("#hand button.card").nth(1).click()
            assert click_and_wait(page, "#throw").status == 200
            continue
        illegal = page.locator("#hand button.card:not(.legal)")
        if illegal.count() and not illegal_tried:  # a card that would pass 31
            count, hand = page.inner_text("#count"), page.inner_text("#hand")
            assert click_and_wait(page, illegal.first).status == 400
            assert "past 31" in page.inner_text("#message")
            assert (page.inner_text("#count"), page.inner_text("#hand")) == (count, hand)
            illegal_tried = True
        if not shot_play and len(page.query_selector_all("#sequence .card")) >= 3:
            shoot(page, "play")
            shot_play = True
        response = click_and_wait(page, page.locator("#hand button.card.legal").first)
        assert response.status == 200, response.text()
    else:
        pytest.fail("the game did not end within 600 clicks")

    assert page.is_visible("#result")
    (game_id, (session, _)), = app.state.games.items()
    assert session.over
    assert shown_scores(page) == tuple(session.game.scores)  # the page shows the engine's scores
    result = page.inner_text("#result-title")
    assert result.startswith("you win" if session.game.winner == 0 else "random wins")
    assert illegal_tried and shot_show

    # The finished game was recorded; open it in the replay viewer and step to its end.
    records = read_records(record_path)
    assert len(records) == 1 and replay(records[0]).scores == session.game.scores
    page.set_input_files("#replay-file", str(record_path))
    page.wait_for_selector("#open-replay", state="visible")
    click_and_wait(page, "#open-replay")
    page.wait_for_selector("#replay-board .replay-hand")
    assert page.inner_text("#replay-step").startswith(
        f"move 0 of {len(records[0]['actions'])}")
    page.click("#replay-next")
    page.click("#replay-next")
    assert page.inner_text("#replay-step").startswith("move 2 of")
    # both hands visible in a replay: twelve cards, two of them thrown already
    assert len(page.query_selector_all("#replay-board .replay-hand .card")) == 12
    for _ in range(7):  # into the play of the first deal, for the picture
        page.click("#replay-next")
    shoot(page, "replay")
    page.click("#replay-end")
    seats = [page.inner_text(f"#replay-seat-{p}") for p in (0, 1)]
    final = [int(text.split(": ")[1].split()[0]) for text in seats]
    assert final == session.game.scores
    assert time.monotonic() - started < 90


HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_checkpoint_named_like_html_shows_as_text_and_runs_no_script(page, tmp_path):
    """A checkpoint copied into ``runs/<img src=x onerror=alert(1)>``: offered by its name, played
    to the end (where the name goes into the result table), and no script from it ever runs."""
    hostile = tmp_path / "runs" / HOSTILE
    shutil.copytree(SHIPPED_CHECKPOINTS / "scratch", hostile)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    app = create_app(checkpoint_roots=(tmp_path / "runs",))
    with running(app) as url:
        # a short game (target 5) so that the result, with the opponent's name, comes quickly
        def short_game(route):
            body = json.loads(route.request.post_data)
            route.continue_(post_data=json.dumps({**body, "target": 5, "seed": 3}))

        page.route("**/api/games", short_game)
        response = page.goto(url + "/")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_selector("#opponent option[value=random]", state="attached")
        values = page.eval_on_selector_all("#opponent option", "os => os.map(o => o.value)")
        assert str(hostile) in values  # offered under its own name
        page.select_option("#opponent", str(hostile))
        click_and_wait(page, "#new-game")
        for _ in range(60):
            if page.is_visible("#result"):
                break
            if page.is_visible("#throw"):
                page.locator("#hand button.card").nth(0).click()
                page.locator("#hand button.card").nth(1).click()
                click_and_wait(page, "#throw")
            elif page.is_visible("#continue"):
                click_and_wait(page, "#continue")
            else:
                click_and_wait(page, page.locator("#hand button.card.legal").first)
        else:
            pytest.fail("the game to 5 did not end within 60 clicks")
        page.unroute("**/api/games")
        assert HOSTILE in page.inner_text("#result")  # the name as literal text in the table
        assert HOSTILE in page.inner_text("#lane-opponent .who")
        assert page.locator("img").count() == 0  # no element was made from the name
        # Defence in depth: an inline handler that did reach the page would be blocked by the CSP.
        blocked = page.evaluate("""() => new Promise((done) => {
            document.addEventListener("securitypolicyviolation", (e) => done(e.violatedDirective));
            const box = document.createElement("div");
            box.innerHTML = '<img src="/nowhere.png" onerror="window.__ran = 1">';
            document.body.append(box);
            setTimeout(() => done("no violation"), 5000);
        })""")
        assert blocked.startswith("script-src"), blocked
        assert page.evaluate("window.__ran") is None
    assert dialogs == []
