"""``crib serve``: the web page (FastAPI, served by uvicorn) on ``GameSession``.

The server holds every game; the browser gets ``GameSession.view()``, which carries only what the
person may see. Every request is validated: a body of the wrong shape is answered 422 by FastAPI,
a move the rules refuse 400 and a request out of turn 409, each with ``{"detail": reason}``, and
the game is left as it was. Games are independent (each has its own session and lock) and kept in
memory, the oldest dropped past ``MAX_GAMES``.

Endpoints (JSON): ``GET /api/opponents``; ``POST /api/games`` {opponent, seed?, target?,
practice?}; ``GET /api/games/{id}``; ``POST /api/games/{id}/move`` {cards: [..]};
``POST /api/games/{id}/continue``; ``POST /api/games/{id}/claim`` {hand, crib?};
``GET /api/games/{id}/analysis``; ``POST /api/replay`` {record} -> every position of a recorded
game, both hands visible. The page itself is ``static/`` (plain HTML, JS and CSS, no build step).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from agents.registry import AGENT_NAMES, CHAMPION_PATH
from crib_env.cards import card_str
from crib_env.game import DEFAULT_TARGET, Phase

from .session import MAX_CLAIM, GameSession, MoveError
from .talk import announcements, pegs

MAX_GAMES = 200  # games kept at once; the oldest is dropped beyond (memory stays bounded)
CHECKPOINT_ROOTS = (Path("checkpoints"), Path("runs"))  # searched for checkpoints to offer
STATIC = resources.files("crib_play") / "static"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not ignored


class NewGame(_Strict):
    opponent: str = Field(min_length=1, max_length=500)
    seed: int | None = Field(default=None, ge=0, lt=2**32)
    target: int = Field(default=DEFAULT_TARGET, ge=1, le=DEFAULT_TARGET)
    practice: bool = False


class Move(_Strict):
    cards: list[str] = Field(max_length=2)  # an empty list gets the game's own reason (400)


class Claim(_Strict):
    hand: int | None = Field(default=None, ge=0, le=MAX_CLAIM)
    crib: int | None = Field(default=None, ge=0, le=MAX_CLAIM)


class Replay(_Strict):
    record: dict[str, Any]


def find_checkpoints(roots: tuple[Path, ...] | None = None, limit: int = 50) -> list[str]:
    """Checkpoint folders (holding ``meta.json``) under ``roots`` (default: ``checkpoints/`` and
    ``runs/`` of the working folder and the shipped checkpoints), newest first, at most ``limit``;
    the run folders' ``latest/`` and self-play pool snapshots are left out. Paths are given
    relative to the working folder where they lie inside it."""
    if roots is None:
        roots = (*CHECKPOINT_ROOTS, CHAMPION_PATH.parent)
    found: dict[Path, Path] = {}
    for root in roots:
        if root.is_dir():
            for meta in root.glob("**/meta.json"):
                folder = meta.parent
                if folder.name == "latest" or "pool" in folder.parts:
                    continue
                found.setdefault(folder.resolve(), folder)
    newest = sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
    cwd = Path.cwd().resolve()
    return [str(p.relative_to(cwd)) if p.is_relative_to(cwd) else str(p) for p in newest]


def replay_frames(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every position of a recorded game, both hands visible: one frame before the first move
    and one after each move, with the table talk that move produced."""
    from training.record import replay, replay_steps

    finished = replay(record)  # checks the whole record first
    names = record["players"]
    talk = announcements(finished.log, names)
    frames, said = [], 0
    for step, game in enumerate(replay_steps(record)):
        end = len(game.log)
        new = []
        while said < len(talk) and talk[said].log_index < end:
            new.append(talk[said].text)
            said += 1
        front, back = pegs(game.log)
        deal = game.records[-1]
        over = game.phase in (Phase.GAME_OVER, Phase.DEAL_OVER)
        frames.append({
            "step": step,
            "action": record["actions"][step - 1] if step else None,
            "deal": len(game.records),
            "dealer": game.dealer,
            "phase": game.phase.name.lower(),
            "to_move": None if over else game.to_move,
            "scores": [{"front": front[p], "back": back[p]} for p in (0, 1)],
            "hands": [[card_str(c) for c in game.hands[p]] for p in (0, 1)],
            "dealt": [[card_str(c) for c in deal.hands[p]] for p in (0, 1)],
            "discards": [[card_str(c) for c in game.discards[p]] for p in (0, 1)],
            "played": [[card_str(c) for c in game.played[p]] for p in (0, 1)],
            "starter": card_str(game.starter) if game.starter is not None else None,
            "count": game.count,
            "sequence": [card_str(c) for c in game.sequence],
            "talk": new,
        })
    return frames


