"""The pegging policy of a rollout (numba): how each player lays its cards in a simulated play.

``play_out`` finishes the play of one ``crib_env.fast`` state row with fast's rules
(``apply_action``: go, 31, count restart, last card, the game ending at the target, then the show),
``choose_card`` picking every card by the rollout policy:

* ``POLICY_TACTICS`` (the default, the expert's): the standard tactics of
  ``agents.pegging.tactic_values`` in score mode, each player judging from what it has seen
  (``tactic_value``: the one tactics kernel, ``agents.pegging_kernels``), with a tiny random
  tie-break;
* ``POLICY_LOWEST``: the lowest legal card id (deterministic; for tests against the engine).

Only the policy lives here; the rules are ``crib_env.fast``'s. The drivers that sample deals and
average the results are in ``agents.rollout``.
"""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_RANKS, RANK_ARRAY, VALUE_ARRAY
from crib_env.fast import (
    COUNT,
    OK,
    P_GAME_OVER,
    P_PLAY,
    PHASE,
    SAID_GO,
    SCORE,
    SEQ_LEN,
    TARGET,
    TO_MOVE,
    apply_action,
    peg_points,
)
from crib_env.rule_kernels import fits

from .pegging_kernels import MODE_SCORE, NEVER
from .pegging_kernels import tactic_value as _tactic_value

# The numbers are kept from when there were four policies (0 and 2, heuristics only a bench script
# used, are in git history), so old decision hashes still name the same policies.
POLICY_LOWEST = 1  # lay the lowest legal card id (deterministic; for tests against the engine)
POLICY_TACTICS = 3  # the standard tactics (agents.pegging.tactic_values) from each side's view
POLICIES = {POLICY_LOWEST: "lowest", POLICY_TACTICS: "tactics"}
_VALUE = VALUE_ARRAY.astype(np.int64)  # counting value by card id
_RANK = RANK_ARRAY.astype(np.int64)  # rank by card id (a hypothetical reply of rank r is card r)
_N_RANKS = N_RANKS
SEQ_ROOM = 16  # the count sequence (8 at most) with room for imagined replies


@njit(cache=True)
def tactic_value(hands: np.ndarray, sizes: np.ndarray, p: int, i: int, seq: np.ndarray, n: int,
                 count: int, unseen: np.ndarray, n_unseen: int, k: int,
                 reply: np.ndarray) -> float:
    """``agents.pegging.tactic_values`` (score mode) of laying ``hands[p, i]``, seen from ``p``:
    ``unseen`` holds the cards ``p`` has not seen by rank (``n_unseen`` in all), ``k`` how many
    the other player could still lay. The one tactics kernel
    (``agents.pegging_kernels.tactic_value``) with the reply ranks listed from the lowest, no
    end-game term (the rollouts play the show out instead)."""
    hand = np.int64(0)
    for j in range(sizes[p]):
        hand |= np.int64(1) << hands[p, j]
    order = np.empty(_N_RANKS, dtype=np.int64)
    n_order = 0
    for r in range(_N_RANKS):
        if unseen[r] > 0:
            order[n_order] = r
            n_order += 1
    return _tactic_value(hands[p, i], hand, seq, n, count, order, n_order, unseen, n_unseen, k,
                         sizes[1 - p], NEVER, NEVER, MODE_SCORE, reply)


@njit(cache=True)
def choose_card(hands: np.ndarray, sizes: np.ndarray, p: int, seq: np.ndarray, n: int, count: int,
            policy: int, unseen: np.ndarray, n_unseen: np.ndarray, other_went: bool,
            reply: np.ndarray) -> int:
    """Index into ``hands[p]`` of the card the rollout policy lays (one must fit); ``other_went``:
    the other player has said go in this count sequence."""
    best, best_score = -1, -1e9
    hand = hands[p]
    legal = 0
    for i in range(sizes[p]):
        if fits(count, _VALUE[hand[i]]):
            legal += 1
            best = i
    if legal == 1:
        return best
    for i in range(sizes[p]):
        card = hand[i]
        if not fits(count, _VALUE[card]):
            continue
        if policy == POLICY_LOWEST:
            score = -float(card)
        else:
            k = 0 if other_went else sizes[1 - p]
            score = tactic_value(hands, sizes, p, i, seq, n, count, unseen[p], n_unseen[p], k,
                                  reply) + 1e-3 * np.random.random()
        if score > best_score:
            best, best_score = i, score
    return best


@njit(cache=True)
def play_out(S: np.ndarray, hands: np.ndarray, sizes: np.ndarray, seq: np.ndarray, forced: int,
              policy: int, unseen: np.ndarray, n_unseen: np.ndarray, reply: np.ndarray) -> int:
    """Finish the play of row 0 of ``S`` (a ``crib_env.fast`` row in the play phase) with fast's
    rules (``apply_action``: go, 31, last card, the game ending at the target, the show after the
    last card), the rollout policy choosing every card. Player 0 is the player. Policy state:
    ``hands[p, :sizes[p]]`` the cards of the row's ``HAND + p`` in the order the policy weighs them;
    ``seq[:SEQ_LEN]`` the row's count sequence (scratch past it); ``unseen[p]`` / ``n_unseen[p]``
    what p has not seen, by rank (tactics policy). ``forced``: the card the player to move lays first
    (-1: policy). Returns the points the last card pegged past the target when it won the game (the
    row's scores stop at the target), else 0."""
    before = 0
    while S[0, PHASE] == P_PLAY:
        p = S[0, TO_MOVE]
        o = 1 - p
        n = S[0, SEQ_LEN]
        idx = -1
        if forced >= 0:
            for i in range(sizes[p]):
                if hands[p, i] == forced:
                    idx = i
            forced = -1
        else:
            idx = choose_card(hands, sizes, p, seq, n, S[0, COUNT], policy, unseen, n_unseen,
                          S[0, SAID_GO + o] != 0, reply)
        card = hands[p, idx]
        hands[p, idx] = hands[p, sizes[p] - 1]
        sizes[p] -= 1
        if unseen[o, _RANK[card]] > 0:  # the other player now has seen it
            unseen[o, _RANK[card]] -= 1
            n_unseen[o] -= 1
        seq[n] = card
        before = S[0, SCORE + p]
        if apply_action(S, 0, card) != OK:
            raise ValueError("a rollout card that is not legal")
    if S[0, PHASE] == P_GAME_OVER:
        return max(0, before + peg_points(S, 0) - S[0, TARGET])
    return 0
