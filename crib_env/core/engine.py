"""The compiled engine: deals, legal moves, discards, the play with its go and last card, the show,
and whole random games; exactly ``crib_env.game.Game``'s rules on a state row
(``tests/test_fast_differential`` compares them after every step).

Longer than the usual module: the rules are one state machine (``apply_action`` and the helpers
it calls); split, its steps would be read in several files.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import N_CARDS, RANK_ARRAY, VALUE, VALUE_ARRAY
from ..game import DISCARDS_PER_PLAYER, HAND_SIZE
from ..rule_kernels import count_after, count_restarts, heels_points, last_card_points
from ..rules import COUNT_LIMIT, GO_POINTS, fits
from .bits import nth_card, popcount
from .layout import (
    COMPLETED,
    COUNT,
    CRIB_PTS,
    DEAL_NO,
    DEALER,
    DEALT,
    DISC,
    ERR_DEAL_OVER,
    ERR_NOT_LEGAL,
    ERR_OVER,
    FIRST_DEALER,
    HAND,
    HAND_PTS,
    HEELS_PTS,
    LAST_PLAYER,
    NDISC,
    NEXT_STARTER,
    NHAND,
    OK,
    P_DEAL_OVER,
    P_DISCARD,
    P_GAME_OVER,
    P_PLAY,
    PEG,
    PHASE,
    PLAYED,
    PREV,
    RNG,
    SAID_GO,
    SCORE,
    SEQ,
    SEQ_LEN,
    SINGLE_DEAL,
    STARTER,
    TARGET,
    TO_MOVE,
    WINNER,
    new_state,
)
from .rng import rand_below, seed_row
from .score_kernels import peg_points, show_points

# Score categories for _award.
CAT_PEG, CAT_HAND, CAT_CRIB, CAT_HEELS = 0, 1, 2, 3

# -- tables (frozen into the compiled code) ----------------------------------------------------
_RANK = RANK_ARRAY.astype(np.int64)
_VALUE = VALUE_ARRAY.astype(np.int64)
#: bitmask of the cards that may be laid at each running count 0..COUNT_LIMIT
_FITS = np.array([sum(1 << c for c in range(N_CARDS) if fits(count, VALUE[c]))
                  for count in range(COUNT_LIMIT + 1)], dtype=np.int64)
_GO_POINTS = GO_POINTS
_HAND_SIZE = HAND_SIZE
_DISCARDS = DISCARDS_PER_PLAYER
_N_CARDS = N_CARDS


@njit(cache=True)
def _award(S, b, player, points, category):
    """Peg ``points`` for ``player`` (capped at the target); True if that ends the game."""
    score = S[b, SCORE + player]
    gained = min(points, S[b, TARGET] - score)
    S[b, PREV + player] = score
    S[b, SCORE + player] = score + gained
    if category == CAT_PEG:
        S[b, PEG + player] += gained
    elif category == CAT_HAND:
        S[b, HAND_PTS + player] += gained
    elif category == CAT_CRIB:
        S[b, CRIB_PTS] += gained
    else:
        S[b, HEELS_PTS] += gained
    if score + gained >= S[b, TARGET]:
        S[b, WINNER] = player
        S[b, PHASE] = P_GAME_OVER
        return True
    return False


@njit(cache=True)
def set_deal(S, b, hand0, hand1, starter):
    """Start a deal in row ``b`` with the given cards: ``hand0`` / ``hand1`` bitmasks of six cards
    for player 0 / 1 and the ``starter`` id. The dealer is ``S[b, DEALER]``; pone discards first."""
    S[b, HAND] = hand0
    S[b, HAND + 1] = hand1
    S[b, DEALT] = hand0
    S[b, DEALT + 1] = hand1
    for p in range(2):
        S[b, DISC + p] = 0
        S[b, PLAYED + p] = 0
        S[b, NDISC + p] = 0
        S[b, NHAND + p] = _HAND_SIZE
        S[b, SAID_GO + p] = 0
        S[b, PEG + p] = 0
        S[b, HAND_PTS + p] = 0
    S[b, CRIB_PTS] = 0
    S[b, HEELS_PTS] = 0
    S[b, COMPLETED] = 0
    for i in range(S[b, SEQ_LEN]):
        S[b, SEQ + i] = 0
    S[b, SEQ_LEN] = 0
    S[b, COUNT] = 0
    S[b, STARTER] = -1
    S[b, NEXT_STARTER] = starter
    S[b, LAST_PLAYER] = -1
    S[b, PHASE] = P_DISCARD
    S[b, TO_MOVE] = 1 - S[b, DEALER]
    S[b, DEAL_NO] += 1


@njit(cache=True)
def random_deal(S, b):
    """Deal six cards to each player and the starter from row ``b``'s random stream."""
    taken = np.int64(0)
    hand0 = np.int64(0)
    hand1 = np.int64(0)
    c = 0
    for i in range(2 * _HAND_SIZE + 1):
        while True:  # rejection: redraw a card already dealt
            c = rand_below(S, b, _N_CARDS)
            bit = np.int64(1) << c
            if not taken & bit:
                break
        taken |= bit
        if i < _HAND_SIZE:
            hand0 |= bit
        elif i < 2 * _HAND_SIZE:
            hand1 |= bit
    set_deal(S, b, hand0, hand1, c)  # the thirteenth card is the starter


