"""The text board: both pegs, the count, the cards on the table and the last score events, said as
players say them (``table_talk``, ``spoken``: the env's own presentation, which its ``"ansi"``
render needs; the person-facing talk of the play, ``crib_play.talk``, builds on them)."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import cards_str
from .game import PLAY, SHOW, STARTER, Game, LogEntry, Phase
from .scoring import EVENT_KINDS, FIFTEEN, PAIR, RUN, ScoreEvent

TRACK_WIDTH = 40

_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen")


def spoken(n: int) -> str:
    """A number as said aloud: 2 -> "two", 24 -> "twenty-four" (counts go up to 31)."""
    if n < 20:
        return _UNITS[n]
    tens = {2: "twenty", 3: "thirty"}.get(n // 10, str(n - n % 10))
    return tens if n % 10 == 0 else f"{tens}-{_UNITS[n % 10]}"


def table_talk(events: Sequence[ScoreEvent]) -> str:
    """Count events the way players say them: ``"fifteen two, fifteen four, a pair is six"``."""
    total, said = 0, []
    for event in events:
        total += event.points
        if event.kind == FIFTEEN:
            said.append(f"fifteen {spoken(total)}")
        elif event.kind == RUN:
            said.append(f"a run of {len(event.cards)} is {spoken(total)}")
        elif event.kind == PAIR:
            said.append(f"a pair is {spoken(total)}")
        else:
            said.append(f"{event.kind} is {spoken(total)}")
    return ", ".join(said)


def _track(score: int, target: int) -> str:
    filled = round(TRACK_WIDTH * score / target)
    return "#" * filled + "." * (TRACK_WIDTH - filled)


def last_score_talk(log: Sequence[LogEntry], names: Sequence[str]) -> list[str]:
    """Table talk for the most recent scoring moments (one line per peg move, newest last)."""
    lines: list[str] = []
    group: list[LogEntry] = []

    def flush() -> None:
        if group:
            events = [ScoreEvent(e.kind, e.points, e.cards) for e in group]
            lines.append(f"{names[group[0].player]}: {table_talk(events)}")
            group.clear()

    for entry in log[-30:]:
        if entry.kind in EVENT_KINDS:
            if group and group[0].player != entry.player:
                flush()
            group.append(entry)
        elif entry.kind in (PLAY, SHOW, STARTER):
            flush()
    flush()
    return lines[-3:]


def render_board(game: Game, names: Sequence[str]) -> str:
    """A spectator's board of ``game``: pegs (back and front), hands, starter, count, table."""
    deal = len(game.records)
    lines = [f"Cribbage to {game.target} | deal {deal} | {names[game.dealer]} deals | "
             f"phase: {game.phase.name.lower()}"]
    for p, name in enumerate(names):
        lines.append(f"{name:>9} |{_track(game.scores[p], game.target)}| "
                     f"{game.scores[p]:>3} (back peg {game.prev_scores[p]})")
    starter = cards_str([game.starter]) if game.starter is not None else "--"
    lines.append(f"starter {starter}   count {game.count}   on the table: "
                 f"{cards_str(game.sequence) or '--'}")
    for p, name in enumerate(names):
        held = cards_str(sorted(game.hands[p])) or "--"
        played = cards_str(game.played[p]) or "--"
        go = "  (go)" if game.said_go[p] else ""
        lines.append(f"{name:>9} holds {held:<18} played {played}{go}")
    crib = len(game.crib) or len(game.discards[0]) + len(game.discards[1])
    lines.append(f"crib ({names[game.dealer]}): {crib} cards face down")
    if game.phase == Phase.PLAY or game.phase == Phase.DISCARD:
        lines.append(f"to move: {names[game.to_move]}")
    elif game.phase == Phase.GAME_OVER:
        lines.append(f"game over: {names[game.winner]} wins {game.scores[game.winner]}-"
                     f"{game.scores[1 - game.winner]}" + (" (skunk)" if game.skunk else ""))
    lines.extend(f"  {line}" for line in last_score_talk(game.log, names))
    return "\n".join(lines)
