"""Recorded games: one finished game as one JSON line, and the replay that rebuilds it.

A record holds what is needed to play the game again move by move through ``crib_env.game.Game``
(the target, the first dealer, every deal's cards by seat, every action in order) and, for readers
that do not replay, what the game produced (the score events, the points of each deal, the final
scores). ``replay(record)`` re-runs the moves on the plain engine with the recorded deals scripted
and checks that it ends on the recorded scores, so a record written from the compiled core
(``training.batch_play``, which keeps no log) and one written from ``Game`` read the same way.

Keys (version 1)::

    version, players ["name of seat 0", "name of seat 1"], target, first_dealer (seat),
    deals [{dealer, hands [[6 cards], [6 cards]], starter, discards [[2], [2]],
            points {pegging [p0, p1], hand [p0, p1], crib, heels}, completed}],
    actions ["5H", ...]   (one card per decision: discards one at a time, then plays),
    events [{deal, player, kind, points, cards}]   (every score, in order, capped at the target),
    scores [s0, s1], winner (seat), skunk, double_skunk,
    plus any extra keys the writer adds (``evaluation``: index, seed, agent_seat).

Cards are written as text (``"5H"``), seats as 0 / 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from crib_env.cards import card_str, parse_card
from crib_env.game import DISCARD, PLAY, Game, IllegalActionError, ScriptedDeal
from crib_env.scoring import EVENT_KINDS

RECORD_VERSION = 1


def game_actions(game: Game) -> list[int]:
    """Every decision of ``game`` in order, read from its log (one DISCARD or PLAY entry per
    ``step``)."""
    return [entry.cards[0] for entry in game.log if entry.kind in (DISCARD, PLAY)]


def _cards(cards: Iterable[int]) -> list[str]:
    return [card_str(c) for c in cards]


def score_events(game: Game) -> list[dict[str, Any]]:
    """The score entries of ``game.log`` with the deal they belong to (0-based)."""
    events, deal = [], -1
    for entry in game.log:
        if entry.kind == "deal":
            deal += 1
        elif entry.kind in EVENT_KINDS:
            events.append({"deal": deal, "player": entry.player, "kind": entry.kind,
                           "points": entry.points, "cards": _cards(entry.cards)})
    return events


def game_record(game: Game, players: Sequence[str], first_dealer: int,
                actions: Sequence[int] | None = None, **extra: Any) -> dict[str, Any]:
    """The record of a finished ``game`` (see the module docstring). ``actions`` default to the
    game's log; pass them when ``game`` has no log (a game from the compiled core), in which case
    the game is replayed to get its score events."""
    if len(players) != 2:
        raise ValueError(f"players must name two seats, got {list(players)!r}")
    record: dict[str, Any] = {
        "version": RECORD_VERSION,
        "players": [str(p) for p in players],
        "target": game.target,
        "first_dealer": int(first_dealer),
        "deals": [{
            "dealer": r.dealer,
            "hands": [_cards(r.hands[0]), _cards(r.hands[1])],
            "starter": card_str(r.starter),
            "discards": [_cards(r.discards[0]), _cards(r.discards[1])],
            "points": {"pegging": list(r.pegging), "hand": list(r.hand), "crib": r.crib,
                       "heels": r.heels},
            "completed": r.completed,
        } for r in game.records],
        "actions": _cards(game_actions(game) if actions is None else actions),
        "scores": list(game.scores),
        "winner": game.winner,
        "skunk": game.skunk,
        "double_skunk": game.double_skunk,
    }
    source = game if actions is None else replay(record)
    record["events"] = score_events(source)
    record.update(extra)
    return record


def _check(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ValueError(f"a game record is a JSON object, got {type(record).__name__}")
    missing = [k for k in ("version", "players", "target", "first_dealer", "deals", "actions",
                           "scores") if k not in record]
    if missing:
        raise ValueError(f"game record lacks {', '.join(missing)}")
    if record["version"] != RECORD_VERSION:
        raise ValueError(f"game record version {record['version']!r}; this reader knows "
                         f"{RECORD_VERSION}")
    return record


def replay_steps(record: dict[str, Any]) -> Iterable[Game]:
    """Yield the game of ``record`` before the first action and after every action (the same
    ``Game`` object, stepped on). Raises ``ValueError`` naming the action that does not fit."""
    record = _check(record)
    deals = [ScriptedDeal.parse({"hands": d["hands"], "starter": d["starter"]}, i)
             for i, d in enumerate(record["deals"])]
    game = Game(target=int(record["target"]), first_dealer=int(record["first_dealer"]),
                deals=deals, seed=0)
    yield game
    for i, text in enumerate(record["actions"]):
        try:
            game.step(parse_card(text))
        except (IllegalActionError, ValueError) as err:
            raise ValueError(f"game record: action {i} ({text!r}) does not replay: {err}") from err
        yield game


def replay(record: dict[str, Any]) -> Game:
    """The finished game of ``record``, played again on ``Game``; ``ValueError`` if it does not
    end where the record says (a record from another rules version, or an edited file)."""
    steps = replay_steps(record)
    game = next(steps)
    for _ in steps:  # the same Game object, stepped on to the end
        pass
    if not game.is_over or list(game.scores) != list(record["scores"]):
        raise ValueError(f"game record does not replay: the moves end at {game.scores[0]}-"
                         f"{game.scores[1]} ({game.phase.name.lower()}), the record says "
                         f"{record['scores'][0]}-{record['scores'][1]}")
    return game


def write_records(path: Path | str, records: Iterable[dict[str, Any]], append: bool = False) -> int:
    """Write ``records`` as JSON lines (one game a line); returns how many. A new file is written
    whole or not at all (``training.files``); ``append`` adds each game as it comes."""
    from .files import append_line, atomic_write_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record, separators=(",", ":")) for record in records]
    if append:
        for line in lines:
            append_line(path, line)
    else:
        atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def read_records(path: Path | str) -> list[dict[str, Any]]:
    """Every record of a JSON-lines file; ``ValueError`` naming the line that is not a record."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no recorded games at {path}")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(_check(json.loads(line)))
        except (json.JSONDecodeError, ValueError) as err:
            raise ValueError(f"{path}, line {number}: not a game record: {err}") from err
    if not records:
        raise ValueError(f"{path} holds no recorded games")
    return records


def read_record(path: Path | str, game: int = 0) -> dict[str, Any]:
    """Record number ``game`` (0-based) of a JSON-lines file."""
    records = read_records(path)
    if isinstance(game, bool) or not isinstance(game, int) or not 0 <= game < len(records):
        raise ValueError(f"--game must be 0..{len(records) - 1} for {path} "
                         f"({len(records)} games), got {game!r}")
    return records[game]


__all__ = ["RECORD_VERSION", "game_actions", "game_record", "read_record", "read_records",
           "replay", "replay_steps", "score_events", "write_records"]
