"""The rules engine: a two-player cribbage game as a plain, clonable state machine.

No gymnasium, pettingzoo or torch here. Players are 0 and 1. One decision per ``step(card)``:

* ``Phase.DISCARD``: the player to move lays one card away to the crib; pone discards twice, then
  the dealer twice. Then the starter is cut; a jack pays the dealer 2 for his heels.
* ``Phase.PLAY``: the player to move lays a card that keeps the count at 31 or under. A player who
  cannot lay one says "go" automatically (it is never an action); when neither can, the player who
  laid the last card pegs 1 and the count restarts with the other player leading. 31 pays 2 and
  restarts at once (never also the go); the last card of the hand pays 1 unless it made 31.
* The show follows automatically: pone's hand, the dealer's hand, the crib.
* The game ends the instant a score reaches the target, wherever that happens (heels, a pegged card,
  mid-show); nothing after it counts and scores are capped at the target. ``Phase.GAME_OVER``.

With ``single_deal=True`` the game stops in ``Phase.DEAL_OVER`` after the show instead of dealing on.

Longer than most modules (about 480 lines): ``Game`` is the reference every other engine is
checked against, one state machine read top to bottom, with the records it keeps and the scripted
deals it may be given (``ScriptedDeal`` needs the hand size the rules fix, ``Game`` takes it).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, NamedTuple

import numpy as np

from .cards import DECK, N_CARDS, RANK, VALUE, as_card, card_str, cards_str
from .rules import (
    COUNT_LIMIT,
    GO_POINTS,
    card_fits,
    count_after,
    count_restarts,
    heels_points,
    last_card_points,
    playable,
)
from .rules import can_play as hand_can_play
from .scoring import (
    GO,
    HEELS,
    LAST_CARD,
    ScoreEvent,
    hand_events_of,  # unchecked fast paths: the engine's cards are valid by construction
    play_events_of,
)

HAND_SIZE = 6
KEEP_SIZE = 4
DISCARDS_PER_PLAYER = HAND_SIZE - KEEP_SIZE
DEFAULT_TARGET = 121
SKUNK_MARGIN = 31  # the loser is skunked at target - 31 or less (90 of 121) ...
DOUBLE_SKUNK_MARGIN = 61  # ... and double skunked at target - 61 or less (60 of 121)


class Phase(IntEnum):
    DISCARD = 0
    PLAY = 1
    DEAL_OVER = 2
    GAME_OVER = 3


# The members as module constants: a global read costs a sixth of an enum attribute read, and the
# engine compares phases on every step.
_DISCARD_PHASE, _PLAY_PHASE, _DEAL_OVER_PHASE, _GAME_OVER_PHASE = (
    Phase.DISCARD, Phase.PLAY, Phase.DEAL_OVER, Phase.GAME_OVER)


# Log entry kinds that are not score events (those use the kinds in scoring.EVENT_KINDS).
CUT_FOR_DEAL = "cut for deal"
DEAL = "deal"
DISCARD = "discard"  # private to the discarding player until the show
STARTER = "starter"
PLAY = "play"
SAID_GO = "said go"
SHOW = "show"  # a hand or crib laid open for counting; its score events follow
GAME_OVER = "game over"

# Score categories of the per-deal record.
PEGGING, HAND, CRIB = "pegging", "hand", "crib"


class LogEntry(NamedTuple):
    """One thing that happened. Score entries carry the event kind (``"fifteen"``, ``"go"`` ...)
    and the points the player was credited (capped at the target). A named tuple: several are
    made on every step."""

    kind: str
    player: int | None
    points: int = 0
    cards: tuple[int, ...] = ()
    detail: str = ""  # e.g. "hand", "crib" for SHOW entries


@dataclass(slots=True)
class DealRecord:
    """What one deal produced, by player: points credited for pegging (incl. go, last card), heels,
    hand and crib."""

    number: int
    dealer: int
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    starter: int
    discards: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))
    pegging: list[int] = field(default_factory=lambda: [0, 0])
    heels: int = 0
    hand: list[int] = field(default_factory=lambda: [0, 0])
    crib: int = 0
    completed: bool = False  # False when the game ended before this deal's show was over
    #: cards each player laid in the play (4 each once the play is over)
    laid: list[int] = field(default_factory=lambda: [0, 0])

    def points(self, player: int) -> int:
        own = self.pegging[player] + self.hand[player]
        return own + (self.heels + self.crib if player == self.dealer else 0)


@dataclass(frozen=True, slots=True)
class ScriptedDeal:
    """A deal fixed in advance: six cards for each player (by player, not by role) and the starter."""

    hands: tuple[tuple[int, ...], tuple[int, ...]]
    starter: int

    @classmethod
    def parse(cls, spec: Any, index: int = 0) -> ScriptedDeal:
        """Accept ``{"hands": {"player_0": [...], "player_1": [...]}, "starter": c}`` (keys may also
        be 0 / 1, or ``hands`` a two-item list), cards as ids or text."""
        where = f"scripted deal {index}"
        if isinstance(spec, ScriptedDeal):
            return spec
        if not isinstance(spec, Mapping) or "hands" not in spec or "starter" not in spec:
            raise ValueError(f"{where}: expected a dict with 'hands' and 'starter', got {spec!r}")
        unknown = [key for key in spec if key not in ("hands", "starter")]
        if unknown:  # a misspelt key would otherwise be ignored without a word
            raise ValueError(f"{where}: unknown key {unknown[0]!r}; a scripted deal has 'hands' "
                             f"and 'starter'")
        raw = spec["hands"]
        if isinstance(raw, Mapping):
            unknown = [key for key in raw if key not in ("player_0", "player_1", 0, 1)]
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r} in 'hands'; allowed: "
                                 f"'player_0', 'player_1' (or 0, 1)")
            keys = [("player_0", 0), ("player_1", 1)]
            try:
                pair = [raw[name] if name in raw else raw[i] for name, i in keys]
            except KeyError as err:
                raise ValueError(f"{where}: 'hands' needs player_0 and player_1, got {list(raw)}") \
                    from err
        else:
            pair = list(raw)
        if len(pair) != 2:
            raise ValueError(f"{where}: 'hands' must hold two hands, got {len(pair)}")
        hands = []
        for player, hand in enumerate(pair):
            cards = _parse_card_list(hand, f"{where}, player_{player}")
            if len(cards) != HAND_SIZE:
                raise ValueError(f"{where}: player_{player} must be dealt {HAND_SIZE} cards, "
                                 f"got {len(cards)} ({cards_str(cards)})")
            hands.append(tuple(cards))
        try:
            starter = as_card(spec["starter"])
        except ValueError as err:
            raise ValueError(f"{where}, starter: {err}") from err
        every = [*hands[0], *hands[1], starter]
        duplicates = sorted({c for c in every if every.count(c) > 1})
        if duplicates:
            raise ValueError(f"{where}: duplicate cards {cards_str(duplicates)}")
        return cls((hands[0], hands[1]), starter)


def _parse_card_list(cards: Any, where: str) -> list[int]:
    if isinstance(cards, str):
        cards = cards.split()
    try:
        return [as_card(c) for c in cards]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from err


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int (``None`` stays ``None``: a fresh random seed), or ``ValueError`` naming
    ``name``: a seed is a whole number >= 0 (a Python or NumPy integer), never a bool, a float or
    a string (``random.Random`` would take those and hash them)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name} must be a whole number >= 0 or None, got {seed!r} "
                         f"({type(seed).__name__})")
    return int(seed)


class IllegalActionError(ValueError):
    """An action the rules do not allow at this point (raised by ``Game.step``)."""


class Game:
    """A game of two-player cribbage to ``target`` points.

    ``seed`` fixes the cut for deal and every random deal; ``first_dealer`` (0 or 1) skips the cut;
    ``deals`` are scripted deals used in order before random deals continue.
    """

    def __init__(
        self,
        target: int = DEFAULT_TARGET,
        seed: int | None = None,
        first_dealer: int | None = None,
        deals: Iterable[Any] = (),
        single_deal: bool = False,
    ) -> None:
        if not isinstance(target, int) or target < 1:
            raise ValueError(f"target must be a positive int, got {target!r}")
        if first_dealer not in (None, 0, 1):
            raise ValueError(f"first_dealer must be 0, 1 or None, got {first_dealer!r}")
        self.target = target
        self.single_deal = single_deal
        self.rng = random.Random(check_seed(seed))
        if isinstance(deals, (str, bytes, Mapping)) or not isinstance(deals, Iterable):
            raise ValueError(f"deals must be a list of scripted deals, got {deals!r}")
        self.scripted = [ScriptedDeal.parse(d, i) for i, d in enumerate(deals)]
        self.scores = [0, 0]
        self.prev_scores = [0, 0]  # the back peg: each player's score before their last peg move
        self.log: list[LogEntry] = []
        self.records: list[DealRecord] = []
        self.winner: int | None = None
        self.phase = _DISCARD_PHASE
        if first_dealer is None:
            first_dealer = self._cut_for_deal()
        self.dealer = first_dealer
        self._start_deal()

    # -- set-up ---------------------------------------------------------------------------------

    def _cut_for_deal(self) -> int:
        while True:  # the lower card deals; equal ranks cut again
            cuts = self.rng.sample(DECK, 2)
            for player, card in enumerate(cuts):
                self.log.append(LogEntry(CUT_FOR_DEAL, player, cards=(card,)))
            if RANK[cuts[0]] != RANK[cuts[1]]:
                return 0 if RANK[cuts[0]] < RANK[cuts[1]] else 1

    def _start_deal(self) -> None:
        number = len(self.records)
        if number < len(self.scripted):
            deal = self.scripted[number]
            hands, starter = deal.hands, deal.starter
        else:
            # 13 cards drawn at random are as good as a shuffled deck: the rest stays unseen
            deck = self.rng.sample(DECK, 2 * HAND_SIZE + 1)
            hands, starter = (tuple(deck[0:6]), tuple(deck[6:12])), deck[12]
        self.record = DealRecord(number, self.dealer, hands, starter)
        self.records.append(self.record)
        self.hands = [list(hands[0]), list(hands[1])]
        self.discards: list[list[int]] = [[], []]
        self.crib: list[int] = []
        self.kept: list[list[int]] = [[], []]
        self.starter: int | None = None
        self._next_starter = starter
        self.played: list[list[int]] = [[], []]
        self.sequence: list[int] = []  # the current count sequence, oldest first
        self.count = 0
        self.said_go = [False, False]
        self.last_player: int | None = None
        self.phase = _DISCARD_PHASE
        self.to_move = self.pone
        self.log.append(LogEntry(DEAL, self.dealer))

    def next_deal(self) -> None:
        """Continue a ``single_deal`` game after ``Phase.DEAL_OVER`` with the next deal."""
        if self.phase != _DEAL_OVER_PHASE:
            raise IllegalActionError(f"next_deal() is only allowed after a deal's show, "
                                     f"phase is {self.phase.name}")
        self.dealer = 1 - self.dealer
        self._start_deal()

    # -- queries --------------------------------------------------------------------------------

    @property
    def pone(self) -> int:
        return 1 - self.dealer

    @property
    def is_over(self) -> bool:
        return self.phase == _GAME_OVER_PHASE

    @property
    def loser(self) -> int | None:
        return None if self.winner is None else 1 - self.winner

    @property
    def skunk(self) -> bool:
        """The loser ended at target - 31 or less (90 of 121): recorded, never scored."""
        return self.winner is not None and self.scores[1 - self.winner] <= self.target - SKUNK_MARGIN

    @property
    def double_skunk(self) -> bool:
        return (self.winner is not None
                and self.scores[1 - self.winner] <= self.target - DOUBLE_SKUNK_MARGIN)

    def can_play(self, player: int) -> bool:
        return hand_can_play(self.hands[player], self.count)

    def legal_actions(self) -> list[int]:
        """Card ids the player to move may choose, ascending (empty once the deal or game is
        over)."""
        return sorted(self._legal_cards())

    def _legal_cards(self) -> list[int]:
        """The rule behind ``legal_actions``, in hand order."""
        if self.phase == _DISCARD_PHASE:
            return self.hands[self.to_move]
        if self.phase == _PLAY_PHASE:
            return playable(self.hands[self.to_move], self.count)
        return []

    def legal_mask(self) -> np.ndarray:
        """``legal_actions`` as an int8 mask of 52 entries (1 = legal)."""
        mask = np.zeros(N_CARDS, dtype=np.int8)
        for card in self._legal_cards():  # scalar stores: cheaper than one fancy-index store
            mask[card] = 1
        return mask

    def clone(self) -> Game:
        """An independent copy (random state included) for search and simulation."""
        return copy.deepcopy(self)

    # -- the one action -------------------------------------------------------------------------

    def check_action(self, card: Any, player: int | None = None) -> int:
        """Return ``card`` as an id if the rules allow it now, else raise ``IllegalActionError``
        saying why."""
        if self.phase == _GAME_OVER_PHASE:
            raise IllegalActionError(f"the game is over (player {self.winner} won "
                                     f"{self.scores[0]}-{self.scores[1]})")
        if self.phase == _DEAL_OVER_PHASE:
            raise IllegalActionError("the deal is over: call next_deal() to continue")
        if player is not None and player != self.to_move:
            raise IllegalActionError(f"not player {player}'s turn: player {self.to_move} to move")
        if type(card) is not int or not 0 <= card < N_CARDS:  # the common case skips as_card
            try:
                card = as_card(card)
            except ValueError as err:
                raise IllegalActionError(str(err)) from err
        hand = self.hands[self.to_move]
        if card not in hand:
            verb = "discard" if self.phase == _DISCARD_PHASE else "play"
            raise IllegalActionError(f"player {self.to_move} cannot {verb} {card_str(card)}: not in "
                                     f"hand ({cards_str(sorted(hand))})")
        if self.phase == _PLAY_PHASE and not card_fits(card, self.count):
            raise IllegalActionError(f"{card_str(card)} would take the count from {self.count} "
                                     f"to {count_after(self.count, VALUE[card])}, past "
                                     f"{COUNT_LIMIT}")
        return card

    def step(self, card: int | str, player: int | None = None) -> None:
        """Apply the move of the player to move (``player``, if given, must be that player)."""
        card = self.check_action(card, player)
        if self.phase == _DISCARD_PHASE:
            self._discard(card)
        else:
            self._play(card)

    # -- rules ----------------------------------------------------------------------------------

    def _award(self, player: int, events: Sequence[ScoreEvent], category: str) -> bool:
        """Peg ``events`` for ``player`` in one peg move; True if that ends the game."""
        points = sum([e.points for e in events])
        gained = min(points, self.target - self.scores[player])
        self.prev_scores[player] = self.scores[player]
        self.scores[player] += gained
        if category == PEGGING:
            self.record.pegging[player] += gained
        elif category == HAND:
            self.record.hand[player] += gained
        elif category == CRIB:
            self.record.crib += gained
        else:
            self.record.heels += gained
        # Log what was credited: past the target nothing counts, so the count stops at the event
        # that reaches it (capped) and the log's points always sum to the scores.
        left = gained
        for event in events:
            if left <= 0:
                break
            credited = min(event.points, left)
            left -= credited
            self.log.append(LogEntry(event.kind, player, credited, event.cards))
        if self.scores[player] >= self.target:
            self.winner = player
            self.phase = _GAME_OVER_PHASE
            self.log.append(LogEntry(GAME_OVER, player, detail=f"{self.scores[0]}-{self.scores[1]}"))
            return True
        return False

    def _discard(self, card: int) -> None:
        player = self.to_move
        self.hands[player].remove(card)
        self.discards[player].append(card)
        self.record.discards[player].append(card)
        self.log.append(LogEntry(DISCARD, player, 0, (card,)))
        if len(self.discards[player]) < DISCARDS_PER_PLAYER:
            return
        if player == self.pone:
            self.to_move = self.dealer
            return
        self.crib = self.discards[self.pone] + self.discards[self.dealer]
        self.kept = [list(self.hands[0]), list(self.hands[1])]
        self.starter = self._next_starter
        self.log.append(LogEntry(STARTER, self.dealer, cards=(self.starter,)))
        self.phase = _PLAY_PHASE
        self.to_move = self.pone  # pone leads
        heels = heels_points(RANK[self.starter])
        if heels:
            self._award(self.dealer, [ScoreEvent(HEELS, heels, (self.starter,))], HEELS)

    def _play(self, card: int) -> None:
        player, other = self.to_move, 1 - self.to_move
        self.hands[player].remove(card)
        self.played[player].append(card)
        self.record.laid[player] += 1
        self.sequence.append(card)
        self.count = count_after(self.count, VALUE[card])
        self.last_player = player
        self.log.append(LogEntry(PLAY, player, 0, (card,)))
        events = play_events_of(self.sequence)
        if events and self._award(player, events, PEGGING):
            return
        if not self.hands[0] and not self.hands[1]:
            last = last_card_points(self.count)
            if last and self._award(player, [ScoreEvent(LAST_CARD, last, (card,))], PEGGING):
                return
            self._show()
            return
        if count_restarts(self.count):
            self._restart_count(leader=other)
            return
        if self.can_play(other):
            self.to_move = other
            return
        if self.hands[other] and not self.said_go[other]:
            self.said_go[other] = True
            self.log.append(LogEntry(SAID_GO, other))
        if self.can_play(player):
            self.to_move = player
            return
        # Neither can lay a card: the player who laid the last one pegs the go.
        if self._award(player, [ScoreEvent(GO, GO_POINTS, ())], PEGGING):
            return
        self._restart_count(leader=other)

    def _restart_count(self, leader: int) -> None:
        """New count sequence, led by ``leader`` or, if out of cards, by the other player."""
        self.sequence = []
        self.count = 0
        self.said_go = [False, False]
        self.to_move = leader if self.hands[leader] else 1 - leader

    def _show(self) -> None:
        pone, dealer = self.pone, self.dealer
        for player, cards, is_crib in ((pone, self.kept[pone], False),
                                       (dealer, self.kept[dealer], False),
                                       (dealer, self.crib, True)):
            detail = CRIB if is_crib else HAND
            self.log.append(LogEntry(SHOW, player, cards=tuple(cards), detail=detail))
            events = hand_events_of(cards, self.starter, is_crib)
            if events and self._award(player, events, detail):
                return
        self.record.completed = True
        if self.single_deal:
            self.phase = _DEAL_OVER_PHASE
        else:
            self.dealer = 1 - self.dealer
            self._start_deal()

    def __repr__(self) -> str:
        return (f"Game(phase={self.phase.name}, dealer={self.dealer}, to_move={self.to_move}, "
                f"scores={self.scores}, count={self.count})")
