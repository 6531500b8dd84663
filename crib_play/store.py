"""Where ``crib serve`` keeps its games: today in memory (issue 25 puts them in SQLite behind the
same few methods: ``add``, ``get``, ``items``, ``count``).

No game is ever dropped to make room for another client's: each client (the requesting address
for now; the player's cookie token once issue 25 gives players one) may hold ``MAX_GAMES_PER_CLIENT``
games, and a creation past that is refused (429) unless one of the client's own finished games can
go. Games expire only when nobody has touched them for a while: ``FINISHED_TTL`` after the last
request for a finished game, ``IDLE_TTL`` for one in progress. ``MAX_GAMES`` bounds the memory of
all clients together; when it is reached new games are refused (503), none is evicted.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from fastapi import HTTPException

from .players import MemoryPlayers
from .session import GameSession

MAX_GAMES_PER_CLIENT = 20  # a person plays one or two; 20 leaves room for tabs and retries
MAX_GAMES = 2_000  # about 20 MB of sessions at most (a session with its agent is ~10 KB)
FINISHED_TTL = 30 * 60  # seconds a finished game stays readable after its last request
IDLE_TTL = 6 * 60 * 60  # seconds an unfinished game waits for its player (a long lunch)


@dataclass
class StoredGame:
    session: GameSession
    client: str
    lock: threading.Lock = field(default_factory=threading.Lock)  # one request at a time
    touched: float = 0.0
    player: str | None = None  # whose game it is: nobody else may read or move it
    stale: bool = False  # its last command could not be saved: the store rebuilds it
    review: dict | None = None  # its review (crib_play.review), once computed

    # (session, lock), as the tools and tests that read app.state.games had it
    def __iter__(self) -> Iterator:
        return iter((self.session, self.lock))

    def __getitem__(self, index: int) -> GameSession | threading.Lock:
        return (self.session, self.lock)[index]


class MemoryStore:
    """Games by id in memory, with the per-client cap and the expiry above. Thread-safe."""

    def __init__(self, per_client: int = MAX_GAMES_PER_CLIENT, total: int = MAX_GAMES,
                 finished_ttl: float = FINISHED_TTL, idle_ttl: float = IDLE_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_client, self.total = per_client, total
        self.finished_ttl, self.idle_ttl, self.clock = finished_ttl, idle_ttl, clock
        self._games: dict[str, StoredGame] = {}
        self._lock = threading.Lock()
        self.players = MemoryPlayers()

    def add(self, client: str, session: GameSession, player: str | None = None) -> str:
        """Keep ``session`` for ``client``; its new id (72 random bits). 429 when the client holds
        ``per_client`` games none of which is finished, 503 when the server holds ``total``."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            mine = [(g.touched, gid) for gid, g in self._games.items() if g.client == client]
            if len(mine) >= self.per_client:
                finished = sorted(t_gid for t_gid in mine if self._games[t_gid[1]].session.over)
                if not finished:
                    raise HTTPException(429, f"you have {len(mine)} games in progress, the most one "
                                             f"client may hold (MAX_GAMES_PER_CLIENT "
                                             f"{self.per_client}); finish one, or leave one for "
                                             f"{self.idle_ttl / 3600:g} h and it is dropped")
                del self._games[finished[0][1]]  # the client's own longest-untouched finished game
            if len(self._games) >= self.total:
                raise HTTPException(503, f"the server holds {len(self._games)} games (MAX_GAMES); "
                                         f"none is dropped for a new one: try again later")
            game_id = secrets.token_urlsafe(9)
            self._games[game_id] = StoredGame(session, client, touched=now, player=player)
            return game_id

    def get(self, game_id: str, player: str | None = None) -> StoredGame:
        """The game (its last-touched time set to now); 404 for an unknown or expired id, and
        for another ``player``'s game (it is not there for them)."""
        with self._lock:
            now = self.clock()
            game = self._games.get(game_id)
            if game is not None and self._expired(game, now):
                del self._games[game_id]
                game = None
            if game is None or (player is not None and game.player not in (None, player)):
                raise HTTPException(404, f"no game {game_id[:40]!r} (games live while the server "
                                         f"runs; an untouched one expires)")
            game.touched = now
            return game

    def saved(self, game_id: str, game: StoredGame, command: tuple[str, dict] | None) -> None:
        """Nothing to save: games in memory live as long as the server (``saved.SavedStore``
        commits every command)."""

    def items(self) -> list[tuple[str, StoredGame]]:
        with self._lock:
            return list(self._games.items())

    def review_of(self, game_id: str) -> dict | None:
        with self._lock:
            game = self._games.get(game_id)
            return game.review if game is not None else None

    def save_review(self, game_id: str, review: dict) -> None:
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:  # an expired game's review has nowhere to go
                game.review = review

    def count(self, client: str | None = None) -> int:
        with self._lock:
            return sum(1 for g in self._games.values() if client in (None, g.client))

    def _expired(self, game: StoredGame, now: float) -> bool:
        ttl = self.finished_ttl if game.session.over else self.idle_ttl
        return now - game.touched > ttl

    def _expire(self, now: float) -> None:
        for gid in [gid for gid, g in self._games.items() if self._expired(g, now)]:
            del self._games[gid]
