"""``crib play`` and ``crib replay`` in the terminal (rich), on ``GameSession`` and
``training.record``.

Input in ``crib play``: cards by text (``5H``, ``10d``) or by their number in your hand (``1`` ..
``6``), two at once for the crib (``5H JS`` or ``2 5``); ``?`` shows the discard analysis or what
each legal card pegs now; ``q``, Ctrl-C or end of input leave the game.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from crib_env.cards import cards_str

from .session import GameSession, MoveError

TRACK = 40
RED_SUITS = "DH"


def card_text(card: str) -> Text:
    """A card in its suit's colour."""
    return Text(card, style="bold red" if card[-1] in RED_SUITS else "bold")


def _track(front: int, back: int, target: int) -> str:
    cells = ["."] * (TRACK + 1)
    cells[round(TRACK * back / target)] = "o"  # the back peg
    cells[round(TRACK * front / target)] = "*"  # the front peg (drawn last: it wins a tie)
    return "".join(cells)


def board(view: dict[str, Any]) -> Table:
    """The board of a ``GameSession.view()``: pegs, starter, count, table, hands."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right")
    grid.add_column()
    target = view["target"]
    for side, name in (("you", "You"), ("opponent", view["opponent"])):
        s = view["scores"][side]
        crib = " (crib)" if view["dealer"] == side else ""
        grid.add_row(f"{name}{crib}", f"|{_track(s['front'], s['back'], target)}| "
                                      f"{s['front']:>3}  (back peg {s['back']})")
    grid.add_row("starter", card_text(view["starter"]) if view["starter"] else Text("--"))
    if view["phase"] == "play":
        table = Text(" ").join(card_text(s["card"]) for s in view["sequence"]) or Text("--")
        grid.add_row("count", Text(f"{view['count']:>2}   on the table: ") + table)
        go = "  (said go)" if view["opponent_said_go"] else ""
        grid.add_row(view["opponent"], f"{view['opponent_cards']} cards in hand{go}")
    if view["hand"]:
        legal = set(view["legal"])
        hand = Text()
        for i, card in enumerate(view["hand"], 1):
            mark = card_text(card) if card in legal or not view["your_turn"] else Text(card, "dim")
            hand += Text(f"{i}:") + mark + Text("  ")
        grid.add_row("your hand", hand)
    return grid


def analysis_table(analysis: dict[str, Any]) -> Table:
    if analysis["kind"] == "discard":
        table = Table(title="what each throw is worth (exact expected points)")
        for name in ("#", "throw", "keep", "hand", "crib", "net", "win (stderr)"):
            table.add_column(name, justify="left" if name in ("throw", "keep") else "right")
        for rank, o in enumerate(analysis["options"], 1):
            table.add_row(str(rank), " ".join(o["throw"]), " ".join(o["keep"]), f"{o['hand']:.2f}",
                          f"{o['crib']:.2f}", f"{o['net']:+.2f}", _win_text(o),
                          style="bold green" if rank == 1 else None)
    else:
        table = Table(title="what each legal card pegs now")
        for name in ("card", "count", "points"):
            table.add_column(name, justify="right")
        for o in analysis["options"]:
            table.add_row(o["card"], str(o["count"]), str(o["points"]))
    chance = analysis["win_chance"]
    table.caption = (f"chance to win: {chance:.1%}" if chance is not None
                     else f"chance to win: {analysis['win_chance_note']}")
    return table


def _win_text(option: dict[str, Any]) -> str:
    """A throw's chance to win at the board (``chances.throw_win_chances``), or a dash."""
    chance = option.get("win_chance")
    return "-" if chance is None else f"{chance:.1%} ({option['win_stderr']:.1%})"


def parse_move(text: str, view: dict[str, Any]) -> list[str]:
    """Card texts from the person's input: card texts or numbers into their hand (1-based)."""
    tokens = text.replace(",", " ").split()
    cards = []
    for token in tokens:
        if token.isdigit():
            number = int(token)
            if not 1 <= number <= len(view["hand"]):
                raise MoveError(f"no card number {number}: your hand has cards 1.."
                                f"{len(view['hand'])}")
            cards.append(view["hand"][number - 1])
        else:
            cards.append(token)
    return cards


def deal_table(deals: list[dict[str, Any]], opponent: str) -> Table:
    table = Table(title="points per deal")
    for name in ("deal", "dealer", "you: peg", "hand", "crib", "total", f"{opponent}: peg", "hand",
                 "crib", "total"):
        table.add_column(name, justify="right")
    for d in deals:
        cells = [str(d["deal"]), "you" if d["dealer"] == "you" else opponent]
        for side in ("you", "opponent"):
            p = d[side]
            cells += [str(p["pegging"]), str(p["hand"]), str(p["crib"] + p["heels"]),
                      str(p["total"])]
        table.add_row(*cells)
    return table


def play_terminal(session: GameSession, console: Console | None = None,
                  ask: Callable[[str], str] | None = None) -> bool:
    """Play ``session`` to the end in the terminal; returns True if the game was finished (False
    when the person left). ``ask`` reads one line (default: ``console.input``)."""
    console = console or Console()
    ask = ask or console.input
    said = 0
    try:
        while True:
            view = session.view()
            for line in view["talk"][said:]:
                if line["kind"] != "show":  # the show is printed whole, by _show
                    console.print(f"  {line['text']}", style="bold cyan" if line["points"] else None)
            said = len(view["talk"])
            if view["show"] is not None:
                _show(session, view, console, ask)
                if session.over:
                    break
                ask("[dim]Enter for the next deal[/dim] ")
                session.continue_()
                continue
            if session.over:
                break
            console.print(board(view))
            need = view["cards_needed"]
            prompt = ("throw two cards to " + ("your" if view["dealer"] == "you" else "the")
                      + " crib" if need == 2 else "play a card") + " (? for help, q to quit): "
            text = ask(prompt).strip()
            if text.lower() in ("q", "quit", "exit"):
                console.print("left the game")
                return False
            if text == "?":
                console.print(analysis_table(session.analysis()))
                continue
            try:
                session.move(parse_move(text, view))
            except MoveError as err:
                console.print(Text(str(err), style="red"))
    except (KeyboardInterrupt, EOFError):
        console.print("\nleft the game")
        return False
    view = session.view()
    for line in view["talk"][said:]:
        console.print(f"  {line['text']}")
    console.print(f"[bold]{view['result']}[/bold]")
    console.print(deal_table(view["deals"], session.opponent_name))
    if session.claims:
        right = sum(c["right"] for c in session.claims)
        console.print(f"count practice: {right} of {len(session.claims)} counts right")
    return True


