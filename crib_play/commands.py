"""The requests that change a game, as data: ``(kind, args)`` pairs that ``apply_command`` runs on
a ``GameSession``. ``crib_play.saved`` stores them in order, and replays them on a session
re-created from the same seed to rebuild a game exactly (the agent sees the same observations, so
its memory and its random draws come out the same)."""

from __future__ import annotations

from typing import Any

from .session import GameSession

Command = tuple[str, dict[str, Any]]
KINDS = ("move", "continue", "claim")


def move(cards: list[str]) -> Command:
    return "move", {"cards": list(cards)}


def continue_() -> Command:
    return "continue", {}


def claim(hand: int | None = None, crib: int | None = None) -> Command:
    return "claim", {"hand": hand, "crib": crib}


def apply_command(session: GameSession, command: Command) -> None:
    """Run ``command`` on ``session`` (``MoveError`` as the session raises it)."""
    kind, args = command
    if kind == "move":
        session.move(args["cards"])
    elif kind == "continue":
        session.continue_()
    elif kind == "claim":
        session.claim(hand=args.get("hand"), crib=args.get("crib"))
    else:
        raise ValueError(f"unknown game command {kind!r}: expected one of {', '.join(KINDS)}")


def fingerprint(session: GameSession) -> str:
    """A short check of where the game is (log length, scores, pause, claims): replaying the
    commands must arrive at the same fingerprints, or the rebuilt game is not the one played."""
    g = session.game
    return f"{len(g.log)}:{g.scores[0]}-{g.scores[1]}:{int(session.pause is not None)}:" \
           f"{len(session.claims)}"
