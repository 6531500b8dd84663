"""One game between a person and an agent: the single source of truth behind ``crib play`` and
``crib serve``.

``GameSession`` holds a ``crib_env.game.Game`` with the person in seat 0 and the agent in seat 1.
The agent acts exactly as in evaluation: from ``observation.encode(game, seat)`` and
``game.legal_mask()`` alone (``training.evaluate.play_game`` does the same). The person's moves
are validated in full before anything changes: a discard is both cards at once, a play one card,
and a move that does not fit raises ``MoveError`` saying why with the game untouched.

After every show the session pauses (``paused``) so the person can read the counts; in count
practice the person first claims the points of their own hand (and crib), then the exact count is
revealed and the claim kept. ``view()`` is everything the person may see, nothing more: their own
hand, the cards on the table, sizes of the other hands, and the opponent's cards only once laid
open in the show.

About 400 lines, one class: what a person may do and what they may see are read from the same
state at every step, so the moves and the views stay together.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agents.analysis import analyze_discards
from crib_env.cards import RANK, SUIT, VALUE, as_card, card_str, cards_str
from crib_env.game import DEAL, DEFAULT_TARGET, GAME_OVER, SHOW, Game, IllegalActionError, Phase
from crib_env.observation import encode
from crib_env.rules import count_after, last_card_points
from crib_env.scoring import EVENT_KINDS, ScoreEvent, score_play

from .chances import ANALYSIS_SIMS, throw_win_chances, win_chance
from .talk import Announcement, announcements, pegs, show_talk

HUMAN, AGENT = 0, 1
MAX_CLAIM = 29  # the highest score a hand or crib can hold


class MoveError(ValueError):
    """A request the game cannot take now. ``status``: 400 for a move that breaks the rules or
    cannot be read, 409 for one that is not allowed at this point of the game."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ShowPause:
    """A finished show waiting for the person: ``deal`` its deal (0-based), ``log_from`` the index
    of its first SHOW entry, ``log_to`` one past its last score (and the game's end, if it came
    there); ``claims_needed`` what the person must still claim (count practice)."""

    deal: int
    log_from: int
    log_to: int
    claims_needed: list[str] = field(default_factory=list)


