"""The opponent's cards chosen by the network instead of by the exact solve (``reply``).

In a sampled deal both hands are known, so the exact solve lets the opponent answer each candidate
card as if it could see the player's hand. A real opponent cannot. With ``reply`` set to ``k``,
every choice the opponent makes in the first ``k`` cards laid after the candidate is taken from
the policy network sitting in its seat, with the observation it would have in that sampled deal
(``crib_env.fast.encode_obs`` of the opponent's seat: its sampled hand and discards, the public
plays): the value of such a choice is the network's probability of each card times the value
after it. The player's own choices in those cards take the best value, as the solve would, and
everything after them is solved exactly. ``k = 1`` lets the network lay the opponent's next card;
``k = 3`` its next two when the players alternate.

With ``own`` the player's own choices in those cards come from the network too, from the
observation the player would have (its own hand and the public plays, never the sampled hand):
the card of highest logit, as the learned agent lays it. So ``k = 7`` with ``own`` plays the
network in both seats to the end of the play, a rollout of the policy with no look at hidden
cards on either side; the player's choice is then one card per observation, not the best card of
each sampled deal.

Without ``own`` the player's best card in each sampled deal is chosen as if it could see that
deal's hidden cards (strategy fusion). With ``weights`` (the sampled deals' weights) it is chosen
once per information set instead (``choose_per_information_set``): among the rows of one
candidate that reached the same plays, the card with the best value summed over them, each row
weighted by its deal's weight and the network's chance of the opponent's cards on the way; beyond
the ``k`` cards the solve still sees the sampled deal.

The tree is grown one card at a time for all rows of a decision together (``expand``), so the
network sees every opponent position of one depth in one forward pass, and is then valued from
the deepest cards back to the candidates (``back_up``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, RANK_ARRAY
from crib_env.fast import (
    N_FIELDS,
    P_DEAL_OVER,
    PHASE,
    TO_MOVE,
    apply_action,
    encode_obs,
    legal_bits,
    nth_card,
)
from crib_env.observation import OBS_SIZE

from .sampling import deal_opponent
from .solve import end_value, new_stack, solve

_RANK = RANK_ARRAY.astype(np.int64)
_N_CARDS = N_CARDS
_OBS_SIZE = OBS_SIZE

#: kinds of position in the grown tree
LEAF, BEST, NETWORK = 0, 1, 2

#: (rows, observations, legal masks) of the positions the network chooses in -> the probabilities
#: (rows, 52) of the seat to move (``rows[:, TO_MOVE]``: 1 the opponent, 0 the player with ``own``)
SeatPolicy = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@njit(cache=True)
def after_candidates(position: np.ndarray, candidates: np.ndarray, kept: np.ndarray,
                     discards: np.ndarray, n_laid: int) -> np.ndarray:
    """Rows (C * S, N_FIELDS) of each sampled deal (as in ``sampling.solved_values``) after each
    candidate card, row ``c * S + s``."""
    n_c, n_s = candidates.size, kept.shape[0]
    rows = np.zeros((n_c * n_s, N_FIELDS), dtype=np.int64)
    row = position.copy()
    for s in range(n_s):
        deal_opponent(row, kept[s], discards[s], n_laid)
        for c in range(n_c):
            r = c * n_s + s
            rows[r, :] = row
            apply_action(rows, r, candidates[c])
    return rows


@njit(cache=True)
def _ranks_to_lay(rows: np.ndarray, r: int) -> int:
    """How many ranks the player to move in row ``r`` can lay (two cards of one rank are one
    move, as in ``solve``)."""
    ranks = 0
    count = 0
    bits = legal_bits(rows, r)
    while bits:
        bit = np.int64(1) << _RANK[nth_card(bits, 0)]
        bits &= bits - 1
        if not ranks & bit:
            ranks |= bit
            count += 1
    return count


@njit(cache=True)
def expand(rows: np.ndarray, cards_left: np.ndarray, wins: np.ndarray, own: bool):
    """One depth of the tree: each row's ``kind`` (``LEAF`` with its ``value``, ``BEST`` where the
    player or a forced opponent moves, ``NETWORK`` where the opponent, or with ``own`` the player
    too, chooses among two ranks or more), its children ``children[first[r]:first[r + 1]]`` (one
    per rank it can lay, the card in ``child_card``) and, for the ``NETWORK`` rows ``net_row``, the
    observations of the seat to move ``obs`` and its legal cards ``masks``. ``cards_left`` (per
    row): cards of the horizon still to lay; at 0 the row is solved exactly, at 1 so is a ``BEST``
    row (its best child is what the solve finds); below 0 the row is never reached (a card the
    network gives no chance) and is a leaf worth 0."""
    n = rows.shape[0]
    kind = np.zeros(n, dtype=np.int8)
    value = np.zeros(n)
    first = np.zeros(n + 1, dtype=np.int64)
    stack = new_stack()
    n_net = 0
    for r in range(n):
        count = 0
        if cards_left[r] < 0:
            pass
        elif rows[r, PHASE] >= P_DEAL_OVER:
            value[r] = end_value(rows, r, wins)
        else:
            count = _ranks_to_lay(rows, r) if cards_left[r] > 0 else 0
            if count > 1 and (rows[r, TO_MOVE] == 1 or own):
                kind[r] = NETWORK
                n_net += 1
            elif cards_left[r] > 1:
                kind[r] = BEST
            else:
                stack[0, :] = rows[r]
                value[r] = solve(stack, wins)
                count = 0
        first[r + 1] = first[r] + count
    children = np.zeros((first[n], N_FIELDS), dtype=np.int64)
    child_card = np.zeros(first[n], dtype=np.int64)
    net_row = np.zeros(n_net, dtype=np.int64)
    obs = np.zeros((n_net, _OBS_SIZE), dtype=np.float32)
    masks = np.zeros((n_net, _N_CARDS), dtype=np.int8)
    i = 0
    for r in range(n):
        if kind[r] == LEAF:
            continue
        j = first[r]
        ranks = 0
        bits = legal_bits(rows, r)
        while bits:
            card = nth_card(bits, 0)
            bits &= bits - 1
            if kind[r] == NETWORK:
                masks[i, card] = 1
            bit = np.int64(1) << _RANK[card]
            if not ranks & bit:
                ranks |= bit
                children[j, :] = rows[r]
                apply_action(children, j, card)
                child_card[j] = card
                j += 1
        if kind[r] == NETWORK:
            encode_obs(rows, r, rows[r, TO_MOVE], obs[i])
            net_row[i] = r
            i += 1
    return kind, value, first, children, child_card, net_row, obs, masks


@njit(cache=True)
def children_left(cards_left: np.ndarray, kind: np.ndarray, first: np.ndarray,
                  child_card: np.ndarray, net_row: np.ndarray, probs: np.ndarray,
                  prune: float) -> np.ndarray:
    """Cards of the horizon left to each child: one fewer than its parent's, but none (solve it
    exactly) for a card the network lays with a probability under ``prune``, and -1 (never
    reached, not searched) for one it gives no chance."""
    out = np.zeros(child_card.size, dtype=np.int64)
    for r in range(kind.size):
        for j in range(first[r], first[r + 1]):
            out[j] = cards_left[r] - 1
    for i in range(net_row.size):
        r = net_row[i]
        for j in range(first[r], first[r + 1]):
            p = 0.0
            for card in range(_N_CARDS):
                if _RANK[card] == _RANK[child_card[j]]:
                    p += probs[i, card]
            if p == 0.0:
                out[j] = -1
            elif p < prune:
                out[j] = 0
    return out


@njit(cache=True)
def back_up(kind: np.ndarray, value: np.ndarray, first: np.ndarray, child_card: np.ndarray,
            net_row: np.ndarray, probs: np.ndarray, child_value: np.ndarray) -> np.ndarray:
    """Each row's value from its children's: the best for ``BEST`` rows, the mean weighted by the
    opponent's probabilities ``probs`` (one row per ``net_row``) for ``NETWORK`` rows."""
    out = value.copy()
    for r in range(kind.size):
        if kind[r] == BEST:
            best = -1.0
            for j in range(first[r], first[r + 1]):
                best = max(best, child_value[j])
            out[r] = best
    for i in range(net_row.size):
        r = net_row[i]
        total = 0.0
        for card in range(_N_CARDS):
            p = probs[i, card]
            if p <= 0.0:
                continue
            for j in range(first[r], first[r + 1]):
                if _RANK[child_card[j]] == _RANK[card]:
                    total += p * child_value[j]
                    break
        out[r] = total
    return out


