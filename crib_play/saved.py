"""``SavedStore``: the games store of ``crib serve --db`` and ``crib play --db``, the same
methods as ``store.MemoryStore`` (``add``, ``get``, ``saved``, ``items``, ``count``, ``players``,
``review_of``, ``save_review``) on a ``db.GameDB``.

A game is kept as what it was created from (opponent, seed, target, practice) and the list of
commands it accepted (``crib_play.commands``). ``saved`` commits each command before the server
answers, so after a crash (even SIGKILL) ``get`` rebuilds the game by creating the session again
from its seed (the agent too, with the same seed) and replaying the commands: the agent is fed the
same observations in the same order, so its hidden memory and random draws are those of the game
that was played. Each command's fingerprint is checked on the way; a game whose replay differs
(the rules or the agent changed since) is refused with a 409 that says so, never continued
wrongly. Sessions are cached in memory (``CACHE_SIZE``); the file is the truth.

No game is ever dropped: a player may hold ``MAX_GAMES_PER_CLIENT`` games in progress, and one
address ``MAX_GAMES_PER_ADDRESS`` (429 past either); finished games stay, with their
``training.record`` and statistics summary.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fastapi import HTTPException

from .commands import Command, apply_command, fingerprint
from .db import GameDB
from .players import NameTaken, Player, check_name, guest_name, new_token, token_hash
from .session import GameSession, MoveError
from .store import MAX_GAMES_PER_CLIENT, StoredGame

CACHE_SIZE = 256  # sessions kept built in memory (a rebuild replays a game: milliseconds)
# Games in progress from one address, whatever players it claims to be: a client that throws its
# cookie away gets a new guest each time, and must not fill the disk. Behind a proxy every player
# has the proxy's address, so this is well above what a household plays at once.
MAX_GAMES_PER_ADDRESS = 100


class SavedStore:
    """Games and players in the SQLite file at ``path`` (see the module docstring)."""

    def __init__(self, path: Path | str, per_client: int = MAX_GAMES_PER_CLIENT) -> None:
        self.db = GameDB(path)
        self.path = self.db.path
        self.per_client = per_client
        self.players = _SavedPlayers(self.db)
        self._cache: OrderedDict[str, StoredGame] = OrderedDict()
        self._lock = threading.Lock()

    # -- games ------------------------------------------------------------------------------------

    def add(self, client: str, session: GameSession, player: str | None = None) -> str:
        """Keep ``session`` (made by ``GameSession.against`` with a seed) for ``player`` (a
        ``Player.id``; default ``client``); its new id. 429 past the player's games in progress."""
        owner = player or client
        spec = session.spec
        if spec is None or spec.get("seed") is None or spec.get("deals") \
                or spec.get("first_dealer") is not None:
            raise ValueError("a saved game is made by GameSession.against with a seed and no "
                             "scripted deals (it is rebuilt from them)")
        playing = self.db.read("SELECT COUNT(*) FROM games WHERE player_id = ? AND over = 0",
                               (int(owner),))[0][0]
        if playing >= self.per_client:
            raise HTTPException(429, f"you have {playing} games in progress, the most one player "
                                     f"may hold (MAX_GAMES_PER_CLIENT {self.per_client}); finish "
                                     f"one first")
        from_there = self.db.read("SELECT COUNT(*) FROM games WHERE client = ? AND over = 0",
                                  (client,))[0][0]
        if from_there >= MAX_GAMES_PER_ADDRESS:  # a client that drops its cookie each time
            raise HTTPException(429, f"{from_there} games in progress come from {client[:60]} "
                                     f"(MAX_GAMES_PER_ADDRESS {MAX_GAMES_PER_ADDRESS}); finish "
                                     f"one first")
        game_id, now = secrets.token_urlsafe(9), time.time()
        with self.db.write() as conn:
            conn.execute("INSERT INTO games (id, player_id, opponent, spec, created, updated, "
                         "client) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (game_id, int(owner), session.opponent_name, json.dumps(spec), now, now,
                          client))
        stored = StoredGame(session, client, touched=now, player=owner)
        with self._lock:
            self._remember(game_id, stored)
        if session.over:  # a game can end before the person's first move only in a test
            self._finish(game_id, session)
        return game_id

    def get(self, game_id: str, player: str | None = None) -> StoredGame:
        """The game, rebuilt from the file if it is not in memory; 404 for an unknown id and for
        another ``player``'s game."""
        rows = self.db.read("SELECT player_id, spec FROM games WHERE id = ?", (game_id,))
        if not rows or (player is not None and str(rows[0][0]) != str(player)):
            raise HTTPException(404, f"no game {game_id[:40]!r}")
        with self._lock:
            stored = self._cache.get(game_id)
            if stored is not None:
                self._cache.move_to_end(game_id)
                stored.touched = time.time()
                return stored
            stored = StoredGame(self._rebuild(game_id, json.loads(rows[0][1])), "",
                                touched=time.time(), player=str(rows[0][0]))
            self._remember(game_id, stored)
            return stored

    def saved(self, game_id: str, game: StoredGame, command: Command | None) -> None:
        """Commit ``command``, just applied to ``game.session``, before the answer goes out (and
        the record, if it ended the game). On a full disk the session is dropped from memory (the
        next request rebuilds it from the file, without this command) and ``StorageFull`` said."""
        if command is None:
            return
        session = game.session
        kind, args = command
        try:
            with self.db.write() as conn:
                n = conn.execute("SELECT COUNT(*) FROM commands WHERE game_id = ?",
                                 (game_id,)).fetchone()[0]
                conn.execute("INSERT INTO commands (game_id, n, kind, args, state) VALUES "
                             "(?, ?, ?, ?, ?)", (game_id, n, kind, json.dumps(args),
                                                 fingerprint(session)))
                conn.execute("UPDATE games SET updated = ? WHERE id = ?", (time.time(), game_id))
                if session.over:
                    self._finish_in(conn, game_id, session)
        except BaseException:  # StorageFull, or any failure: the file, not memory, is the truth
            game.stale = True
            with self._lock:
                if self._cache.get(game_id) is game:
                    del self._cache[game_id]
            raise

    def items(self) -> list[tuple[str, StoredGame]]:
        """The games built in memory now (the file holds them all: ``count``)."""
        with self._lock:
            return list(self._cache.items())

    def count(self, client: str | None = None) -> int:
        if client is None:
            return self.db.read("SELECT COUNT(*) FROM games")[0][0]
        return self.db.read("SELECT COUNT(*) FROM games WHERE player_id = ?", (int(client),))[0][0]

    def unfinished(self, player: str, opponent: str | None = None) -> list[str]:
        """Ids of ``player``'s games in progress (against ``opponent``), newest first."""
        rows = self.db.read("SELECT id, opponent FROM games WHERE player_id = ? AND over = 0 "
                            "ORDER BY updated DESC", (int(player),))
        return [gid for gid, name in rows if opponent in (None, name)]

    def finished(self, player: str | None = None) -> list[dict[str, Any]]:
        """Finished games, oldest first: ``{id, player, opponent, finished, record, summary}``."""
        sql = ("SELECT g.id, p.name, g.opponent, g.finished, g.record, g.summary FROM games g "
               "JOIN players p ON p.id = g.player_id WHERE g.over = 1")
        args: tuple = ()
        if player is not None:
            sql, args = sql + " AND g.player_id = ?", (int(player),)
        rows = self.db.read(sql + " ORDER BY g.finished, g.created", args)
        return [{"id": r[0], "player": r[1], "opponent": r[2], "finished": r[3],
                 "record": json.loads(r[4]), "summary": json.loads(r[5]) if r[5] else None}
                for r in rows]

    def latest_finished(self, player: str, limit: int) -> list[dict[str, Any]]:
        """``player``'s newest ``limit`` finished games, newest first: ``{id, opponent, scores,
        winner, reviewed}`` (scores and winner from the record's own seats)."""
        rows = self.db.read("SELECT id, opponent, record, review IS NOT NULL FROM games WHERE "
                            "player_id = ? AND over = 1 ORDER BY finished DESC, created DESC "
                            "LIMIT ?", (int(player), int(limit)))
        out = []
        for game_id, opponent, record, reviewed in rows:
            record = json.loads(record)
            out.append({"id": game_id, "opponent": opponent, "scores": record["scores"],
                        "winner": record["winner"], "reviewed": bool(reviewed)})
        return out

    def review_of(self, game_id: str) -> dict[str, Any] | None:
        """The game's stored review, or None."""
        rows = self.db.read("SELECT review FROM games WHERE id = ?", (game_id,))
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    def save_review(self, game_id: str, review: dict[str, Any]) -> None:
        with self.db.write() as conn:
            conn.execute("UPDATE games SET review = ? WHERE id = ?",
                         (json.dumps(review, separators=(",", ":")), game_id))

    # -- inside ------------------------------------------------------------------------------------

    def _remember(self, game_id: str, stored: StoredGame) -> None:
        self._cache[game_id] = stored
        self._cache.move_to_end(game_id)
        for gid in list(self._cache)[:max(0, len(self._cache) - CACHE_SIZE)]:
            lock = self._cache[gid].lock
            if lock.acquire(blocking=False):  # never drop a game a request is working on
                lock.release()
                del self._cache[gid]

    def _rebuild(self, game_id: str, spec: dict[str, Any]) -> GameSession:
        spec = dict(spec)
        opponent, seed = spec.pop("opponent"), spec.pop("seed")
        try:
            session = GameSession.against(opponent, seed=seed, **spec)
        except ValueError as err:
            raise HTTPException(409, f"game {game_id} cannot be rebuilt: {err}") from err
        rows = self.db.read("SELECT n, kind, args, state FROM commands WHERE game_id = ? "
                            "ORDER BY n", (game_id,))
        for n, kind, args, state in rows:
            try:
                apply_command(session, (kind, json.loads(args)))
            except MoveError as err:
                raise HTTPException(409, f"game {game_id} cannot be rebuilt: its command {n} "
                                         f"({kind}) is refused now: {err}") from err
            if fingerprint(session) != state:
                raise HTTPException(409, f"game {game_id} cannot be rebuilt: after command {n} "
                                         f"the game is at {fingerprint(session)}, it was at "
                                         f"{state} (the rules or the agent changed since)")
        return session

    def _finish(self, game_id: str, session: GameSession) -> None:
        with self.db.write() as conn:
            self._finish_in(conn, game_id, session)

    def _finish_in(self, conn: Any, game_id: str, session: GameSession) -> None:
        from .stats import game_summary

        record = session.record()
        conn.execute("UPDATE games SET over = 1, record = ?, summary = ?, finished = ? WHERE "
                     "id = ? AND over = 0", (json.dumps(record, separators=(",", ":")),
                                             json.dumps(game_summary(record)), time.time(),
                                             game_id))