@njit(cache=True)
def cut_for_deal(S, b):
    """Each player cuts a card; the lower rank deals (ace low); equal ranks cut again."""
    while True:
        c0 = rand_below(S, b, _N_CARDS)
        c1 = rand_below(S, b, _N_CARDS - 1)
        if c1 >= c0:
            c1 += 1  # two different cards
        if _RANK[c0] != _RANK[c1]:
            return 0 if _RANK[c0] < _RANK[c1] else 1


@njit(cache=True)
def init_game(S, b, seed, target, first_dealer, single_deal):
    """A new game in row ``b``: seeded stream, scores 0, dealer cut (``first_dealer=-1``) or given,
    first deal dealt. ``seed < 0`` keeps the row's current random stream (for auto-reset)."""
    rng = S[b, RNG]
    S[b, :] = 0
    if seed >= 0:
        seed_row(S, b, seed)
    else:
        S[b, RNG] = rng
    S[b, TARGET] = target
    S[b, SINGLE_DEAL] = 1 if single_deal else 0
    S[b, WINNER] = -1
    dealer = first_dealer if first_dealer >= 0 else cut_for_deal(S, b)
    S[b, DEALER] = dealer
    S[b, FIRST_DEALER] = dealer
    random_deal(S, b)


@njit(cache=True)
def init_games(S, seeds, target, first_dealer, single_deal):
    """``init_game`` for every row; ``seeds`` int64 (B,)."""
    for b in range(S.shape[0]):
        init_game(S, b, seeds[b], target, first_dealer, single_deal)


@njit(cache=True)
def legal_bits(S, b):
    """Bitmask of the card ids the player to move may choose (0 once the deal or game is over)."""
    phase = S[b, PHASE]
    hand = S[b, HAND + S[b, TO_MOVE]]
    if phase == P_DISCARD:
        return hand
    if phase == P_PLAY:
        return hand & _FITS[S[b, COUNT]]
    return np.int64(0)


@njit(cache=True)
def legal_masks(S, out):
    """Fill ``out`` int8 (B, 52) with the legal action masks of every row."""
    for b in range(S.shape[0]):
        bits = legal_bits(S, b)
        for c in range(_N_CARDS):
            out[b, c] = (bits >> c) & 1


@njit(cache=True)
def _can_play(S, b, player):
    return S[b, HAND + player] & _FITS[S[b, COUNT]] != 0


@njit(cache=True)
def _restart_count(S, b, leader):
    """New count sequence, led by ``leader`` or, if out of cards, by the other player."""
    for i in range(S[b, SEQ_LEN]):
        S[b, SEQ + i] = 0  # unused slots stay 0, so equal games have equal rows
    S[b, SEQ_LEN] = 0
    S[b, COUNT] = 0
    S[b, SAID_GO] = 0
    S[b, SAID_GO + 1] = 0
    S[b, TO_MOVE] = leader if S[b, NHAND + leader] > 0 else 1 - leader


@njit(cache=True)
def _show(S, b):
    """Pone's hand, the dealer's hand, then the crib, each with the starter; stop at the target."""
    dealer = S[b, DEALER]
    pone = 1 - dealer
    starter = S[b, STARTER]
    points = show_points(S[b, PLAYED + pone], starter, False)
    if points > 0 and _award(S, b, pone, points, CAT_HAND):
        return
    points = show_points(S[b, PLAYED + dealer], starter, False)
    if points > 0 and _award(S, b, dealer, points, CAT_HAND):
        return
    points = show_points(S[b, DISC] | S[b, DISC + 1], starter, True)
    if points > 0 and _award(S, b, dealer, points, CAT_CRIB):
        return
    S[b, COMPLETED] = 1
    S[b, PHASE] = P_DEAL_OVER


@njit(cache=True)
def _discard(S, b, player, bit):
    S[b, HAND + player] &= ~bit
    S[b, NHAND + player] -= 1
    S[b, DISC + player] |= bit
    S[b, NDISC + player] += 1
    if S[b, NDISC + player] < _DISCARDS:
        return
    dealer = S[b, DEALER]
    if player != dealer:
        S[b, TO_MOVE] = dealer
        return
    starter = S[b, NEXT_STARTER]
    S[b, STARTER] = starter
    S[b, PHASE] = P_PLAY
    S[b, TO_MOVE] = 1 - dealer  # pone leads
    heels = heels_points(_RANK[starter])
    if heels > 0:
        _award(S, b, dealer, heels, CAT_HEELS)


