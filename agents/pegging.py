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

The value itself is computed by one compiled kernel, ``agents.pegging_kernels.tactic_value``, which
the standard agent's batch form (``agents.pegging_batch``) and the rollouts' tactics policy
(``agents.rollout_policy``) call too; ``tactic_values`` hands it the view as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from crib_env.cards import N_RANKS, RANK
from crib_env.fast import bits_of
from crib_env.game import KEEP_SIZE
from crib_env.observation import ObservationView
from crib_env.scoring import play_points_of, score_hand

from .pegging_kernels import (
    ATTACK_RISK_WEIGHT,
    COUNTER_WEIGHT,
    GO_VALUE,
    LOW_CARD_BONUS,
    MODE_ATTACK,
    MODE_DEFEND,
    MODE_SCORE,
    PONE_COUNT_OUT,
    SEQ_ROOM,
    WIN_VALUE,
    tactic_value,
)

#: ``endgame_mode``'s readings as the kernel's mode numbers
MODES = {"score": MODE_SCORE, "defend": MODE_DEFEND, "attack": MODE_ATTACK}


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


def tactic_values(view: ObservationView, legal: list[int], board: Board | None = None,
                  mode: str | None = None) -> dict[int, float]:
    """The tactical value in points of laying each card of ``legal`` (see the module docstring).

    ``mode`` overrides the end-game reading of ``board``: ``"score"``, ``"defend"`` or ``"attack"``.
    """
    board = board or Board.of(view)
    mode = mode or endgame_mode(view, board)
    seq = np.zeros(SEQ_ROOM, dtype=np.int64)
    seq[:len(view.sequence)] = view.sequence
    # the unseen cards by rank, the ranks listed in the order the unseen cards first show them
    unseen = np.zeros(N_RANKS, dtype=np.int64)
    order = []
    for c in view.unseen:
        if unseen[RANK[c]] == 0:
            order.append(RANK[c])
        unseen[RANK[c]] += 1
    ranks = np.array(order, dtype=np.int64)
    hand = bits_of(view.hand)
    k = opponent_cards_left(view)
    reply = np.zeros(N_RANKS, dtype=np.int64)
    return {card: float(tactic_value(card, hand, seq, len(view.sequence), view.count, ranks,
                                     len(order), unseen, len(view.unseen), k, view.opp_cards_left,
                                     board.need_own, board.need_opp, MODES[mode], reply))
            for card in legal}


def endgame_mode(view: ObservationView, board: Board) -> str:
    """``"defend"`` when the pone will count out in the show unless the dealer pegs out first;
    ``"attack"`` when the dealer is likely to be counted out by the pone; else ``"score"``."""
    if view.starter is None:
        return "score"
    if not board.dealer:
        kept = list(view.hand) + list(view.played_own)
        if len(kept) == KEEP_SIZE and score_hand(kept, view.starter) >= board.need_own:
            return "defend"
    elif board.need_opp <= PONE_COUNT_OUT:
        return "attack"
    return "score"


def best_card(values: dict[int, float]) -> int:
    """The highest-valued card; ties go to the lower card id so choices are reproducible."""
    return max(sorted(values), key=lambda c: values[c])


__all__ = ["ATTACK_RISK_WEIGHT", "COUNTER_WEIGHT", "GO_VALUE", "LOW_CARD_BONUS", "PONE_COUNT_OUT",
           "WIN_VALUE", "Board", "best_card", "endgame_mode", "opponent_cards_left", "peg_points",
           "tactic_values"]
