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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crib_env.cards import card_str, parse_card
from crib_env.game import DISCARD, PLAY, Game, IllegalActionError, ScriptedDeal
from crib_env.scoring import EVENT_KINDS

from .limits import ACTIONS_PER_DEAL, MAX_RECORD_DEALS, MAX_RECORD_TARGET

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


REQUIRED_KEYS = ("version", "players", "target", "first_dealer", "deals", "actions", "scores")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_record(record: Any) -> dict[str, Any]:
    """``record`` if its keys have the types and sizes of the format (module docstring) within the
    stated limits (``training.limits``), else ``ValueError`` naming the key. The cards and moves
    themselves are checked by ``replay``."""
    if not isinstance(record, dict):
        raise ValueError(f"a game record is a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise ValueError(f"game record lacks {', '.join(missing)}")
    if record["version"] != RECORD_VERSION:
        raise ValueError(f"game record version {_short(record['version'])}; this reader knows "
                         f"{RECORD_VERSION}")
    players, target, deals, actions = (record[k] for k in ("players", "target", "deals",
                                                           "actions"))
    if not isinstance(players, list) or len(players) != 2 \
            or not all(isinstance(p, str) for p in players):
        raise ValueError(f"game record: 'players' must be two names, got {_short(players)}")
    if not _whole(target) or not 1 <= target <= MAX_RECORD_TARGET:
        raise ValueError(f"game record: 'target' must be a whole number 1..{MAX_RECORD_TARGET:,}, "
                         f"got {_short(target)}")
    if not _whole(record["first_dealer"]) or record["first_dealer"] not in (0, 1):
        raise ValueError(f"game record: 'first_dealer' must be seat 0 or 1, got "
                         f"{_short(record['first_dealer'])}")
    # every deal scores at least one point (the last card), so a game has at most 2 * target - 1
    most_deals = min(MAX_RECORD_DEALS, 2 * target)
    if not isinstance(deals, list) or not 1 <= len(deals) <= most_deals:
        got = f"{len(deals):,} deals" if isinstance(deals, list) else _short(deals)
        raise ValueError(f"game record: 'deals' must be a list of 1..{most_deals:,} deals (at most "
                         f"{MAX_RECORD_DEALS:,}, or twice the target), got {got}")
    if not all(isinstance(d, dict) for d in deals):
        raise ValueError("game record: every entry of 'deals' must be an object with 'hands' and "
                         "'starter'")
    most_actions = ACTIONS_PER_DEAL * len(deals)
    if not isinstance(actions, list) or len(actions) > most_actions:
        got = f"{len(actions):,} actions" if isinstance(actions, list) else _short(actions)
        raise ValueError(f"game record: 'actions' must be a list of at most {most_actions:,} cards "
                         f"({ACTIONS_PER_DEAL} per deal), got {got}")
    if not all(isinstance(a, str) for a in actions):
        raise ValueError("game record: every action must be a card as text, such as \"5H\"")
    scores = record["scores"]
    if not isinstance(scores, list) or len(scores) != 2 or not all(_whole(v) for v in scores):
        raise ValueError(f"game record: 'scores' must be two whole numbers, got {_short(scores)}")
    if record.get("winner") not in (None, 0, 1) or isinstance(record.get("winner"), bool):
        raise ValueError(f"game record: 'winner' must be seat 0 or 1, got "
                         f"{_short(record['winner'])}")
    return record


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error never echoes a whole hostile field."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def replay_steps(record: dict[str, Any]) -> Iterable[Game]:
    """Yield the game of ``record`` before the first action and after every action (the same
    ``Game`` object, stepped on). Raises ``ValueError`` naming the action that does not fit."""
    record = check_record(record)
    deals = [ScriptedDeal.parse({k: d[k] for k in ("hands", "starter") if k in d}, i)
             for i, d in enumerate(record["deals"])]  # a key missing is parse's ValueError
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
    whole or not at all (``agents.files``); ``append`` adds each game as it comes."""
    from agents.files import append_line, atomic_write_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record, separators=(",", ":")) for record in records]
    if append:
        for line in lines:
            append_line(path, line)
    else:
        atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


@dataclass
class RecordFile:
    """A JSON-lines file of recorded games read as far as it is intact: ``games[n]`` is game ``n``
    (the ``n``-th non-blank line), ``None`` where that line is not a readable record, and
    ``problems[n]`` says why (with its line number)."""

    path: Path
    games: list[dict[str, Any] | None]
    problems: dict[int, str]

    def intact(self) -> list[dict[str, Any]]:
        return [g for g in self.games if g is not None]


def read_record_file(path: Path | str) -> RecordFile:
    """Read every line of ``path``; a line cut off (the last one, after a crash), not UTF-8, not
    JSON or not a record (``check_record``) is kept as a problem and the others are read."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no recorded games at {path}")
    games: list[dict[str, Any] | None] = []
    problems: dict[int, str] = {}
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                games.append(check_record(json.loads(raw.decode("utf-8"))))
            except UnicodeDecodeError:
                problems[len(games)] = f"{path}, line {number}: not text (UTF-8)"
                games.append(None)
            except (json.JSONDecodeError, RecursionError) as err:
                cut = "" if raw.endswith(b"\n") else " (cut off: the file ends inside it)"
                problems[len(games)] = f"{path}, line {number}: not JSON{cut}: {err}"
                games.append(None)
            except ValueError as err:
                problems[len(games)] = f"{path}, line {number}: not a game record: {err}"
                games.append(None)
    return RecordFile(path, games, problems)


def read_records(path: Path | str) -> list[dict[str, Any]]:
    """The intact records of a JSON-lines file (``read_record_file`` says which lines were
    skipped); ``ValueError`` naming the first bad line if none is intact."""
    file = read_record_file(path)
    records = file.intact()
    if not records:
        first = f" ({next(iter(file.problems.values()))})" if file.problems else ""
        raise ValueError(f"{file.path} holds no intact recorded game{first}")
    return records


def read_record(path: Path | str, game: int = 0) -> dict[str, Any]:
    """Record number ``game`` (0-based: the ``game``-th non-blank line) of a JSON-lines file;
    ``ValueError`` naming its line if that one is not intact (the others still read)."""
    return pick_record(read_record_file(path), game)


def pick_record(file: RecordFile, game: int) -> dict[str, Any]:
    """Game ``game`` of ``file`` (see ``read_record``)."""
    count = len(file.games)
    if count == 0:
        raise ValueError(f"{file.path} holds no recorded games")
    if isinstance(game, bool) or not isinstance(game, int) or not 0 <= game < count:
        raise ValueError(f"--game must be 0..{count - 1} for {file.path} ({count} games), got "
                         f"{game!r}")
    if file.games[game] is None:
        raise ValueError(f"--game {game}: {file.problems[game]}")
    return file.games[game]


__all__ = ["RECORD_VERSION", "RecordFile", "check_record", "game_actions", "game_record",
           "pick_record", "read_record", "read_record_file", "read_records", "replay",
           "replay_steps", "score_events", "write_records"]
