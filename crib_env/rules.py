"""The rules of the count and of scoring, each stated once (docs/RULES.md sections 5 to 8).

Every number a rule uses is a named constant below, and every rule a small function of plain ints
and bools, so that one source serves all three kinds of caller:

* the reference engine and scorer (``crib_env.game``, ``crib_env.scoring``) call them directly;
* the numpy batch scorer (``scoring.score_hands``) calls the show's ``flush_points`` and
  ``nobs_points`` on whole arrays: they use only arithmetic, ``==`` and ``&``, so they work
  elementwise;
* compiled kernels call the same functions compiled by numba (``crib_env.rule_kernels``; numba
  reads the module-level int constants here as compile-time constants).

The functions take counting values, not card ids, where a kernel calls them (a kernel holds its
own value table); ``card_fits``, ``playable``, ``can_play`` and ``count_of`` are the card-id forms
for Python callers. Nothing outside ``crib_env`` writes a limit, a count sum or a point value
itself: ``tests/test_rules_once.py`` fails on one.

A jack turned as the starter pays the dealer ``HEELS_POINTS`` (section 5). The play (sections 6
and 7): the running count is the sum of the counting values laid since it last restarted and may
not pass ``COUNT_LIMIT``; a card that makes ``FIFTEEN_COUNT`` or ``COUNT_LIMIT`` pays, so do the
same-rank cards and the run it ends. At 31 the count restarts; a player who cannot lay a card
says go, and when neither can, the last to lay pegs ``GO_POINTS`` and the count restarts; the
last card of the play pegs ``LAST_CARD_POINTS`` unless it made 31. The show (section 8): every
set of cards adding up to ``FIFTEEN_COUNT``, every pair, every longest run (a point a card), a
flush, nobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .cards import JACK, MAX_VALUE, N_SUITS, VALUE

FIFTEEN_COUNT = 15  # cards whose values add up to this score FIFTEEN_POINTS, in the show and the play
COUNT_LIMIT = 31  # the running count of the play never passes this
FIFTEEN_POINTS = 2
THIRTY_ONE_POINTS = 2  # for the card that makes the count exactly COUNT_LIMIT
PAIR_POINTS = 2  # each pair of same-rank cards: three of a rank are three pairs, four six
MAX_SET = N_SUITS  # a rank has this many cards: the largest same-rank set
MIN_RUN = 3  # the fewest cards of consecutive ranks that make a run
RUN_POINTS_PER_CARD = 1
HAND_FLUSH_POINTS = 4  # four cards of one suit in a hand (never in the crib)
FIVE_CARD_FLUSH_POINTS = 5  # the four and the starter of one suit: a hand's or the crib's flush
NOBS_POINTS = 1  # the jack of the starter's suit in a hand or crib
HEELS_POINTS = 2  # to the dealer, when the starter is a jack
GO_POINTS = 1  # to the player who laid the last card when neither can lay another
LAST_CARD_POINTS = 1  # to the player who lays the last card of the play, unless it makes 31
MAX_HAND_SCORE = 29  # the highest show score (5 5 5 J with the 5 of the jack's suit)


# -- the count -----------------------------------------------------------------------------------

def count_after(count: int, value: int) -> int:
    """The running count after a card of counting ``value`` is laid at ``count``."""
    return count + value


def fits(count: int, value: int) -> bool:
    """Whether a card of counting ``value`` may be laid at running ``count``: the count must stay
    at ``COUNT_LIMIT`` or under. A player with no card that fits says go."""
    return count + value <= COUNT_LIMIT


def count_restarts(count: int, go_pegged: bool = False) -> bool:
    """Whether the count goes back to 0 after a card took it to ``count``: at ``COUNT_LIMIT``, or
    when that card's go point was pegged (neither player could lay another)."""
    return count == COUNT_LIMIT or go_pegged


def ten_card_scores_at(count: int) -> bool:
    """Whether a ten-card (the highest counting value) laid at ``count`` makes fifteen or 31: the
    counts a careful player avoids leaving (5 and 21)."""
    return count + MAX_VALUE == FIFTEEN_COUNT or count + MAX_VALUE == COUNT_LIMIT


def card_fits(card: int, count: int) -> bool:
    """``fits`` for a card id."""
    return fits(count, VALUE[card])


def playable(hand: Iterable[int], count: int) -> list[int]:
    """The cards of ``hand`` (ids, in its order) that fit at running ``count``."""
    return [c for c in hand if fits(count, VALUE[c])]


def can_play(hand: Iterable[int], count: int) -> bool:
    """Whether any card of ``hand`` fits at running ``count`` (if none does, the player says go)."""
    for card in hand:
        if fits(count, VALUE[card]):
            return True
    return False


def count_of(cards: Sequence[int]) -> int:
    """The running count of a count sequence of card ids: their counting values added up."""
    return sum([VALUE[c] for c in cards])


# -- points of the play and the show --------------------------------------------------------------

def fifteen_points(total: int) -> int:
    """Points for cards adding up to ``total``: a fifteen in the show, or the count reached in the
    play."""
    return FIFTEEN_POINTS if total == FIFTEEN_COUNT else 0


def thirty_one_points(count: int) -> int:
    """Points for the card that takes the running count to ``count``: 31 pays."""
    return THIRTY_ONE_POINTS if count == COUNT_LIMIT else 0


def set_points(cards: int) -> int:
    """Points for ``cards`` cards of one rank (0..MAX_SET): a point value per pair among them,
    so 0, 0, 2 (pair), 6 (pair royal), 12 (double pair royal). In the show a rank's cards; in the
    play the unbroken same-rank tail of the count sequence."""
    return PAIR_POINTS * (cards * (cards - 1) // 2)


def run_points(length: int) -> int:
    """Points for a run of ``length`` cards of consecutive ranks (0 below ``MIN_RUN``)."""
    return RUN_POINTS_PER_CARD * length if length >= MIN_RUN else 0


def last_card_points(count: int) -> int:
    """Points for laying the last card of the play at running ``count``: ``LAST_CARD_POINTS``, or
    none when that card makes 31 (the 31 already pays). Never more than one of go, 31 and last
    card for one card."""
    return 0 if count == COUNT_LIMIT else LAST_CARD_POINTS


def flush_points(four_suited, starter_suited, crib: bool):
    """Flush points of a hand or crib: ``four_suited`` its four cards share a suit,
    ``starter_suited`` the starter has it too (bools, or 0 / 1 int arrays for a batch). Five of a
    suit pay ``FIVE_CARD_FLUSH_POINTS``; four alone pay ``HAND_FLUSH_POINTS`` in a hand and
    nothing in the crib."""
    four_alone = 0 if crib else HAND_FLUSH_POINTS
    return four_suited * (starter_suited * FIVE_CARD_FLUSH_POINTS + (1 - starter_suited) * four_alone)


def nobs_points(rank, suit, starter_suit):
    """Nobs points of a card of ``rank`` and ``suit`` in a hand or crib counted with a starter of
    ``starter_suit`` (ints, or arrays for a batch): the jack of the starter's suit."""
    return NOBS_POINTS * ((rank == JACK) & (suit == starter_suit))


def heels_points(starter_rank: int) -> int:
    """Points the dealer pegs when the starter of ``starter_rank`` is cut: a jack pays."""
    return HEELS_POINTS if starter_rank == JACK else 0
