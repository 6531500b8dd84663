"""Pegging tactics shared by the standard and expert agents.

Every legal card gets a value in points, built from what the player can see (``ObservationView``):

* **take points when offered**: the points the card scores now (15, 31, pairs, runs, last card);
* **don't hand the opponent points** (this is what "don't lead a 5" and "avoid leaving 5, 10 or 21"
  come to): the expected points of the opponent's best immediate reply, with the opponent's cards a
  uniform draw of ``opp_cards_left`` from the unseen cards. The chance that the reply's best rank is
  ``r`` is exact under that draw (hypergeometric), the opponent taking the most points it can;
* **lead from a pair / set traps**: half of the points the player's own best counter would score
  after that reply (pairing a paired card back makes a pair royal);
* **the go**: the chance the opponent holds no card that fits times one point;
* **keep low cards for the go**: a small bonus for laying a high-valued card now.

Near the end of the game (``Board``), card choice changes from "what scores" to "what wins": a card
that reaches the target wins outright; a reply that would let the opponent reach its target costs a
loss; a pone who is sure to count out in the show plays purely to deny the dealer points; a dealer
who is about to be counted out by the pone plays for points now.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb

from crib_env.cards import RANK, VALUE
from crib_env.game import HAND_SIZE
from crib_env.observation import ObservationView
from crib_env.scoring import MAX_COUNT, play_points_of, score_hand

COUNTER_WEIGHT = 0.5  # a counter-score is worth less than a sure point: the opponent answers it
GO_VALUE = 1.0
LOW_CARD_BONUS = 0.03  # per counting value of the card laid: keep low cards for the go
WIN_VALUE = 100.0  # a won or lost game, in points, next to the few points a card can score
ATTACK_RISK_WEIGHT = 0.25  # a dealer playing for points now still minds the replies, a little
#: a pone's hand counts before the dealer's: a dealer facing a pone that needs this many points or
#: fewer (a median pone hand is about 7) is likely to be counted out and plays for points now
PONE_COUNT_OUT = 7


@lru_cache(maxsize=1 << 16)
def peg_points(ranks: tuple[int, ...]) -> int:
    """Points for the last card of a count sequence given by its ``ranks`` (oldest first): 15 and
    31 (2), pairs (2 / 6 / 12), the longest run >= 3; not go or last card. ``crib_env.scoring``'s
    ``play_points_of`` with rank ``r`` read as card id ``r`` (only ranks and counting values
    score), so that a hypothetical card "of rank r" needs no suit."""
    return play_points_of(ranks)


@dataclass(frozen=True, slots=True)
class Board:
    """The game position as the player sees it: scores, target and whose crib it is."""

    own: int
    opp: int
    target: int
    dealer: bool

    @property
    def need_own(self) -> int:
        return self.target - self.own

    @property
    def need_opp(self) -> int:
        return self.target - self.opp

    @classmethod
    def of(cls, view: ObservationView) -> Board:
        return cls(view.own_score, view.opp_score, view.target, view.is_dealer)


def opponent_cards_left(view: ObservationView) -> int:
    """Cards the opponent holds that could still be laid (0 once they said go this sequence)."""
    return 0 if view.opp_said_go else view.opp_cards_left


def _reply_distribution(points_by_rank: dict[int, int], unseen_by_rank: dict[int, int],
                        n_unseen: int, k: int) -> tuple[dict[int, float], float]:
    """Chance that the opponent's best-scoring reply is of each rank, and the chance of no reply.

    ``points_by_rank``: the reply points of each rank that fits; ``unseen_by_rank``: unseen cards
    of each rank; the opponent's ``k`` cards are a uniform draw from ``n_unseen``. Among ranks
    scoring the same the chance is shared in proportion to the unseen cards of each.
    """
    total = comb(n_unseen, k)
    if k == 0 or total == 0:
        return {}, 1.0
    levels = sorted(set(points_by_rank.values()), reverse=True)
    chance: dict[int, float] = {}
    excluded = 0  # unseen cards of the higher-scoring ranks, which the opponent must not hold
    p_none_before = 1.0
    for level in levels:
        ranks = [r for r, p in points_by_rank.items() if p == level]
        cards = sum(unseen_by_rank[r] for r in ranks)
        p_none_after = comb(n_unseen - excluded - cards, k) / total
        p_level = p_none_before - p_none_after
        for r in ranks:
            chance[r] = p_level * unseen_by_rank[r] / cards
        excluded += cards
        p_none_before = p_none_after
    return chance, p_none_before


def tactic_values(view: ObservationView, legal: list[int], board: Board | None = None,
                  mode: str | None = None) -> dict[int, float]:
    """The tactical value in points of laying each card of ``legal`` (see the module docstring).

    ``mode`` overrides the end-game reading of ``board``: ``"score"``, ``"defend"`` or ``"attack"``.
    """
    board = board or Board.of(view)
    mode = mode or endgame_mode(view, board)
    seq = tuple(RANK[c] for c in view.sequence)
    count = view.count
    unseen = view.unseen
    unseen_by_rank: dict[int, int] = {}
    for c in unseen:
        unseen_by_rank[RANK[c]] = unseen_by_rank.get(RANK[c], 0) + 1
    k = opponent_cards_left(view)
    values = {}
    for card in legal:
        rest = [c for c in view.hand if c != card]
        new_count = count + VALUE[card]
        line = seq + (RANK[card],)
        gain = peg_points(line)
        if not rest and view.opp_cards_left == 0 and new_count != MAX_COUNT:
            gain += 1  # the last card of the hand
        risk = counter = lose = 0.0
        p_go = 0.0
        if new_count != MAX_COUNT:  # 31 resets the count: the opponent leads afresh
            room = MAX_COUNT - new_count
            reply_points = {r: peg_points(line + (r,))
                            for r in unseen_by_rank if VALUE[r] <= room}
            fitting = sum(unseen_by_rank[r] for r in reply_points)
            chance, _ = _reply_distribution(reply_points, unseen_by_rank, len(unseen), k)
            p_go = comb(len(unseen) - fitting, k) / comb(len(unseen), k) if k else 1.0
            for r, p in chance.items():
                if p == 0.0:
                    continue
                risk += p * reply_points[r]
                if reply_points[r] >= board.need_opp:
                    lose += p
                after = new_count + VALUE[r]
                best = max((peg_points(line + (r, RANK[m]))
                            for m in rest if after + VALUE[m] <= MAX_COUNT), default=0)
                counter += p * best
        win = gain >= board.need_own
        if mode == "defend":  # own points no longer matter, only denying the opponent's
            value = -risk
        elif mode == "attack":
            value = gain + counter + GO_VALUE * p_go - ATTACK_RISK_WEIGHT * risk
        else:
            value = (gain - risk + COUNTER_WEIGHT * counter + GO_VALUE * p_go
                     + LOW_CARD_BONUS * VALUE[card])
        values[card] = value + WIN_VALUE * (win - (not win) * lose)
    return values


def endgame_mode(view: ObservationView, board: Board) -> str:
    """``"defend"`` when the pone will count out in the show unless the dealer pegs out first;
    ``"attack"`` when the dealer is likely to be counted out by the pone; else ``"score"``."""
    if view.starter is None:
        return "score"
    if not board.dealer:
        kept = list(view.hand) + list(view.played_own)
        if len(kept) == HAND_SIZE - 2 and score_hand(kept, view.starter) >= board.need_own:
            return "defend"
    elif board.need_opp <= PONE_COUNT_OUT:
        return "attack"
    return "score"


def best_card(values: dict[int, float]) -> int:
    """The highest-valued card; ties go to the lower card id so choices are reproducible."""
    return max(sorted(values), key=lambda c: values[c])