_N_RANKS = int(_RANK.max()) + 1
#: one column per rank: a card's column is its rank (cards' probabilities summed by rank)
_RANK_COLUMNS = np.eye(_N_RANKS)[_RANK]


def _children_reach(reach: np.ndarray, kind: np.ndarray, parent: np.ndarray,
                    child_card: np.ndarray, net_row: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Each child's weight: its ``parent``'s, times the network's chance of its rank where the
    parent is a ``NETWORK`` row."""
    out = reach[parent].copy()
    net_index = np.full(kind.size, -1)
    net_index[net_row] = np.arange(net_row.size)
    chosen = net_index[parent] >= 0
    by_rank = probs @ _RANK_COLUMNS
    out[chosen] *= by_rank[net_index[parent[chosen]], _RANK[child_card[chosen]]]
    return out


def choose_per_information_set(values: np.ndarray, player_best: np.ndarray, keys: np.ndarray,
                               reach: np.ndarray, parents: np.ndarray, child_card: np.ndarray,
                               child_value: np.ndarray) -> np.ndarray:
    """``values`` with each row of ``player_best`` (the player's ``BEST`` rows) valued at the one
    rank chosen for all rows of its information set (the same ``keys``, the same ranks to lay):
    the rank whose children's values, weighted by the rows' ``reach``, sum highest. ``parents``:
    each child's row."""
    child = np.flatnonzero(player_best[parents])
    if child.size == 0:
        return values
    parent = parents[child]
    rank = _RANK[child_card[child]]
    rank_set = np.zeros(values.size, dtype=np.int64)
    np.bitwise_or.at(rank_set, parent, np.int64(1) << rank)
    _, group = np.unique(keys[parent] << _N_RANKS | rank_set[parent], return_inverse=True)
    group = group.ravel()
    totals = np.zeros((group.max() + 1, _N_RANKS))
    np.add.at(totals, (group, rank), reach[parent] * child_value[child])
    present = np.zeros(totals.shape, dtype=bool)
    present[group, rank] = True
    best_rank = np.where(present, totals, -np.inf).argmax(axis=1)
    out = values.copy()
    pick = rank == best_rank[group]
    out[parent[pick]] = child_value[child[pick]]
    return out


def answered_values(rows: np.ndarray, cards: int, wins: np.ndarray,
                    policy: SeatPolicy, prune: float = 0.0, own: bool = False,
                    groups: np.ndarray | None = None,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """Player 0's chance to win from each row when the opponent's choices in the next ``cards``
    cards laid come from ``policy`` and the player's take the best value (with ``own``: come from
    ``policy`` too); the rest of the play solved exactly, as is everything after a card of
    probability under ``prune``. With ``weights`` (per row) and ``groups`` (per row: rows of one
    candidate share one), the player's best card is chosen once per information set
    (``choose_per_information_set``), not once per row."""
    per_set = weights is not None
    levels = []
    left = np.full(len(rows), cards, dtype=np.int64)
    keys = np.asarray(groups if per_set else np.zeros(len(rows)), dtype=np.int64)
    reach = np.asarray(weights if per_set else np.ones(len(rows)), dtype=np.float64)
    while len(rows):
        kind, value, first, children, child_card, net_row, obs, masks = expand(rows, left, wins,
                                                                               own)
        probs = (policy(rows[net_row], obs, masks) if net_row.size
                 else np.zeros((0, _N_CARDS)))
        per_level = None
        if per_set:  # a child's key: its parent's, the seat that laid and the rank it laid
            parent = np.repeat(np.arange(kind.size), np.diff(first))
            per_level = ((kind == BEST) & (rows[:, TO_MOVE] == 0), keys, reach, parent)
            keys = (keys[parent] * (2 * _N_RANKS + 1) + 1 + _RANK[child_card]
                    + _N_RANKS * rows[parent, TO_MOVE])
            reach = _children_reach(reach, kind, parent, child_card, net_row, probs)
        levels.append((kind, value, first, child_card, net_row, probs, per_level))
        left = children_left(left, kind, first, child_card, net_row, probs, prune)
        rows = children
    values = np.zeros(0)
    for kind, value, first, child_card, net_row, probs, per_level in reversed(levels):
        backed = back_up(kind, value, first, child_card, net_row, probs, values)
        if per_level is not None:
            backed = choose_per_information_set(backed, *per_level, child_card, values)
        values = backed
    return values
