"""``crib serve``: the web page (FastAPI, served by uvicorn) on ``GameSession``.

The server holds every game; the browser gets ``GameSession.view()``, which carries only what the
person may see. Every request is validated: a body of the wrong shape is answered 422 by FastAPI,
a move the rules refuse 400, a request out of turn 409, a body or record past a limit 413, a client
past its games 429 and a server too busy for one more replay 503, each with ``{"detail": reason}``,
and the game is left as it was. No error repeats more than a few hundred characters of what was
sent. Games are independent (each has its own lock) and kept by ``saved.SavedStore`` in an SQLite
file (``crib serve --db``; every accepted move committed before its answer, a full disk answered
507 with nothing accepted lost) or, for tests, ``store.MemoryStore``: per-player and per-address
caps, no eviction of anyone's game (issue 27). Each game belongs to the player of the browser
that made it (``home``: a secret token in an HttpOnly cookie); to anyone else its id is 404.
``limits`` holds every limit and says why.
Replays and analyses run on ``limits.ExpensivePool``, a few threads of their own, and reviews on
``review_jobs.ReviewJobs``' one thread, so they never take the threads that serve moves. Every
answer carries a Content-Security-Policy that allows scripts only from ``/static`` (the page
inserts every text from the server as text, never HTML).

Endpoints (JSON): ``GET /api/opponents`` [?search=&offset=&limit=]; ``POST /api/games``
{opponent, seed?, target?, practice?}; ``GET /api/games/{id}``; ``POST /api/games/{id}/move``
{cards: [..]}; ``POST /api/games/{id}/continue``; ``POST /api/games/{id}/claim`` {hand, crib?};
``GET /api/games/{id}/analysis``; ``GET /api/board`` [?target=] (the peg board's holes,
``board``); ``POST /api/replay`` {record} -> every position of a recorded
game, both hands visible; ``GET /api/games/{id}/review`` (the finished game's review, computed in
the background when it ends: 200 with it, 202 while computing), ``POST /api/review`` {record} and
``GET /api/reviews/{id}`` (the review of a recorded game; ``review_jobs``); ``GET
/api/player/games`` (the player's games in progress and finished ones), ``GET/POST
/api/player`` {name}, ``GET /api/stats``, ``GET /api/stats/plot.svg`` and the page ``/stats``
(``home``). The page itself is ``static/`` (plain HTML, JS and CSS, no build step).
"""

from __future__ import annotations

import secrets
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.registry import AGENT_NAMES
from crib_env.game import DEFAULT_TARGET

from . import commands, limits
from .board import board_layout
from .checkpoints import CHECKPOINT_ROOTS, PAGE, checkpoint_page, find_checkpoints
from .db import DatabaseFileError, StorageFull
from .home import add_home_routes, player_of, player_or_new
from .replays import replay_frames
from .review import REVIEW_SIMS, ReviewSettings
from .review_jobs import ReviewJobs, record_key
from .session import MAX_CLAIM, GameSession, MoveError
from .store import MemoryStore

__all__ = ["CHECKPOINT_ROOTS", "create_app", "find_checkpoints", "replay_frames", "serve_command"]
STATIC = resources.files("crib_play") / "static"
CardText = Annotated[str, Field(max_length=8)]  # "10H" and the suit symbols fit; a card, not a file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not ignored


class NewGame(_Strict):
    opponent: str = Field(min_length=1, max_length=500)
    seed: int | None = Field(default=None, ge=0, lt=2**32)
    target: int = Field(default=DEFAULT_TARGET, ge=1, le=DEFAULT_TARGET)
    practice: bool = False


class Move(_Strict):
    cards: list[CardText] = Field(max_length=2)  # an empty list gets the game's own reason (400)


class Claim(_Strict):
    hand: int | None = Field(default=None, ge=0, le=MAX_CLAIM)
    crib: int | None = Field(default=None, ge=0, le=MAX_CLAIM)


class Replay(_Strict):
    record: dict[str, Any]


class ReviewRequest(_Strict):
    record: dict[str, Any]


def client_of(request: Request) -> str:
    """Who is asking, for the per-client cap: the address (issue 25's player token will do better
    behind a proxy, where every request has the proxy's address)."""
    return request.client.host if request.client else "unknown"