def create_app(record_path: Path | None = None) -> FastAPI:
    """The web app. ``record_path``: append every finished game there (``training.record``)."""
    app = FastAPI(title="crib serve", docs_url="/api/docs", redoc_url=None)
    games: OrderedDict[str, tuple[GameSession, threading.Lock]] = OrderedDict()
    games_lock = threading.Lock()
    recorded: set[str] = set()
    app.state.games = games  # for tests and tools that check the page against the engine

    def get(game_id: str) -> tuple[GameSession, threading.Lock]:
        with games_lock:
            entry = games.get(game_id)
        if entry is None:
            raise HTTPException(404, f"no game {game_id!r} (games live while the server runs)")
        return entry

    def answer(game_id: str, session: GameSession) -> dict[str, Any]:
        if session.over and record_path is not None and game_id not in recorded:
            from training.record import write_records

            recorded.add(game_id)
            write_records(record_path, [session.record()], append=True)
        return {"id": game_id, **session.view()}

    def act(game_id: str, do) -> dict[str, Any]:
        session, lock = get(game_id)
        with lock:  # one request at a time per game; other games go on in parallel
            try:
                do(session)
            except MoveError as err:
                raise HTTPException(err.status, str(err)) from err
            return answer(game_id, session)

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return (STATIC / "index.html").read_text()

    @app.get("/api/opponents")
    def opponents() -> dict[str, Any]:
        return {"names": list(AGENT_NAMES), "checkpoints": find_checkpoints()}

    @app.post("/api/games")
    def new_game(body: NewGame) -> dict[str, Any]:
        offered = [*AGENT_NAMES, *find_checkpoints()]
        if body.opponent.strip() not in offered:  # no arbitrary paths from the browser
            raise HTTPException(400, f"unknown opponent {body.opponent!r}: choose one of "
                                     f"{', '.join(offered)}")
        try:
            session = GameSession.against(body.opponent, seed=body.seed, target=body.target,
                                          practice=body.practice)
        except ValueError as err:  # an unknown agent or an unreadable checkpoint
            raise HTTPException(400, str(err)) from err
        game_id = secrets.token_urlsafe(9)
        with games_lock:
            games[game_id] = (session, threading.Lock())
            while len(games) > MAX_GAMES:
                games.popitem(last=False)
        return answer(game_id, session)

    @app.get("/api/games/{game_id}")
    def state(game_id: str) -> dict[str, Any]:
        return act(game_id, lambda s: None)

    @app.post("/api/games/{game_id}/move")
    def move(game_id: str, body: Move) -> dict[str, Any]:
        return act(game_id, lambda s: s.move(body.cards))

    @app.post("/api/games/{game_id}/continue")
    def continue_(game_id: str) -> dict[str, Any]:
        return act(game_id, lambda s: s.continue_())

    @app.post("/api/games/{game_id}/claim")
    def claim(game_id: str, body: Claim) -> dict[str, Any]:
        return act(game_id, lambda s: s.claim(hand=body.hand, crib=body.crib))

    @app.get("/api/games/{game_id}/analysis")
    def analysis(game_id: str) -> dict[str, Any]:
        session, lock = get(game_id)
        with lock:
            try:
                return session.analysis()
            except MoveError as err:
                raise HTTPException(err.status, str(err)) from err

    @app.post("/api/replay")
    def replay(body: Replay) -> dict[str, Any]:
        try:
            frames = replay_frames(body.record)
        except (ValueError, KeyError, TypeError) as err:
            raise HTTPException(400, f"not a replayable game record: {err}") from err
        return {"players": body.record["players"], "frames": frames,
                "scores": body.record["scores"], "winner": body.record.get("winner")}

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    return app


def serve_command(host: str = "127.0.0.1", port: int = 8000,
                  record_path: Path | None = None) -> None:
    """``crib serve``: run the app with uvicorn until Ctrl-C."""
    if not 0 < port < 65536:
        raise ValueError(f"--port must be 1..65535, got {port}")
    try:
        import uvicorn
    except ImportError as err:  # pragma: no cover - the play extra is missing
        raise ValueError("crib serve needs the play extra: pip install -e '.[play]'") from err
    print(f"crib serve: open http://{host}:{port}/ (Ctrl-C to stop)")
    uvicorn.run(create_app(record_path), host=host, port=port, log_level="warning")
