"""Table talk: what players say at the table for each thing that happens, read from a game's log.

``announcements(log, names)`` turns ``crib_env.game.Game.log`` into a list of ``Announcement``:
one per card laid ("Opponent: 7C, twenty-two"), per score moment ("fifteen two and a pair is
four", "go for one", "two for his heels"), per show ("Your hand 5H 5D 6C 7C + 5S: fifteen two,
... is twelve"), and the end of the game. The terminal and the web page both show these; the rules
that decide the points stay in the engine, this only says them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from crib_env.cards import VALUE, card_str, cards_str
from crib_env.game import DEAL, GAME_OVER, PLAY, SAID_GO, SHOW, STARTER, LogEntry
from crib_env.render import spoken, table_talk
from crib_env.rules import count_after, count_restarts
from crib_env.scoring import (
    DOUBLE_PAIR_ROYAL,
    EVENT_KINDS,
    FIFTEEN,
    GO,
    HEELS,
    LAST_CARD,
    NOBS,
    PAIR,
    PAIR_ROYAL,
    RUN,
    THIRTY_ONE,
    ScoreEvent,
)


def _peg_phrase(event: ScoreEvent, alone: bool) -> str:
    """One pegging score as said on its own ("a pair for two") or inside a longer call ("a pair")."""
    kind, points = event.kind, event.points
    if kind == FIFTEEN:
        return "fifteen two" if alone else "fifteen"
    name = {THIRTY_ONE: "thirty-one", PAIR: "a pair", PAIR_ROYAL: "pair royal",
            DOUBLE_PAIR_ROYAL: "double pair royal", GO: "go", NOBS: "his nobs",
            RUN: f"a run of {spoken(len(event.cards))}"}.get(kind)
    if kind == LAST_CARD:
        return f"{spoken(points)} for last card" if alone else "last card"
    if kind == HEELS:
        return f"{spoken(points)} for his heels" if alone else "his heels"
    name = name or kind
    return f"{name} for {spoken(points)}" if alone else name


def peg_talk(events: Sequence[ScoreEvent]) -> str:
    """Pegging points as said at the table: ``"fifteen two"``, ``"go for one"``,
    ``"fifteen two and a pair is four"``."""
    if not events:
        return ""
    if len(events) == 1:
        return _peg_phrase(events[0], alone=True)
    total = sum(e.points for e in events)
    first = _peg_phrase(events[0], alone=events[0].kind == FIFTEEN)
    rest = " and ".join(_peg_phrase(e, alone=False) for e in events[1:])
    return f"{first} and {rest} is {spoken(total)}"


def show_talk(events: Sequence[ScoreEvent]) -> str:
    """A show count as said: ``"fifteen two, fifteen four, a pair is six"``, or ``"nineteen"``
    (the player's word for a hand worth nothing: no hand can score 19)."""
    return table_talk(events) if events else "nineteen (nothing)"


@dataclass(frozen=True, slots=True)
class Announcement:
    """One line of table talk. ``player``: the seat it concerns (None for the starter with no
    heels); ``points``: points pegged with it; ``kind``: play, go, starter, show, score, game over;
    ``log_index``: the log entry it ends at (viewers use it to step through a game)."""

    deal: int
    player: int | None
    kind: str
    text: str
    points: int
    log_index: int

    def to_dict(self) -> dict:
        return asdict(self)


def announcements(log: Sequence[LogEntry], names: Sequence[str],
                  start: int = 0) -> list[Announcement]:
    """Table talk for ``log[start:]`` (``names``: what to call seat 0 and seat 1).

    Score entries join the card, starter or show that earned them; a go's point, which follows the
    other player's "go", is said on its own line. ``start`` resumes the talk part way through a
    log that is still growing."""
    out: list[Announcement] = []
    deal = sum(1 for e in log[:start] if e.kind == DEAL) - 1
    count = _count_before(log, start)
    starter: int | None = _starter_before(log, start)
    i = start
    while i < len(log):
        entry = log[i]
        # the score entries that follow this entry for the same player belong to it
        j = i + 1
        scored: list[LogEntry] = []
        while (j < len(log) and log[j].kind in EVENT_KINDS
               and entry.kind in (PLAY, STARTER, SHOW) and log[j].player == entry.player):
            scored.append(log[j])
            j += 1
        events = [ScoreEvent(e.kind, e.points, e.cards) for e in scored]
        points = sum(e.points for e in scored)
        who = names[entry.player] if entry.player is not None else ""
        if entry.kind == DEAL:
            deal += 1
            count = 0
            starter = None
            out.append(Announcement(deal, entry.player, "deal", f"Deal {deal + 1}: {_verb(who, 'deal')}",
                                    0, i))
        elif entry.kind == PLAY:
            card = entry.cards[0]
            count = count_after(count, VALUE[card])
            said = f"{who}: {card_str(card)}"
            if not (events and events[0].kind in (FIFTEEN, THIRTY_ONE)):  # "fifteen two" says it
                said += f", {spoken(count)}"
            if events:
                said += f", {peg_talk(events)}"
            out.append(Announcement(deal, entry.player, "play", said, points, j - 1))
            if count_restarts(count, any(e.kind == GO for e in scored)):
                count = 0  # 31, or a go pegged at once (the other had said go before)
        elif entry.kind == SAID_GO:
            out.append(Announcement(deal, entry.player, "go", f"{who}: go", 0, i))
        elif entry.kind == STARTER:
            starter = entry.cards[0]
            said = f"Starter {card_str(starter)}"
            if events:
                said += f": {names[scored[0].player]} pegs {peg_talk(events)}"
            out.append(Announcement(deal, scored[0].player if scored else None, "starter", said,
                                    points, j - 1))
        elif entry.kind == SHOW:
            what = "crib" if entry.detail == "crib" else "hand"
            cards = f"{cards_str(sorted(entry.cards))} + {card_str(starter)}" if starter is not None \
                else cards_str(sorted(entry.cards))
            said = f"{_possessive(who)} {what} {cards}: {show_talk(events)}"
            if len(events) > 1:
                said += f" ({points})"
            out.append(Announcement(deal, entry.player, "show", said, points, j - 1))
        elif entry.kind in EVENT_KINDS:  # a go's point, said after the other player's "go"
            if entry.kind == GO:
                count = 0
            out.append(Announcement(deal, entry.player, "score",
                                    f"{who}: {peg_talk([ScoreEvent(entry.kind, entry.points)])}",
                                    entry.points, i))
            j = i + 1
        elif entry.kind == GAME_OVER:
            out.append(Announcement(deal, entry.player, "game over",
                                    f"{_verb(who, 'win')}, {entry.detail}", 0, i))
        i = j if j > i + 1 else i + 1
    return out


def _possessive(name: str) -> str:
    return "Your" if name == "You" else f"{name}'s"


def _verb(name: str, verb: str) -> str:
    """``"You deal"`` but ``"greedy deals"``."""
    return f"{name} {verb}" if name == "You" else f"{name} {verb}s"


def _count_before(log: Sequence[LogEntry], start: int) -> int:
    """The running count just before ``log[start]`` (so talk can resume mid-log)."""
    count = 0
    for entry in log[:start]:
        if entry.kind == DEAL or entry.kind == GO:
            count = 0
        elif entry.kind == PLAY:
            count = count_after(count, VALUE[entry.cards[0]])
            if count_restarts(count):
                count = 0
    return count


def _starter_before(log: Sequence[LogEntry], start: int) -> int | None:
    starter = None
    for entry in log[:start]:
        if entry.kind == DEAL:
            starter = None
        elif entry.kind == STARTER:
            starter = entry.cards[0]
    return starter


class PegCounter:
    """Both seats' (front, back) pegs, read from a log as it grows: ``update(log)`` reads only the
    entries added since the last call, so following a whole game costs time linear in its log."""

    def __init__(self) -> None:
        self.front, self.back = [0, 0], [0, 0]
        self._previous: LogEntry | None = None
        self._read = 0

    def update(self, log: Sequence[LogEntry], stop: int | None = None) -> PegCounter:
        end = len(log) if stop is None else min(stop, len(log))
        for i in range(self._read, end):
            entry = log[i]
            if entry.kind in EVENT_KINDS:
                # the engine pegs a go and a last card as moves of their own
                previous = self._previous
                same_move = (previous is not None and previous.kind in EVENT_KINDS
                             and previous.player == entry.player
                             and entry.kind not in (GO, LAST_CARD))
                if not same_move:
                    self.back[entry.player] = self.front[entry.player]
                self.front[entry.player] += entry.points
            self._previous = entry
        self._read = max(self._read, end)
        return self


def pegs(log: Sequence[LogEntry], stop: int | None = None) -> tuple[list[int], list[int]]:
    """(front, back) pegs of both seats after ``log[:stop]``: each award (a run of score entries
    for one player after a card, starter, show or go) moves the back peg to where the front was."""
    counter = PegCounter().update(log, stop)
    return counter.front, counter.back