def create_app(record_path: Path | None = None, checkpoint_roots: tuple[Path, ...] | None = None,
               store: Any = None, expensive: limits.ExpensivePool | None = None,
               db_path: Path | None = None, reviews: ReviewJobs | None = None) -> FastAPI:
    """The web app. ``record_path``: append every finished game there (``training.record``);
    ``checkpoint_roots``: where to look for checkpoints besides the shipped ones (default
    ``checkpoints/`` and ``runs/``); ``store``, ``expensive``: the games and the expensive pool
    (defaults as ``store`` and ``limits`` state); ``db_path``: keep the games in this SQLite
    file (``saved.SavedStore``) instead of in memory; ``reviews``: the background game reviews
    (default ``review.REVIEW_SIMS`` simulations a throw, each game reviewed when its review is
    asked for; ``crib serve`` reviews every game as it ends)."""
    app = FastAPI(title="crib serve", docs_url=None, redoc_url=None)  # docs need inline scripts
    app.add_middleware(limits.SecurityHeaders)
    app.add_middleware(limits.BodyLimit)  # outermost: nothing reads a body past the limit
    app.add_exception_handler(StarletteHTTPException, limits.http_error)
    app.add_exception_handler(RequestValidationError, limits.validation_error)
    roots = CHECKPOINT_ROOTS if checkpoint_roots is None else checkpoint_roots
    if store is None and db_path is not None:
        from .saved import SavedStore

        store = SavedStore(db_path)
    games = MemoryStore() if store is None else store
    pool = limits.ExpensivePool() if expensive is None else expensive
    jobs = ReviewJobs(ReviewSettings(sims=REVIEW_SIMS)) if reviews is None else reviews
    recorded: set[str] = set()
    app.state.games = games  # for tests and tools that check the page against the engine
    app.state.expensive = pool
    app.state.reviews = jobs

    def answer(game_id: str, session: GameSession, ended: bool = True) -> dict[str, Any]:
        # ``ended``: this request may have ended the game (a finished game read again after a
        # restart of a server with --db is not recorded twice)
        if ended and session.over and record_path is not None and game_id not in recorded:
            from training.record import write_records

            recorded.add(game_id)
            write_records(record_path, [session.record()], append=True)
        return {"id": game_id, **session.view()}

    def owner(request: Request) -> str:
        player = player_of(request, games)
        return player.id if player else "nobody"  # no game is nobody's: 404

    def act(game_id: str, request: Request, command: commands.Command | None) -> dict[str, Any]:
        game = games.get(game_id, owner(request))
        with game.lock:  # one request at a time per game; other games go on in parallel
            if game.stale:  # a request before this one could not be saved: rebuilt from the file
                game = games.get(game_id, owner(request))
            was_over = game.session.over
            if command is not None:
                try:
                    commands.apply_command(game.session, command)
                except MoveError as err:
                    raise HTTPException(err.status, str(err)) from err
            try:  # committed before the answer: a crash after it loses nothing accepted
                games.saved(game_id, game, command)
            except StorageFull as err:
                raise HTTPException(507, str(err)) from err
            except DatabaseFileError as err:
                raise HTTPException(503, str(err)) from err
            if game.session.over and not was_over and jobs.eager:
                start_review(game_id, game.session, owner(request), quiet=True)
            return answer(game_id, game.session, ended=not was_over)

    def start_review(game_id: str, session: GameSession, client: str, quiet: bool) -> None:
        """Queue the game's review (kept with the game when done); ``quiet``: a full queue or
        cap is no error now (the review is queued again when it is asked for)."""
        try:
            jobs.submit(("game", game_id), session.record(), client,
                        on_done=lambda review: games.save_review(game_id, review))
        except HTTPException:
            if not quiet:
                raise

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return (STATIC / "index.html").read_text()

    @app.get("/api/opponents")
    def opponents(search: Annotated[str, Query(max_length=200)] = "",
                  offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
                  limit: Annotated[int, Query(ge=1, le=500)] = PAGE) -> dict[str, Any]:
        return {"names": list(AGENT_NAMES), **checkpoint_page(roots, search, offset, limit)}

    @app.post("/api/games")
    def new_game(body: NewGame, request: Request, response: Response) -> dict[str, Any]:
        name = body.opponent.strip()
        if name not in AGENT_NAMES and name not in find_checkpoints(roots):
            # no arbitrary paths from the browser: only what GET /api/opponents offers
            raise HTTPException(400, f"unknown opponent {limits.clip(body.opponent)!r}: choose "
                                     f"one of {', '.join(AGENT_NAMES)} or a checkpoint that GET "
                                     f"/api/opponents lists")
        # the seed is always drawn here, so a saved game can be rebuilt from it
        seed = secrets.randbelow(2**32) if body.seed is None else body.seed
        try:
            session = GameSession.against(body.opponent, seed=seed, target=body.target,
                                          practice=body.practice)
        except ValueError as err:  # an unknown agent or an unreadable checkpoint
            raise HTTPException(400, str(err)) from err
        player = player_or_new(request, response, games)
        try:
            game_id = games.add(client_of(request), session, player=player.id)
        except StorageFull as err:
            raise HTTPException(507, str(err)) from err
        return answer(game_id, session)

    @app.get("/api/games/{game_id}")
    def state(game_id: str, request: Request) -> dict[str, Any]:
        return act(game_id, request, None)

    @app.post("/api/games/{game_id}/move")
    def move(game_id: str, body: Move, request: Request) -> dict[str, Any]:
        return act(game_id, request, commands.move(body.cards))

    @app.post("/api/games/{game_id}/continue")
    def continue_(game_id: str, request: Request) -> dict[str, Any]:
        return act(game_id, request, commands.continue_())

    @app.post("/api/games/{game_id}/claim")
    def claim(game_id: str, body: Claim, request: Request) -> dict[str, Any]:
        return act(game_id, request, commands.claim(hand=body.hand, crib=body.crib))

    @app.get("/api/games/{game_id}/analysis")
    async def analysis(game_id: str, request: Request) -> dict[str, Any]:
        game = games.get(game_id, owner(request))

        def analyse() -> dict[str, Any]:
            with game.lock:
                try:
                    return game.session.analysis()
                except MoveError as err:
                    raise HTTPException(err.status, str(err)) from err

        return await pool.run(analyse)

    @app.get("/api/board")
    def board(target: Annotated[int, Query(ge=2, le=DEFAULT_TARGET)] = DEFAULT_TARGET
              ) -> dict[str, Any]:
        return board_layout(target)

    @app.post("/api/replay")
    async def replay(body: Replay) -> dict[str, Any]:
        record = body.record
        limits.check_record(record)
        try:
            frames = await pool.run(replay_frames, record)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
            raise HTTPException(400, f"not a replayable game record: "
                                     f"{limits.clip(str(err), 4 * limits.MAX_ECHO)}") from err
        return {"players": record["players"], "frames": frames,
                "scores": record["scores"], "winner": record.get("winner")}

    def review_answer(state: str, value: Any, response: Response) -> dict[str, Any]:
        if state == "failed":
            raise HTTPException(500, f"the review failed: {value}")
        if state == "done":
            return {"status": "done", "review": value}
        response.status_code = 202  # the page asks again in a moment
        return {"status": "computing"}

    @app.get("/api/games/{game_id}/review")
    def game_review(game_id: str, request: Request, response: Response) -> dict[str, Any]:
        """The finished game's review: 200 with it, or 202 while it is computed."""
        game = games.get(game_id, owner(request))
        stored = games.review_of(game_id)
        if stored is not None:
            return {"status": "done", "review": stored}
        if not game.session.over:
            raise HTTPException(409, "the game is not over: a review is of a finished game")
        state, value = jobs.state(("game", game_id))
        if state == "none":
            start_review(game_id, game.session, owner(request), quiet=False)
            state, value = jobs.state(("game", game_id))
            stored = games.review_of(game_id)
            if stored is not None:  # done while we looked
                return {"status": "done", "review": stored}
        return review_answer("computing" if state == "none" else state, value, response)

    @app.post("/api/review")
    async def review_recorded(body: ReviewRequest, request: Request,
                              response: Response) -> dict[str, Any]:
        """Review a recorded game (``training.record``, players[0]'s decisions): 202 with the
        ``id`` to ask ``GET /api/reviews/{id}`` for, or 200 with the review if it is done."""
        from training.record import replay as replay_record

        record = body.record
        limits.check_record(record)
        try:
            await pool.run(replay_record, record)  # a record that does not replay is refused now
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
            raise HTTPException(400, f"not a replayable game record: "
                                     f"{limits.clip(str(err), 4 * limits.MAX_ECHO)}") from err
        key = record_key(record)
        jobs.submit(key, record, client_of(request))
        return {"id": key[1], **review_answer(*jobs.state(key), response)}

    @app.get("/api/reviews/{review_id}")
    def recorded_review(review_id: str, response: Response) -> dict[str, Any]:
        state, value = jobs.state(("record", review_id[:64]))
        if state == "none":
            raise HTTPException(404, f"no review {limits.clip(review_id, 64)!r} (send the record "
                                     f"to POST /api/review; a few dozen are kept)")
        return {"id": review_id, **review_answer(state, value, response)}

    add_home_routes(app, games)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    return app


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def serve_command(host: str = "127.0.0.1", port: int = 8000,
                  record_path: Path | None = None, db_path: Path | None = None) -> None:
    """``crib serve``: run the app with uvicorn until Ctrl-C, its games in the SQLite file
    ``db_path`` (default ``db.default_db_path()``)."""
    import sys

    from .db import default_db_path
    from .saved import SavedStore

    if not 0 < port < 65536:
        raise ValueError(f"--port must be 1..65535, got {port}")
    try:
        import uvicorn
    except ImportError as err:  # pragma: no cover - the play extra is missing
        raise ValueError("crib serve needs the play extra: pip install -e '.[play]'") from err
    store = SavedStore(default_db_path() if db_path is None else db_path)
    if host not in LOCAL_HOSTS:
        print(f"warning: crib serve listens on {host}, not only on this machine: anyone who can "
              f"reach it can play and make players (plain HTTP, no passwords)", file=sys.stderr)
    print(f"crib serve: games in {store.path}", flush=True)
    print(f"crib serve: open http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    reviews = ReviewJobs(ReviewSettings(sims=REVIEW_SIMS), eager=True)
    uvicorn.run(create_app(record_path, store=store, reviews=reviews), host=host, port=port,
                log_level="warning")