class _SavedPlayers:
    """``players.MemoryPlayers``'s methods on the ``players`` table, plus ``named`` for the
    terminal's ``--player`` and ``crib stats --player``."""

    def __init__(self, db: GameDB) -> None:
        self.db = db

    def by_token(self, token: str | None) -> Player | None:
        if not token:
            return None
        rows = self.db.read("SELECT id, name FROM players WHERE token_hash = ?",
                            (token_hash(token),))
        return Player(str(rows[0][0]), rows[0][1]) if rows else None

    def create(self) -> tuple[Player, str]:
        token = new_token()
        with self.db.write() as conn:
            name = guest_name()
            cur = conn.execute("INSERT INTO players (name, token_hash, created) VALUES (?, ?, ?)",
                               (name, token_hash(token), time.time()))
        return Player(str(cur.lastrowid), name), token

    def rename(self, token: str, name: str) -> Player:
        name = check_name(name)
        player = self.by_token(token)
        if player is None:
            raise KeyError("no player holds this token")
        with self.db.write() as conn:
            taken = conn.execute("SELECT id FROM players WHERE name = ? AND id != ?",
                                 (name, int(player.id))).fetchone()
            if taken:
                raise NameTaken(f"the name {name!r} is taken by another player")
            conn.execute("UPDATE players SET name = ? WHERE id = ?", (name, int(player.id)))
        return player._replace(name=name)

    def named(self, name: str, create: bool = False) -> Player | None:
        """The player called ``name`` (a terminal player, without a token, made if ``create``)."""
        name = check_name(name)
        rows = self.db.read("SELECT id, name FROM players WHERE name = ?", (name,))
        if rows:
            return Player(str(rows[0][0]), rows[0][1])
        if not create:
            return None
        with self.db.write() as conn:
            cur = conn.execute("INSERT INTO players (name, created) VALUES (?, ?)",
                               (name, time.time()))
        return Player(str(cur.lastrowid), name)