@njit(cache=True)
def _play(S, b, player, card, bit):
    other = 1 - player
    S[b, HAND + player] &= ~bit
    S[b, NHAND + player] -= 1
    S[b, PLAYED + player] |= bit
    n = S[b, SEQ_LEN]
    S[b, SEQ + n] = card
    S[b, SEQ_LEN] = n + 1
    S[b, COUNT] = count_after(S[b, COUNT], _VALUE[card])
    S[b, LAST_PLAYER] = player
    points = peg_points(S, b)
    if points > 0 and _award(S, b, player, points, CAT_PEG):
        return
    if S[b, NHAND] == 0 and S[b, NHAND + 1] == 0:
        last = last_card_points(S[b, COUNT])
        if last > 0 and _award(S, b, player, last, CAT_PEG):
            return
        _show(S, b)
        return
    if count_restarts(S[b, COUNT]):
        _restart_count(S, b, other)
        return
    if _can_play(S, b, other):
        S[b, TO_MOVE] = other
        return
    if S[b, NHAND + other] > 0:
        S[b, SAID_GO + other] = 1
    if _can_play(S, b, player):
        S[b, TO_MOVE] = player
        return
    # Neither can lay a card: the player who laid the last one pegs the go.
    if _award(S, b, player, _GO_POINTS, CAT_PEG):
        return
    _restart_count(S, b, other)


@njit(cache=True)
def apply_action(S, b, card):
    """Apply ``card`` for the player to move without dealing on after the show (the row stops in
    DEAL_OVER). Returns ``OK`` or an ``ERR_*`` code (then nothing changed)."""
    phase = S[b, PHASE]
    if phase == P_GAME_OVER:
        return ERR_OVER
    if phase == P_DEAL_OVER:
        return ERR_DEAL_OVER
    if card < 0 or card >= _N_CARDS:
        return ERR_NOT_LEGAL
    bit = np.int64(1) << card
    if not legal_bits(S, b) & bit:
        return ERR_NOT_LEGAL
    player = S[b, TO_MOVE]
    if phase == P_DISCARD:
        _discard(S, b, player, bit)
    else:
        _play(S, b, player, card, bit)
    return OK


@njit(cache=True)
def next_deal(S, b):
    """After DEAL_OVER: the deal passes to the other player and a random deal starts."""
    S[b, DEALER] = 1 - S[b, DEALER]
    random_deal(S, b)


@njit(cache=True)
def step_game(S, b, card):
    """One move in row ``b``, as ``Game.step``: after a completed show a game that is not single-deal
    deals on at once. Returns ``OK`` or an ``ERR_*`` code (then nothing changed)."""
    err = apply_action(S, b, card)
    if err == OK and S[b, PHASE] == P_DEAL_OVER and S[b, SINGLE_DEAL] == 0:
        next_deal(S, b)
    return err


@njit(cache=True)
def step_batch(S, actions, err):
    """``step_game`` on every row whose action is >= 0; error codes into ``err`` (0 = applied)."""
    for b in range(S.shape[0]):
        err[b] = step_game(S, b, actions[b]) if actions[b] >= 0 else OK


@njit(cache=True)
def random_action(S, b):
    """A uniformly random legal card for the player to move (-1 if none)."""
    bits = legal_bits(S, b)
    if bits == 0:
        return -1
    return nth_card(bits, rand_below(S, b, popcount(bits)))


@njit(cache=True)
def random_actions(S, out):
    """``random_action`` for every row into ``out`` int64 (B,)."""
    for b in range(S.shape[0]):
        out[b] = random_action(S, b)


@njit(cache=True)
def playout_random(S, b, stop_at_deal_end):
    """Finish row ``b`` with random legal moves: to the end of the game, or with
    ``stop_at_deal_end`` to the end of this deal (DEAL_OVER, or GAME_OVER if the deal ends it).
    Returns the number of moves made."""
    moves = 0
    while True:
        phase = S[b, PHASE]
        if phase == P_GAME_OVER:
            return moves
        if phase == P_DEAL_OVER:
            if stop_at_deal_end:
                return moves
            next_deal(S, b)
        apply_action(S, b, random_action(S, b))
        moves += 1


@njit(cache=True)
def random_games(n, seed, target):
    """Play ``n`` full random-legal games (game ``i`` seeded ``seed + i``, dealer cut as the rules
    say). Returns (final scores int64 (n, 2), winners (n,), first dealers (n,), total moves)."""
    S = new_state(1)
    scores = np.zeros((n, 2), dtype=np.int64)
    winners = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.int64)
    moves = 0
    for i in range(n):
        init_game(S, 0, seed + i, target, -1, False)
        moves += playout_random(S, 0, False)
        scores[i, 0] = S[0, SCORE]
        scores[i, 1] = S[0, SCORE + 1]
        winners[i] = S[0, WINNER]
        first[i] = S[0, FIRST_DEALER]
    return scores, winners, first, moves