def _show(session: GameSession, view: dict[str, Any], console: Console,
          ask: Callable[[str], str]) -> None:
    show = view["show"]
    console.print(f"[bold]The show, deal {show['deal']}[/bold] (starter {view['starter']})")
    for count in show["counts"]:
        who = "Your" if count["owner"] == "you" else f"{view['opponent']}'s"
        console.print(f"  {who} {count['what']}: {' '.join(count['cards'])}")
    while show["claims_needed"]:
        claims = {}
        for what in show["claims_needed"]:
            text = ask(f"count practice: how many in your {what}? ").strip()
            claims[what] = int(text) if text.isdigit() else text
        try:
            for record in session.claim(**claims):
                verdict = "right" if record["right"] else f"it is {record['actual']}"
                console.print(f"  your {record['what']}: you said {record['claimed']}, {verdict}")
        except MoveError as err:
            console.print(Text(str(err), style="red"))
        show = session.view()["show"]
    for count in session.view()["show"]["counts"]:
        who = "Your" if count["owner"] == "you" else f"{view['opponent']}'s"
        console.print(f"  {who} {count['what']}: {count['talk']} ({count['points']})")


def play_command(opponent: str, target: int = 121, seed: int | None = None,
                 practice: bool = False, record_path: Path | None = None,
                 db_path: Path | None = None, player: str | None = None) -> None:
    """``crib play``: a game against OPPONENT in the terminal, kept in the games file
    ``db_path`` (default ``db.default_db_path()``) as ``player`` (default the login name): a game
    left unfinished is continued by the next ``crib play`` against the same opponent. The
    finished game is also appended to ``record_path`` if given."""
    if isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise ValueError(f"--target must be a positive whole number, got {target!r}")
    if record_path is not None:
        from agents.files import check_output_file

        check_output_file(record_path, "--record")  # before the game, not after it
    console = Console()
    session = _saved_session(console, opponent, target, seed, practice, db_path, player)
    console.print(f"Cribbage to {target} against [bold]{opponent}[/bold]. Cards by text (5H) or "
                  f"number; ? for help; q to leave.")
    finished = play_terminal(session, console)
    if finished and record_path is not None:
        from training.record import write_records

        write_records(record_path, [session.record()], append=True)
        console.print(f"recorded the game to {record_path} (crib replay {record_path})")


def _saved_session(console: Console, opponent: str, target: int, seed: int | None,
                   practice: bool, db_path: Path | None, player: str | None) -> Any:
    """The game of ``crib play`` in the games file (see ``saved_play``), said where it is."""
    import getpass

    from .db import default_db_path
    from .players import check_name
    from .saved import SavedStore
    from .saved_play import open_game

    name = check_name(player if player is not None else getpass.getuser())
    store = SavedStore(default_db_path() if db_path is None else db_path)
    session, resumed = open_game(store, name, opponent, seed, target, practice)
    console.print(f"games in {escape(str(store.path))}, player {escape(name)}"
                  + (" (continuing your game in progress)" if resumed else ""), soft_wrap=True)
    return session


def replay_command(path: Path, game: int = 0) -> None:
    """``crib replay``: one recorded game, move by move, both hands visible. Lines of the file
    that are not intact records are named on stderr and skipped; the other games still replay."""
    from training.record import pick_record, read_record_file, replay

    file = read_record_file(path)
    for number, problem in file.problems.items():
        if number != game:  # the chosen game's own problem is the error
            print(f"skipped game {number}: {problem}", file=sys.stderr)  # one line, unwrapped
    record = pick_record(file, game)
    console = Console()
    names = record["players"]
    finished = replay(record)  # checks the record before anything is printed
    shown = [escape(name) for name in names]  # text from the file is never read as markup
    console.print(f"[bold]{shown[0]} vs {shown[1]}[/bold], game {game} of {escape(str(path))}, "
                  f"to {record['target']}")
    from .talk import announcements

    by_deal: dict[int, list[Any]] = {}  # one pass over the talk: linear in the record
    for line in announcements(finished.log, names):
        if line.kind != "deal":
            by_deal.setdefault(line.deal, []).append(line)
    for deal in finished.records:
        console.rule(f"deal {deal.number + 1}: {shown[deal.dealer]} deals")
        for seat in (0, 1):
            console.print(f"  {shown[seat]}: {cards_str(sorted(deal.hands[seat]))}, throws "
                          f"{cards_str(deal.discards[seat])}")
        for line in by_deal.get(deal.number, ()):
            console.print(f"  {line.text}", style="bold cyan" if line.points else None,
                          markup=False)
    winner = finished.winner  # the replayed game's, which replay checked against the scores
    console.print(f"[bold]{shown[winner]} wins {finished.scores[winner]}-"
                  f"{finished.scores[1 - winner]}[/bold]"
                  + (" (skunk)" if finished.skunk else ""))
