"""Who is playing: a name per browser, known by a secret token in a cookie.

The token (``secrets.token_urlsafe(32)``, 256 random bits) is sent once, in an ``HttpOnly``,
``SameSite=Lax`` cookie named ``COOKIE``; the server keeps only its SHA-256, so a copy of the
games file does not let anyone act as a player. A browser that comes without a cookie (or with a
token nobody holds) is given a new guest player (``guest-`` and 8 hex digits) and may rename
itself (``POST /api/player``) to any free name. Players of the terminal (``crib play --player``)
have no token: a browser cannot take their name.

``MemoryPlayers`` keeps them in memory (for ``create_app()`` without a database);
``crib_play.saved.SavedStore`` keeps the same methods in the games file.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from typing import NamedTuple

COOKIE = "crib_player"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
NAME_RULE = "1-40 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit"


class Player(NamedTuple):
    """``id``: the stable key of the player's games (a rename keeps it); ``name``: shown."""

    id: str
    name: str


class NameTaken(ValueError):
    """The name belongs to another player."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def guest_name() -> str:
    return f"guest-{secrets.token_hex(4)}"


def check_name(name: object) -> str:
    """``name`` stripped if it is a valid player name, else ``ValueError`` saying the rule."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name.strip()):
        shown = repr(name)[:60]
        raise ValueError(f"player name {shown}: use {NAME_RULE}")
    return name.strip()


class MemoryPlayers:
    """Players by token hash, in memory. Thread-safe."""

    def __init__(self) -> None:
        self._players: dict[str, Player] = {}  # token hash -> player
        self._lock = threading.Lock()

    def by_token(self, token: str | None) -> Player | None:
        if not token:
            return None
        with self._lock:
            return self._players.get(token_hash(token))

    def create(self) -> tuple[Player, str]:
        """A new guest player, and the token that is their key."""
        token = new_token()
        key = token_hash(token)
        player = Player(key[:16], guest_name())
        with self._lock:
            self._players[key] = player
        return player, token

    def rename(self, token: str, name: str) -> Player:
        name = check_name(name)
        key = token_hash(token)
        with self._lock:
            if any(p.name == name and k != key for k, p in self._players.items()):
                raise NameTaken(f"the name {name!r} is taken by another player")
            if key not in self._players:
                raise KeyError("no player holds this token")
            player = self._players[key] = self._players[key]._replace(name=name)
        return player