class GameSession:
    """A game against ``agent`` (an ``agents.base.Agent``), named ``opponent_name``.

    ``seed`` fixes the cut for deal and every deal; ``practice`` turns on count practice;
    ``first_dealer`` and ``deals`` script the game as for ``Game`` (seat 0 is the person).
    """

    def __init__(self, agent: Any, opponent_name: str, seed: int | None = None,
                 target: int = DEFAULT_TARGET, practice: bool = False,
                 first_dealer: int | None = None, deals: Any = ()) -> None:
        self.agent = agent
        self.opponent_name = opponent_name
        self.names = ("You", opponent_name)
        self.seed = seed
        self.game = Game(target=target, seed=seed, first_dealer=first_dealer, deals=deals)
        self.first_dealer = self.game.dealer
        self.practice = practice
        self.claims: list[dict[str, Any]] = []  # count practice: {deal, what, claimed, actual}
        self.pause: ShowPause | None = None
        self.talk: list[Announcement] = []
        self._talked = 0  # log entries already turned into talk
        self.started = time.time()
        self.spec: dict[str, Any] | None = None  # what ``against`` built it from (crib_play.saved)
        self.agent.reset()
        self._after_steps()
        self._advance()

    @classmethod
    def against(cls, opponent: str, seed: int | None = None, **kwargs: Any) -> GameSession:
        """A session against the agent named by ``opponent`` (a name or checkpoint path, resolved
        as ``crib evaluate`` resolves it)."""
        from training.evaluate import build_agent

        session = cls(build_agent(opponent, seed=seed), opponent.strip(), seed=seed, **kwargs)
        session.spec = {"opponent": opponent.strip(), "seed": seed, **kwargs}
        return session

    # -- state ------------------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.game.is_over

    @property
    def your_turn(self) -> bool:
        return self.pause is None and not self.over and self.game.to_move == HUMAN

    @property
    def deal_number(self) -> int:
        return len(self.game.records) - 1

    def legal_cards(self) -> list[int]:
        return self.game.legal_actions() if self.your_turn else []

    def cards_needed(self) -> int:
        """How many cards the person lays in their next move: 2 to the crib, 1 in the play."""
        if self.game.phase == Phase.DISCARD:
            return 2 - len(self.game.discards[HUMAN])
        return 1

    # -- moves ------------------------------------------------------------------------------------

    def move(self, cards: Any) -> list[Announcement]:
        """Apply the person's move (card texts or ids: two for the crib, one to play), then let the
        agent move until it is the person's turn again or a show has been counted. Returns the
        new table talk. Raises ``MoveError`` with the game unchanged if the move does not fit."""
        if self.over:
            raise MoveError(f"the game is over ({self._result_text()})", 409)
        if self.pause is not None:
            raise MoveError("the show is on the table: continue to the next deal first", 409)
        if self.game.to_move != HUMAN:  # the agent always moves before control returns
            raise MoveError("not your turn", 409)
        if isinstance(cards, (str, int)):
            cards = [cards]
        if not isinstance(cards, (list, tuple)):
            raise MoveError(f"a move is a list of cards, got {cards!r}")
        try:
            ids = [as_card(c) for c in cards]
        except (TypeError, ValueError) as err:
            raise MoveError(str(err)) from err
        need = self.cards_needed()
        if len(ids) != need:
            what = "to the crib" if self.game.phase == Phase.DISCARD else "to play"
            raise MoveError(f"lay {need} card{'s' if need > 1 else ''} {what}, got {len(ids)}")
        if len(set(ids)) != len(ids):
            raise MoveError(f"the same card twice: {cards_str(ids)}")
        for card in ids:  # all checked before any is laid: a bad move changes nothing
            if card not in self.game.hands[HUMAN]:
                raise MoveError(f"{card_str(card)} is not in your hand "
                                f"({cards_str(sorted(self.game.hands[HUMAN]))})")
        try:
            self.game.check_action(ids[0], HUMAN)
        except IllegalActionError as err:
            raise MoveError(str(err)) from err
        before = len(self.talk)
        for card in ids:
            self.game.step(card, HUMAN)
        self._after_steps()
        self._advance()
        return self.talk[before:]

    def continue_(self) -> list[Announcement]:
        """Leave the show and play on (the agent moves first if it is its turn)."""
        if self.pause is None:
            raise MoveError(f"the game is over ({self._result_text()})" if self.over
                            else "no show to leave: it is your move", 409)
        if self.pause.claims_needed:
            raise MoveError(f"count practice: claim your {' and '.join(self.pause.claims_needed)} "
                            f"first", 409)
        if self.over:
            raise MoveError(f"the game is over ({self._result_text()})", 409)
        before = len(self.talk)
        self.pause = None
        self._advance()
        return self.talk[before:]

    def claim(self, hand: Any = None, crib: Any = None) -> list[dict[str, Any]]:
        """Count practice: the person's totals for their hand (and crib, when they dealt) in the
        show on the table. Returns the new claim records (claimed, actual, right)."""
        if self.pause is None or not self.pause.claims_needed:
            raise MoveError("no count to claim now", 409)
        given = {"hand": hand, "crib": crib}
        for what in self.pause.claims_needed:
            value = given[what]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CLAIM:
                raise MoveError(f"claim for your {what}: a whole number 0..{MAX_CLAIM}, "
                                f"got {value!r}")
        extra = [w for w in ("hand", "crib") if given[w] is not None
                 and w not in self.pause.claims_needed]
        if extra:
            raise MoveError(f"nothing to claim for a {extra[0]} now (claim "
                            f"{' and '.join(self.pause.claims_needed)})")
        actual = self._show_points(self.pause)
        new = []
        for what in self.pause.claims_needed:
            record = {"deal": self.pause.deal + 1, "what": what, "claimed": given[what],
                      "actual": actual[what], "right": given[what] == actual[what]}
            self.claims.append(record)
            new.append(record)
        self.pause.claims_needed = []
        return new

    # -- the agent and the log ----------------------------------------------------------------------

    def _advance(self) -> None:
        game = self.game
        while self.pause is None and not game.is_over and game.to_move == AGENT:
            card = self.agent.act(encode(game, AGENT), game.legal_mask())
            try:
                game.step(int(card), AGENT)
            except IllegalActionError as err:  # a bug in the agent: say whose
                raise RuntimeError(f"agent {self.opponent_name!r} chose an illegal card: {err}") \
                    from err
            self._after_steps()

    def _after_steps(self) -> None:
        """Turn new log entries into talk, and pause after a show."""
        log = self.game.log
        new = announcements(log, self.names, start=self._talked)
        shows = [i for i in range(self._talked, len(log)) if log[i].kind == SHOW]
        self._talked = len(log)
        self.talk.extend(new)
        if shows:
            end = shows[-1] + 1
            while end < len(log) and (log[end].kind in EVENT_KINDS or log[end].kind == GAME_OVER):
                end += 1  # the show's scores, and the end of the game if they reached the target
            deal = sum(1 for e in log[:shows[0]] if e.kind == DEAL) - 1  # the next may be dealt
            pause = ShowPause(deal, shows[0], end)
            if self.practice:
                pause.claims_needed = [("crib" if log[i].detail == "crib" else "hand")
                                       for i in shows if log[i].player == HUMAN]
            self.pause = pause

    def _show_points(self, pause: ShowPause) -> dict[str, int]:
        """Points of each count in the paused show, by owner: hand / crib of the person,
        opponent_hand."""
        log, out, current = self.game.log, {}, None
        for entry in log[pause.log_from:pause.log_to]:
            if entry.kind == SHOW:
                mine = entry.player == HUMAN
                current = ("crib" if entry.detail == "crib" else "hand") if mine else \
                    ("opponent_crib" if entry.detail == "crib" else "opponent_hand")
                out[current] = 0
            elif entry.kind in EVENT_KINDS and current is not None:
                out[current] += entry.points
        return out

    def _result_text(self) -> str:
        g = self.game
        if g.winner is None:
            return "in progress"
        who = "you win" if g.winner == HUMAN else f"{self.opponent_name} wins"
        skunk = " (double skunk)" if g.double_skunk else " (skunk)" if g.skunk else ""
        return f"{who} {g.scores[g.winner]}-{g.scores[1 - g.winner]}{skunk}"

    # -- what the person may see ----------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """Everything the person may see now, as plain JSON values. Never the opponent's hand,
        their discards or the stock: the opponent's cards appear only once laid on the table or
        counted in the show."""
        g = self.game
        hiding = self.pause is not None and bool(self.pause.claims_needed)
        cut = self.pause.log_from if hiding else None  # practice: scores before the show's counts
        front, back = pegs(g.log, cut)
        showing = self.pause is not None
        if showing and not hiding:  # the next deal's first lines wait until the show is left
            cut = self.pause.log_to
        talk = [a for a in self.talk if cut is None or a.log_index < cut]
        view: dict[str, Any] = {
            "opponent": self.opponent_name,
            "target": g.target,
            "deal": self.deal_number + 1,
            "phase": ("game over" if self.over and not showing else
                      "show" if showing else g.phase.name.lower()),
            "your_turn": self.your_turn,
            "cards_needed": self.cards_needed() if self.your_turn else 0,
            "scores": {"you": {"front": front[HUMAN], "back": back[HUMAN]},
                       "opponent": {"front": front[AGENT], "back": back[AGENT]}},
            "talk": [a.to_dict() for a in talk],
            "practice": self.practice,
            "claims": list(self.claims),
            "over": self.over,
            # practice: a game that ends in the show keeps its result until the count is claimed
            "result": self._result_text() if self.over and not hiding else None,
            "winner": (None if g.winner is None or hiding else
                       "you" if g.winner == HUMAN else "opponent"),
        }
        if showing:
            view.update(self._show_view(hiding))
        else:
            played = [[card_str(c) for c in g.played[p]] for p in (HUMAN, AGENT)]
            who_laid = {c: p for p in (HUMAN, AGENT) for c in g.played[p]}
            view.update({
                "dealer": "you" if g.dealer == HUMAN else "opponent",
                "starter": card_str(g.starter) if g.starter is not None else None,
                "count": g.count,
                "sequence": [{"card": card_str(c), "by": "you" if who_laid[c] == HUMAN else
                              "opponent"} for c in g.sequence],
                "played": {"you": played[HUMAN], "opponent": played[AGENT]},
                "hand": [card_str(c) for c in _sorted_hand(g.hands[HUMAN])],
                "legal": [card_str(c) for c in self.legal_cards()],
                "your_discards": [card_str(c) for c in g.discards[HUMAN]],
                "opponent_cards": len(g.hands[AGENT]),
                "crib_cards": len(g.discards[0]) + len(g.discards[1]),
                "opponent_said_go": g.said_go[AGENT] and g.phase == Phase.PLAY,
                "you_said_go": g.said_go[HUMAN] and g.phase == Phase.PLAY,
                "show": None,
            })
        if self.over and not hiding:
            view["deals"] = self.deal_points()
        return view

    def _show_view(self, hiding: bool) -> dict[str, Any]:
        """The show on the table: every count's cards (public now), and its points unless the
        person still has to claim them."""
        pause = self.pause
        assert pause is not None
        log = self.game.log
        record = self.game.records[pause.deal]
        counts, events = [], []
        for entry in log[pause.log_from:pause.log_to]:
            if entry.kind == SHOW:
                counts.append({"owner": "you" if entry.player == HUMAN else "opponent",
                               "what": "crib" if entry.detail == "crib" else "hand",
                               "cards": [card_str(c) for c in _sorted_hand(entry.cards)]})
                events.append([])
            elif entry.kind in EVENT_KINDS and events:
                events[-1].append(ScoreEvent(entry.kind, entry.points, entry.cards))
        for count, said in zip(counts, events, strict=True):
            count["points"] = sum(e.points for e in said)
            count["talk"] = show_talk(said)
            if hiding and count["owner"] == "you":
                count["points"], count["talk"] = None, None
        return {
            "dealer": "you" if record.dealer == HUMAN else "opponent",
            "starter": card_str(record.starter),
            "count": 0, "sequence": [], "played": {"you": [], "opponent": []},
            "hand": [], "legal": [], "your_discards": [card_str(c) for c in
                                                        record.discards[HUMAN]],
            "opponent_cards": 0, "crib_cards": 4,
            "opponent_said_go": False, "you_said_go": False,
            "deal": pause.deal + 1,
            "show": {"deal": pause.deal + 1, "counts": counts,
                     "claims_needed": list(pause.claims_needed)},
        }

    def deal_points(self) -> list[dict[str, Any]]:
        """Per deal: who dealt and the points of each side by category."""
        out = []
        for r in self.game.records:
            row = {"deal": r.number + 1, "dealer": "you" if r.dealer == HUMAN else "opponent",
                   "completed": r.completed}
            for name, seat in (("you", HUMAN), ("opponent", AGENT)):
                dealt = r.dealer == seat
                row[name] = {"pegging": r.pegging[seat], "hand": r.hand[seat],
                             "crib": r.crib if dealt else 0, "heels": r.heels if dealt else 0,
                             "total": r.points(seat)}
            out.append(row)
        return out

    # -- help --------------------------------------------------------------------------------------

    def analysis(self) -> dict[str, Any]:
        """What the person's choices are worth now: in the discard, the 15 throws with expected
        hand, crib and net (the exact analyzer) and each throw's chance to win at the board
        (``chances.throw_win_chances``, ``ANALYSIS_SIMS`` simulations, with the standard error);
        in the play, the points each legal card pegs."""
        g = self.game
        if g.phase == Phase.DISCARD:
            chance, note = win_chance(g.scores[HUMAN], g.scores[AGENT], g.dealer == HUMAN,
                                      g.target)
        else:  # the table's positions are the starts of deals
            chance, note = None, "shown at the discard: the table is for the start of a deal"
        out: dict[str, Any] = {"win_chance": chance, "win_chance_note": note}
        if not self.your_turn:
            raise MoveError("nothing to analyze: it is not your move", 409)
        if g.phase == Phase.DISCARD and len(g.hands[HUMAN]) == 6:
            options = analyze_discards(g.hands[HUMAN], dealer=g.dealer == HUMAN)
            wins = throw_win_chances(g.hands[HUMAN], g.dealer == HUMAN, g.scores[HUMAN],
                                     g.scores[AGENT], g.target, ANALYSIS_SIMS)
            out.update(kind="discard", sims=ANALYSIS_SIMS, options=[{
                "throw": [card_str(c) for c in o.discard], "keep": [card_str(c) for c in o.keep],
                "hand": round(o.hand, 3), "crib": round(o.crib, 3), "net": round(o.net, 3),
                "win_chance": round(wins[frozenset(o.discard)].chance, 4),
                "win_stderr": round(wins[frozenset(o.discard)].stderr, 4)} for o in options])
            return out
        plays = []
        for card in self.legal_cards():
            sequence = [*g.sequence, card]
            points = score_play(sequence)
            count = count_after(g.count, VALUE[card])
            if len(g.hands[HUMAN]) == 1 and not g.hands[AGENT]:  # the last card of the deal
                points += last_card_points(count)
            plays.append({"card": card_str(card), "count": count, "points": points})
        out.update(kind="play", options=sorted(plays, key=lambda p: -p["points"]))
        return out

    def record(self) -> dict[str, Any]:
        """The finished game as ``training.record`` writes it (for ``crib replay``)."""
        from training.record import game_record

        extra = {"claims": list(self.claims)} if self.practice else {}
        return game_record(self.game, list(self.names), self.first_dealer,
                           played_by="crib play", seed=self.seed, **extra)


def _sorted_hand(cards) -> list[int]:
    """Cards in rank order (suits C D H S within a rank), as players hold them."""
    return sorted(cards, key=lambda c: (RANK[c], SUIT[c]))
