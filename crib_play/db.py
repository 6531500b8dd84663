"""The games file behind ``crib serve --db`` and ``crib play --db``: one SQLite database (stdlib
``sqlite3``, WAL journal, ``synchronous=FULL``), opened only after it has been checked.

What it holds (schema ``SCHEMA_VERSION``, kept in ``PRAGMA user_version``; ``PRAGMA
application_id`` = ``APPLICATION_ID`` marks the file as ours):

- ``players``: a name, and the SHA-256 of the player's secret cookie token (none for players of
  the terminal, whose file is their own);
- ``games``: who plays whom, the seed and settings the game and the agent were created from, and,
  once finished, the game's ``training.record`` (JSON), its statistics summary and, once computed,
  its review (``crib_play.review``);
- ``commands``: every accepted request that changed a game (a move, a continue, a claim), in order,
  with a fingerprint of the game after it. Replaying them on a session re-created from the seed
  rebuilds the game and the agent's memory exactly (``crib_play.saved``).

Opening refuses, with a ``DatabaseFileError`` that names the file and writes nothing to it: a
folder, a file that is not SQLite (damaged header or another kind of file), a damaged database
(``PRAGMA quick_check``), an SQLite file of another program, a file from a newer schema, and a
read-only file or folder (WAL needs to write beside the file). An older schema is migrated in one
transaction per step (``MIGRATIONS``). A write that finds the disk full raises ``StorageFull``
and leaves the database as it was before that write.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

APPLICATION_ID = 0x43524942  # "CRIB"
SQLITE_HEADER = b"SQLite format 3\x00"
# MIGRATIONS[v] takes a file from schema v - 1 to schema v. Version 0 is a new, empty file.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE players (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "token_hash TEXT UNIQUE, created REAL NOT NULL)",
        "CREATE TABLE games (id TEXT PRIMARY KEY, player_id INTEGER NOT NULL REFERENCES "
        "players(id), opponent TEXT NOT NULL, spec TEXT NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, over INTEGER NOT NULL DEFAULT 0, record TEXT)",
        "CREATE TABLE commands (game_id TEXT NOT NULL REFERENCES games(id), n INTEGER NOT NULL, "
        "kind TEXT NOT NULL, args TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (game_id, n)) "
        "WITHOUT ROWID",
    ),
    2: (  # statistics: each finished game's summary, kept so /stats never replays the analyzer;
        # the creating address, for its cap
        "ALTER TABLE games ADD COLUMN summary TEXT",
        "ALTER TABLE games ADD COLUMN finished REAL",
        "ALTER TABLE games ADD COLUMN client TEXT",  # the address that made it (its cap)
        "CREATE INDEX games_by_player ON games(player_id, over, finished)",
        "CREATE INDEX games_by_client ON games(client, over)",
    ),
    3: (  # the game review (crib_play.review), computed in the background once the game ends
        "ALTER TABLE games ADD COLUMN review TEXT",
    ),
}
SCHEMA_VERSION = max(MIGRATIONS)


class DatabaseFileError(ValueError):
    """The games file cannot be used; the message names it and says why (nothing was written)."""


class StorageFull(DatabaseFileError):
    """A write found the disk (or the database's page limit) full; that write was undone."""


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/crib-rl/games.sqlite3``, or ``~/.local/share/crib-rl/games.sqlite3``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "crib-rl" / "games.sqlite3"


def _writable(path: Path) -> bool:
    """Whether ``path`` may be written: its mode grants writing to someone (root ignores the
    mode, so ``os.access`` alone would say yes to a file chmod 0444) and ``os.access`` agrees."""
    return os.access(path, os.W_OK) and bool(stat.S_IMODE(path.stat().st_mode) & 0o222)


def check_file(path: Path) -> None:
    """Refuse what can be refused before SQLite opens ``path`` (which could change a file)."""
    if path.is_dir():
        raise DatabaseFileError(f"games database {path} is a folder, not a file")
    folder = path.parent
    if path.exists():
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
        if head and head != SQLITE_HEADER:
            raise DatabaseFileError(f"games database {path} is not an SQLite database (damaged, "
                                    f"or another kind of file); refused, nothing written to it")
        if not _writable(path):
            raise DatabaseFileError(f"games database {path} is read-only; refused (make it "
                                    f"writable or give another --db)")
    elif folder.exists() and not folder.is_dir():
        raise DatabaseFileError(f"games database {path}: {folder} is not a folder")
    if folder.exists() and not _writable(folder):
        raise DatabaseFileError(f"games database {path}: its folder {folder} is read-only (SQLite "
                                f"writes its journal beside the file); give another --db")


class GameDB:
    """An open, checked, migrated games database. Thread-safe: one connection, one lock; every
    write is one transaction, committed (on disk) when the method returns."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        check_file(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DatabaseFileError(f"games database {self.path}: cannot make its folder "
                                    f"({err.strerror})") from err
        self.lock = threading.RLock()
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None,
                                        check_same_thread=False, timeout=10)
        except sqlite3.Error as err:
            raise DatabaseFileError(f"games database {self.path} cannot be opened: {err}") from err
        try:
            self._check_and_migrate()
        except BaseException:
            self.conn.close()
            raise

    # -- opening ----------------------------------------------------------------------------------

    def _check_and_migrate(self) -> None:
        name = self.path
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
            tables = [r[0] for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
            check = self.conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as err:
            raise DatabaseFileError(f"games database {name} is damaged ({err}); refused, nothing "
                                    f"written to it") from err
        if check != "ok":
            raise DatabaseFileError(f"games database {name} is damaged (quick_check: "
                                    f"{str(check)[:200]}); refused, nothing written to it")
        fresh = version == 0 and app_id == 0 and not tables
        if not fresh and app_id != APPLICATION_ID:
            raise DatabaseFileError(f"games database {name} is an SQLite file of another program "
                                    f"(application_id {app_id}, tables: "
                                    f"{', '.join(tables[:8]) or 'none'}); refused, nothing "
                                    f"written to it")
        if version > SCHEMA_VERSION:
            raise DatabaseFileError(f"games database {name} has schema {version}, from a newer "
                                    f"crib-rl (this one reads up to {SCHEMA_VERSION}); refused, "
                                    f"nothing written to it: upgrade crib-rl")
        try:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")  # a commit is on disk when it returns
            self.conn.execute("PRAGMA foreign_keys = ON")
            for step in range(version + 1, SCHEMA_VERSION + 1):
                with self.write():
                    if step == 1:
                        self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    for sql in MIGRATIONS[step]:
                        self.conn.execute(sql)
                    self.conn.execute(f"PRAGMA user_version = {step}")
        except sqlite3.OperationalError as err:
            if "readonly" in str(err) or "read-only" in str(err):
                raise DatabaseFileError(f"games database {name} is read-only ({err})") from err
            raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # -- transactions -------------------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed on leaving (undone on any error). A full disk raises
        ``StorageFull`` naming the file."""
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.conn
                    self.conn.execute("COMMIT")
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as err:
                if "full" in str(err):
                    raise StorageFull(f"games database {self.path}: the disk is full ({err}); "
                                      f"this change was not saved, every earlier one is") from err
                raise

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple]:
        with self.lock:
            return self.conn.execute(sql, args).fetchall()
