"""Playing for the win near the end of the game: win chances by board position.

``win_table(target)[a, b, d]`` is the chance that a player on ``a`` points beats one on ``b``, where
``d`` is 1 if that player deals the next deal. It is the exact solution of a simple model of the game:
each deal the pone scores a total drawn from ``PONE_TOTAL`` and the dealer one from
``DEALER_TOTAL`` (independently), the pone's points count first (its hand is shown first), and the
first to reach the target wins. The per-deal distributions were measured from standard against
standard (``bench/deal_points.py``, which prints these tables).

``choose_discard`` uses the analyzer's exact hand scores (one per possible starter) together with these
distributions to pick the discard most likely to win once either player is within ``ENDGAME_NEED``
points of the target, and the best expected net value before that.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from .analysis import DiscardTable, net_order
from .pegging import Board

#: from this many points short of the target (either player) discards are chosen for the win
ENDGAME_NEED = 30
WIN_TIE = 1e-3  # win chances closer than this are a tie, broken by expected net points

# Per-deal points by role: how many of 23,972 completed deals of standard vs standard (3,000 games,
# bench/deal_points.py --games 3000) scored 0, 1, 2 ... points.
# Pegging includes go and last card; the dealer's crib includes his heels.
PONE_PEGGING = (4997, 6262, 4293, 3862, 1700, 716, 842, 598, 309, 184, 116, 53, 7, 8, 10, 9, 2,
    3, 0, 1)
DEALER_PEGGING = (0, 5357, 4112, 5388, 3381, 2445, 1217, 824, 494, 300, 238, 68, 53, 20, 11, 37,
    7, 10, 4, 1, 2, 1, 0, 2)
PONE_HAND = (116, 15, 1167, 328, 3011, 911, 3706, 1735, 4480, 1540, 1990, 376, 2335, 201, 765,
    115, 736, 150, 44, 0, 141, 33, 7, 4, 65, 0, 0, 0, 1)
DEALER_HAND = (135, 9, 1459, 392, 2802, 967, 3883, 1504, 4148, 1546, 2118, 359, 2416, 137, 755,
    104, 782, 162, 35, 0, 136, 33, 15, 6, 67, 0, 0, 0, 2)
CRIB = (1641, 151, 5561, 852, 5027, 1377, 3449, 1167, 2091, 493, 819, 101, 802, 30, 168, 18, 135,
    27, 27, 2, 24, 8, 0, 0, 2)


def _dist(counts: tuple[float, ...]) -> np.ndarray:
    array = np.asarray(counts, dtype=np.float64)
    return array / array.sum()


def _convolve(*dists: np.ndarray) -> np.ndarray:
    out = np.ones(1)
    for d in dists:
        out = np.convolve(out, d)
    return out


PONE_PEGGING_P = _dist(PONE_PEGGING)
DEALER_PEGGING_P = _dist(DEALER_PEGGING)
PONE_HAND_P = _dist(PONE_HAND)
DEALER_HAND_P = _dist(DEALER_HAND)
CRIB_P = _dist(CRIB)
PONE_TOTAL = _convolve(PONE_PEGGING_P, PONE_HAND_P)
DEALER_TOTAL = _convolve(DEALER_PEGGING_P, DEALER_HAND_P, CRIB_P)
CRIB_MEAN = float(np.arange(CRIB_P.size) @ CRIB_P)


@njit(cache=True)
def _solve_win_table(target: int, pone: np.ndarray, dealer: np.ndarray) -> np.ndarray:
    """W[a, b, d] by backward induction over the scores (see the module docstring)."""
    win = np.zeros((target, target, 2))
    stay = pone[0] * dealer[0]  # both score nothing: the same scores, roles swapped
    for a in range(target - 1, -1, -1):
        for b in range(target - 1, -1, -1):
            as_dealer = 0.0  # player "a" deals, "b" is pone and counts first
            for p in range(pone.size):
                if pone[p] == 0.0 or b + p >= target:
                    continue
                for q in range(dealer.size):
                    w = pone[p] * dealer[q]
                    if w == 0.0:
                        continue
                    if a + q >= target:
                        as_dealer += w
                    elif p or q:
                        as_dealer += w * win[a + q, b + p, 0]
            as_pone = 0.0  # player "a" is pone and counts first
            for p in range(pone.size):
                if pone[p] == 0.0:
                    continue
                if a + p >= target:
                    as_pone += pone[p]
                    continue
                for q in range(dealer.size):
                    w = pone[p] * dealer[q]
                    if w == 0.0 or b + q >= target:
                        continue
                    if p or q:
                        as_pone += w * win[a + p, b + q, 1]
            # win[a,b,1] = as_dealer + stay * win[a,b,0]; win[a,b,0] = as_pone + stay * win[a,b,1]
            win[a, b, 1] = (as_dealer + stay * as_pone) / (1.0 - stay * stay)
            win[a, b, 0] = as_pone + stay * win[a, b, 1]
    return win


@lru_cache(maxsize=8)
def win_table(target: int) -> np.ndarray:
    """Float (target, target, 2): chance that a player on ``a`` beats one on ``b``; last index 1
    if that player deals the next deal. Read-only."""
    table = _solve_win_table(int(target), PONE_TOTAL, DEALER_TOTAL)
    table.flags.writeable = False
    return table


def win_chance(own: int, opp: int, own_deals_next: bool, target: int) -> float:
    """Chance to win from the start of a deal; 1 or 0 once a score has reached the target."""
    if own >= target:
        return 1.0
    if opp >= target:
        return 0.0
    return float(win_table(target)[own, opp, int(own_deals_next)])


def _shifted(dist: np.ndarray, shift: float) -> np.ndarray:
    """``dist`` moved by a real ``shift`` (split between the two nearest whole shifts); points
    pushed below 0 pile up at 0."""
    low = int(np.floor(shift))
    frac = shift - low
    out = np.zeros(dist.size + max(low + 1, 0))
    points = np.arange(dist.size)
    np.add.at(out, np.maximum(points + low, 0), (1.0 - frac) * dist)
    np.add.at(out, np.maximum(points + low + 1, 0), frac * dist)
    return out


def _finish_chances(own: int, opp: int, target: int, own_deals_next: bool,
                    size: tuple[int, int]) -> np.ndarray:
    """M[x, y]: win chance after this deal if the player adds x points and the opponent y, when
    neither reaches the target (entries past the target are set to 0 and handled by the caller)."""
    table = win_table(target)[:, :, int(own_deals_next)]
    xs = np.minimum(own + np.arange(size[0]), target - 1)
    ys = np.minimum(opp + np.arange(size[1]), target - 1)
    return table[np.ix_(xs, ys)]


def discard_win_chances(table: DiscardTable, board: Board) -> np.ndarray:
    """The chance of winning the game with each of the 15 discards of ``table`` (same order).

    The player's hand points are exact per starter; pegging, the opponent's hand and the crib come
    from the measured per-deal distributions, the crib's moved to this discard's exact expectation.
    Order of counting: the pone's total, then the dealer's.
    """
    need_own, need_opp = board.need_own, board.need_opp
    chances = np.empty(len(table.crib))
    for i in range(len(table.crib)):
        hand = np.bincount(table.hand_points[i], minlength=1) / table.hand_points.shape[1]
        crib = _shifted(CRIB_P, float(table.crib[i]) - CRIB_MEAN)
        if board.dealer:
            mine = _convolve(hand, DEALER_PEGGING_P, crib)
            theirs = PONE_TOTAL
        else:
            mine = _convolve(hand, PONE_PEGGING_P)
            theirs = _convolve(DEALER_PEGGING_P, DEALER_HAND_P, crib)
        finish = _finish_chances(board.own, board.opp, board.target,
                                 own_deals_next=not board.dealer, size=(mine.size, theirs.size))
        own_out = np.arange(mine.size) >= need_own
        opp_out = np.arange(theirs.size) >= need_opp
        later = finish * ~own_out[:, None] * ~opp_out[None, :]
        if board.dealer:  # the pone (opponent) counts first
            after_pone = theirs * ~opp_out
            chances[i] = float(np.sum(after_pone) * (mine @ own_out)) + float(mine @ later @ theirs)
        else:
            chances[i] = float(mine @ own_out) + float(mine @ later @ theirs)
    return chances


def choose_discard(table: DiscardTable, board: Board, already: tuple[int, ...] = ()) -> int:
    """Index (into ``DISCARD_SPLITS``) of the discard to make: the best expected net value, or near
    the end of the game the best chance to win (ties by net). Only discards that contain the cards
    in ``already`` are considered."""
    allowed = [i for i in net_order(table, board.dealer)
               if set(already) <= set(table.discard(i))]
    if min(board.need_own, board.need_opp) > ENDGAME_NEED:
        return allowed[0]
    chances = discard_win_chances(table, board)
    best = max(chances[i] for i in allowed)
    return next(i for i in allowed if chances[i] >= best - WIN_TIE)
