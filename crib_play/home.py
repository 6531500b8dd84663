"""The player's home in ``crib serve``: who is asking (``player_of``, ``player_or_new``), and the
routes ``GET /api/player/games`` (the player's games in progress, and the newest finished ones),
``GET/POST /api/player``, ``GET /api/stats``, ``GET /api/stats/plot.svg`` and the page ``GET /stats``
(``add_home_routes``).

A request is the player whose token its ``COOKIE`` holds. Only ``POST /api/games`` and
``POST /api/player`` make a new (guest) player for a browser that has none; every other request
from an unknown browser is nobody's, so it sees no game (404) and empty statistics.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from .players import COOKIE, NameTaken, Player
from .stats import game_summary, over_time_svg, player_stats

STATIC = resources.files("crib_play") / "static"
COOKIE_AGE = 5 * 365 * 24 * 3600  # seconds: a player's browser keeps its name for years
FINISHED_LISTED = 50  # finished games listed on the statistics page, each with its review


class PlayerName(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)


def player_of(request: Request, games: Any) -> Player | None:
    """The player whose token the request's cookie holds, or None."""
    return games.players.by_token(request.cookies.get(COOKIE))


def player_or_new(request: Request, response: Response, games: Any) -> Player:
    """The request's player, or a new guest whose token is set as the answer's cookie."""
    player = player_of(request, games)
    if player is None:
        player, token = games.players.create()
        set_cookie(response, token)
    return player


def set_cookie(response: Response, token: str) -> None:
    response.set_cookie(COOKIE, token, max_age=COOKIE_AGE, httponly=True, samesite="lax",
                        path="/")


def finished_summaries(games: Any, player: Player | None) -> list[dict[str, Any]]:
    """The summaries of ``player``'s finished games, in the order they ended: from the file
    (``SavedStore.finished``) or, for games in memory, from their records."""
    if player is None:
        return []
    if hasattr(games, "finished"):
        return [g["summary"] or game_summary(g["record"]) for g in games.finished(player.id)]
    mine = [g for _, g in games.items() if g.player == player.id and g.session.over]
    return [game_summary(g.session.record()) for g in mine]


def games_in_progress(games: Any, player: Player | None) -> list[str]:
    """Ids of ``player``'s unfinished games, the one played last first."""
    if player is None:
        return []
    if hasattr(games, "unfinished"):
        return games.unfinished(player.id)
    mine = [(g.touched, gid) for gid, g in games.items()
            if g.player == player.id and not g.session.over]
    return [gid for _, gid in sorted(mine, reverse=True)]


def latest_finished(games: Any, player: Player | None) -> list[dict[str, Any]]:
    """``player``'s newest ``FINISHED_LISTED`` finished games, newest first: ``{id, opponent,
    scores, winner, reviewed}`` (seat 0 is the player)."""
    if player is None:
        return []
    if hasattr(games, "latest_finished"):
        return games.latest_finished(player.id, FINISHED_LISTED)
    mine = sorted(((g.touched, gid, g) for gid, g in games.items()
                   if g.player == player.id and g.session.over), reverse=True)
    return [{"id": gid, "opponent": g.session.opponent_name, "scores": list(g.session.game.scores),
             "winner": g.session.game.winner, "reviewed": g.review is not None}
            for _, gid, g in mine[:FINISHED_LISTED]]


def add_home_routes(app: FastAPI, games: Any) -> None:
    @app.get("/api/player/games")
    def my_games(request: Request) -> dict[str, Any]:
        player = player_of(request, games)
        return {"in_progress": games_in_progress(games, player),
                "finished": latest_finished(games, player)}

    @app.get("/api/player")
    def who(request: Request) -> dict[str, Any]:
        player = player_of(request, games)
        return {"name": player.name if player else None}

    @app.post("/api/player")
    def name_me(body: PlayerName, request: Request, response: Response) -> dict[str, Any]:
        token = request.cookies.get(COOKIE)
        if player_of(request, games) is None:
            _, token = games.players.create()
            set_cookie(response, token)
        try:
            player = games.players.rename(token, body.name)
        except NameTaken as err:
            raise HTTPException(409, str(err)) from err
        except ValueError as err:
            raise HTTPException(400, str(err)) from err
        return {"name": player.name}

    @app.get("/api/stats")
    def stats(request: Request) -> dict[str, Any]:
        player = player_of(request, games)
        return {"player": player.name if player else None,
                **player_stats(finished_summaries(games, player))}

    @app.get("/api/stats/plot.svg")
    def plot(request: Request) -> Response:
        figures = player_stats(finished_summaries(games, player_of(request, games)))
        return Response(over_time_svg(figures), media_type="image/svg+xml",
                        headers={"Cache-Control": "no-store"})

    @app.get("/stats", response_class=HTMLResponse)
    def stats_page() -> str:
        return (STATIC / "stats.html").read_text()
