"""``crib play --db``: the terminal's game kept in the games file like the server's.

``open_game`` finds the player's game in progress against the same opponent (and continues it
where it was) or starts a new one; ``SavingSession`` is that ``GameSession`` with every command
committed to the file as soon as the session has accepted it.
"""

from __future__ import annotations

import secrets
from typing import Any

from . import commands
from .saved import SavedStore
from .session import GameSession
from .store import StoredGame


class SavingSession:
    """A ``GameSession`` (every attribute is the session's) whose ``move``, ``continue_`` and
    ``claim`` are saved in ``store`` before they return."""

    def __init__(self, store: SavedStore, game_id: str, stored: StoredGame) -> None:
        self._store, self._id, self._stored = store, game_id, stored
        self.session = stored.session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def _run(self, command: commands.Command) -> list:
        before = len(self.session.talk)
        commands.apply_command(self.session, command)
        self._store.saved(self._id, self._stored, command)
        return self.session.talk[before:]

    def move(self, cards: Any) -> list:
        return self._run(commands.move(list(cards) if isinstance(cards, (list, tuple))
                                       else [cards]))

    def continue_(self) -> list:
        return self._run(commands.continue_())

    def claim(self, hand: Any = None, crib: Any = None) -> list:
        before = len(self.session.claims)
        self._run(commands.claim(hand=hand, crib=crib))
        return self.session.claims[before:]


def open_game(store: SavedStore, player_name: str, opponent: str, seed: int | None,
              target: int, practice: bool) -> tuple[SavingSession, bool]:
    """The player's game against ``opponent``: the newest one in progress when no ``seed`` is
    asked for (True: continued), else a new one (False)."""
    player = store.players.named(player_name)
    if seed is None and player is not None:
        for game_id in store.unfinished(player.id, opponent.strip()):
            stored = store.get(game_id, player.id)
            if stored.session.game.target == target and stored.session.practice == practice:
                return SavingSession(store, game_id, stored), True
    seed = secrets.randbelow(2**32) if seed is None else seed
    # the agent first: an unknown opponent is refused before anything is written
    session = GameSession.against(opponent, seed=seed, target=target, practice=practice)
    player = player or store.players.named(player_name, create=True)
    game_id = store.add(player.id, session, player=player.id)
    return SavingSession(store, game_id, store.get(game_id, player.id)), False
