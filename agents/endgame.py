"""Playing for the win near the end of the game: win chances by board position.

``win_table(target)[a, b, d]`` is the chance that a player on ``a`` points beats one on ``b``, where
``d`` is 1 if that player deals the next deal. For target 121 it is the packaged win-odds table
(``crib_env.odds``); for other targets, the exact solution of a simple model of the game:
each deal the pone scores a total drawn from ``PONE_TOTAL`` and the dealer one from
``DEALER_TOTAL`` (independently), the pone's points count first (its hand is shown first), and the
first to reach the target wins. The per-deal distributions were measured from standard against
standard (``bench/deal_points.py``, which prints these tables).

``choose_discard`` uses the analyzer's exact hand scores (one per possible starter) together with these
distributions to pick the discard most likely to win once either player is within ``ENDGAME_NEED``
points of the target, and the best expected net value before that. The chances come from one
compiled kernel, ``win_chances_by_discard``, which the compiled standard agent
(``agents.standard_batch``) calls too.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
from numba import njit

from .analysis import DiscardTable, net_order
from .pegging import Board

#: from this many points short of the target (either player) discards are chosen for the win
ENDGAME_NEED = 30
WIN_TIE = 1e-3  # win chances closer than this are a tie, broken by expected net points


@njit(cache=True)
def near_the_end(own_to_go, opp_to_go, need):
    """Whether either player is within ``need`` points of the target, given the points each still
    needs: where the board, not the points, decides. The one test of the expert, standard (also
    compiled), the search, pools (``agents.networks.near_the_end``, its tensor form) and
    recordings that start near the end."""
    return min(own_to_go, opp_to_go) <= need

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
    if that player deals the next deal. Read-only. For the win-odds table's target (121) it is that
    table (``crib_env.odds``: whole deal traces of standard vs standard, every scoring event in
    order), which won 50.2% (paired 95%: 50.1-50.3%) of 40,000 duplicate games against this
    module's per-deal model (``bench/standard_odds.py``); for other targets, or without the table
    file, the model."""
    table = _packaged_table(int(target))
    if table is None:
        table = _solve_win_table(int(target), PONE_TOTAL, DEALER_TOTAL)
        table.flags.writeable = False
    return table


def _packaged_table(target: int) -> np.ndarray | None:
    from crib_env.odds import OddsTableError, default_table

    try:
        odds = default_table()
    except OddsTableError as err:
        warnings.warn(f"standard's endgame uses its per-deal model: {err}", stacklevel=3)
        return None
    return odds.win if odds.target == target else None


def win_chance(own: int, opp: int, own_deals_next: bool, target: int) -> float:
    """Chance to win from the start of a deal; 1 or 0 once a score has reached the target."""
    if own >= target:
        return 1.0
    if opp >= target:
        return 0.0
    return float(win_table(target)[own, opp, int(own_deals_next)])


@njit(cache=True)
def _convolved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(a.size + b.size - 1)
    for i in range(a.size):
        for j in range(b.size):
            out[i + j] += a[i] * b[j]
    return out


@njit(cache=True)
def _shifted_crib(shift: float) -> np.ndarray:
    """``CRIB_P`` moved by a real ``shift`` (split between the two nearest whole shifts); points
    pushed below 0 pile up at 0."""
    low = np.int64(np.floor(shift))
    frac = shift - low
    out = np.zeros(CRIB_P.size + max(low + 1, 0))
    for p in range(CRIB_P.size):
        out[max(p + low, 0)] += (1.0 - frac) * CRIB_P[p]
    for p in range(CRIB_P.size):
        out[max(p + low + 1, 0)] += frac * CRIB_P[p]
    return out


@njit(cache=True)
def win_chances_by_discard(hand_points: np.ndarray, crib: np.ndarray, dealer: bool, own: int,
                           opp: int, target: int, table: np.ndarray) -> np.ndarray:
    """The chance of winning with each discard: ``hand_points`` int64 (D, U), the kept hand's score
    with each possible starter, and ``crib`` (D,), the expected crib, of each of D discards; the
    scores ``own`` and ``opp``, ``dealer`` for the player's crib, and ``table = win_table(target)``.

    The player's hand points are exact per starter; pegging, the opponent's hand and the crib come
    from the measured per-deal distributions, the crib's moved to the discard's exact expectation.
    Order of counting: the pone's total, then the dealer's; a deal that ends with neither at the
    target goes on with the win table (the player deals next if it is the pone now).
    """
    need_own, need_opp = target - own, target - opp
    deals_next = 0 if dealer else 1
    dealer_peg_hand = _convolved(DEALER_PEGGING_P, DEALER_HAND_P)
    n_starters = hand_points.shape[1]
    chances = np.empty(crib.size)
    for i in range(crib.size):
        hand = np.zeros(hand_points[i].max() + 1)
        for s in range(n_starters):
            hand[hand_points[i, s]] += 1.0
        hand /= n_starters
        crib_dist = _shifted_crib(crib[i] - CRIB_MEAN)
        if dealer:
            mine = _convolved(_convolved(hand, DEALER_PEGGING_P), crib_dist)
            theirs = PONE_TOTAL
        else:
            mine = _convolved(hand, PONE_PEGGING_P)
            theirs = _convolved(dealer_peg_hand, crib_dist)
        own_out = 0.0  # the player reaches the target this deal
        for x in range(max(need_own, 0), mine.size):
            own_out += mine[x]
        later = 0.0  # neither does: the game goes on from the new scores
        for x in range(min(need_own, mine.size)):
            row = 0.0
            for y in range(min(need_opp, theirs.size)):
                row += table[min(own + x, target - 1), min(opp + y, target - 1), deals_next] * theirs[y]
            later += mine[x] * row
        if dealer:  # the pone (opponent) counts first: it must fall short for the player to count
            opp_short = 0.0
            for y in range(min(need_opp, theirs.size)):
                opp_short += theirs[y]
            chances[i] = opp_short * own_out + later
        else:
            chances[i] = own_out + later
    return chances


def discard_win_chances(table: DiscardTable, board: Board) -> np.ndarray:
    """The chance of winning the game with each of the 15 discards of ``table`` (same order); see
    ``win_chances_by_discard``."""
    return win_chances_by_discard(np.ascontiguousarray(table.hand_points, dtype=np.int64),
                                  np.ascontiguousarray(table.crib, dtype=np.float64), bool(board.dealer),
                                  board.own, board.opp, board.target, win_table(board.target))


def choose_discard(table: DiscardTable, board: Board, already: tuple[int, ...] = ()) -> int:
    """Index (into ``DISCARD_SPLITS``) of the discard to make: the best expected net value, or near
    the end of the game the best chance to win (ties by net). Only discards that contain the cards
    in ``already`` are considered."""
    allowed = [i for i in net_order(table, board.dealer)
               if set(already) <= set(table.discard(i))]
    if not near_the_end(board.need_own, board.need_opp, ENDGAME_NEED):
        return allowed[0]
    chances = discard_win_chances(table, board)
    best = max(chances[i] for i in allowed)
    return next(i for i in allowed if chances[i] >= best - WIN_TIE)
