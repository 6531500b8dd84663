"""A compiled, batched rules core: many games held in one int64 array and stepped by numba kernels.

The rules are exactly those of ``crib_env.game.Game`` (the reference; ``tests/test_fast_differential``
replays random games through both and compares them after every step). Use this module where speed
matters: simulations inside agents, evaluation, vectorized training envs.

State
-----
``S`` is an ``int64`` array of shape ``(B, N_FIELDS)``: row ``b`` is one whole game. Columns are named
by the module constants below (``SCORE + p`` is player ``p``'s score, ``HAND + p`` the bitmask of the
cards player ``p`` holds: bit ``c`` set = card id ``c`` held). Copying rows copies games exactly, the
random stream included (``RNG``: a per-game splitmix64 state), so ``S.copy()`` is a clone for search.

=============  ==============================================================================
column         meaning
=============  ==============================================================================
HAND + p       cards held now (bitmask over card ids)
DISC + p       the player's own discards to the crib this deal (bitmask)
PLAYED + p     cards laid in this deal's play (bitmask); after the play these are the kept four
NDISC + p      number of cards discarded so far this deal (0..2)
NHAND + p      number of cards held now (0..6)
SCORE + p      score, capped at TARGET
PREV + p       the back peg: score before that player's last peg move
SAID_GO + p    1 if the player has said go in the current count sequence
SEQ .. SEQ+7   the current count sequence, oldest first (only the first SEQ_LEN are meaningful)
SEQ_LEN        cards in the current count sequence (0..8)
COUNT          the running count (0..31)
STARTER        the starter once cut, else -1
NEXT_STARTER   the starter dealt with this deal (hidden until cut)
TO_MOVE        player to move (0 / 1)
DEALER         dealer of this deal (0 / 1)
PHASE          ``Phase`` value: 0 discard, 1 play, 2 deal over, 3 game over
WINNER         winning player, -1 while the game runs
TARGET         target score (121 by default)
SINGLE_DEAL    1: stop in DEAL_OVER after the show (``Game(single_deal=True)``); 0: deal on
DEAL_NO        number of deals started in this game (``len(game.records)``)
LAST_PLAYER    the player who laid the last card, -1 before any
DEALT + p      the six cards dealt to the player this deal (bitmask)
PEG + p        points credited this deal for pegging (go and last card included)
HAND_PTS + p   points credited this deal for the hand in the show
CRIB_PTS       points credited this deal for the crib (to the dealer)
HEELS_PTS      points credited this deal for his heels (to the dealer)
COMPLETED      1 once this deal's show has been counted to the end
FIRST_DEALER   dealer of the first deal
RNG            splitmix64 state (uint64 bits) for deals, the cut and random actions
=============  ==============================================================================

Kernels (all ``@njit(cache=True)``; call them from Python or from other numba code)
---------------------------------------------------------------------------------
* ``new_state(B)`` -> zeroed ``S``; ``init_game(S, b, seed, target, first_dealer, single_deal)``
  starts a game in row ``b`` (``first_dealer=-1`` cuts for deal); ``init_games(S, seeds, ...)`` all rows.
* ``legal_bits(S, b)`` -> int64 bitmask of legal card ids; ``legal_masks(S, out)`` fills ``(B, 52)`` int8.
* ``step_game(S, b, card)`` -> 0 if applied, else an error code (``ERR_*``, nothing changed).
  ``step_batch(S, actions, err)`` steps every row whose action is >= 0.
* ``random_action(S, b)`` -> a uniformly random legal card (from the row's own random stream).
* ``random_games(n, seed, target)`` -> (final scores (n, 2), winners (n,), first dealers (n,),
  total steps): n full random-legal games played inside the kernel.
* ``playout_random(S, b, stop_at_deal_end)``: finish a game (or the deal) with random legal moves.
* ``set_deal(S, b, hand0_bits, hand1_bits, starter)``: start a deal with given cards (scripted deals).
* ``next_deal(S, b)``: continue a single-deal game after DEAL_OVER (dealer alternates).
* ``encode_obs(S, b, player, out)``: the observation of ``crib_env.observation.encode`` in ``out``.
* ``show_points(cards_bits, starter, crib)`` and ``peg_points(S, b)`` expose the scorers; under them
  ``five_rank_points(a, b, c, d, e)`` (fifteens, pairs, runs of five ranks) and
  ``sequence_points(cards, start, n, count)`` (pegging points of any card sequence) are the rule kernels,
  shared with ``agents.rollout``.
* ``show_points_batch(hands, starters, crib, out)`` and ``show_distribution(crib)``: batch show scores.
* ``last_card_points(count)``: the last card's point (``scoring.last_card_points``).
* ``points_without_starter(cards_bits)``: four cards counted alone (``scoring.score_without_starter``).
* ``show_points_over(cards_bits, rank_left, suit_left)``: four cards' show points summed over a pool
  of starters given by its rank and suit counts (the expected hand over the unseen starters).
* ``random_actions(S, out)``: ``random_action`` for every row.

``GameBatch`` wraps it all in a small Python class; ``load_game`` copies a plain ``Game`` into a row
and ``to_game`` makes a plain ``Game`` from a row (for rendering and ``encode``).

Simulations (what a search agent does with this): copy the position into ``k`` rows
(``np.repeat(S[b:b + 1], k, axis=0)``), give each copy its own sample of what the player cannot see
(the opponent's ``HAND + opp`` bits with ``NHAND + opp``, its ``DISC + opp``, and ``NEXT_STARTER``
before the cut), reseed each row with ``seed_row``, then ``playout_random(S, i, True)`` and read
``PEG``, ``HAND_PTS``, ``CRIB_PTS`` and ``SCORE`` of every row (about 25 million moves a second
in one kernel call; about a microsecond per call from Python). ``agents.rollout`` (the expert's
pegging simulations) does this with its own policy choosing the cards: a scratch row per simulation,
stepped by ``apply_action`` through the play and the show.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .cards import JACK, N_CARDS, N_RANKS, RANK_ARRAY, SUIT_ARRAY, VALUE_ARRAY
from .game import (
    DEFAULT_TARGET,
    DISCARDS_PER_PLAYER,
    HAND_SIZE,
    DealRecord,
    Game,
    IllegalActionError,
    Phase,
)
from .observation import COUNT_SCALE, OBS_SIZE, SCORE_SCALE, SLICES
from .scoring import (
    FIFTEEN_COUNT,
    FIFTEEN_POINTS,
    FIVE_CARD_FLUSH_POINTS,
    FOUR_RANK_POINTS,
    GO_POINTS,
    HAND_FLUSH_POINTS,
    LAST_CARD_POINTS,
    MAX_COUNT,
    NOBS_POINTS,
    RANK_POINTS,
    SET_POINTS,
    THIRTY_ONE_POINTS,
)

# -- columns of the state array ----------------------------------------------------------------
HAND = 0
DISC = 2
PLAYED = 4
NDISC = 6
NHAND = 8
SCORE = 10
PREV = 12
SAID_GO = 14
SEQ = 16  # 8 columns
SEQ_LEN = 24
COUNT = 25
STARTER = 26
NEXT_STARTER = 27
TO_MOVE = 28
DEALER = 29
PHASE = 30
WINNER = 31
TARGET = 32
SINGLE_DEAL = 33
DEAL_NO = 34
LAST_PLAYER = 35
DEALT = 36
PEG = 38
HAND_PTS = 40
CRIB_PTS = 42
HEELS_PTS = 43
COMPLETED = 44
FIRST_DEALER = 45
RNG = 46
N_FIELDS = 48

#: column offsets by name (per-player columns: add the player, 0 or 1)
COLUMNS = {name: offset for name, offset in (
    ("HAND", HAND), ("DISC", DISC), ("PLAYED", PLAYED), ("NDISC", NDISC), ("NHAND", NHAND),
    ("SCORE", SCORE), ("PREV", PREV), ("SAID_GO", SAID_GO), ("SEQ", SEQ), ("SEQ_LEN", SEQ_LEN),
    ("COUNT", COUNT), ("STARTER", STARTER), ("NEXT_STARTER", NEXT_STARTER), ("TO_MOVE", TO_MOVE),
    ("DEALER", DEALER), ("PHASE", PHASE), ("WINNER", WINNER), ("TARGET", TARGET),
    ("SINGLE_DEAL", SINGLE_DEAL), ("DEAL_NO", DEAL_NO), ("LAST_PLAYER", LAST_PLAYER),
    ("DEALT", DEALT), ("PEG", PEG), ("HAND_PTS", HAND_PTS), ("CRIB_PTS", CRIB_PTS),
    ("HEELS_PTS", HEELS_PTS), ("COMPLETED", COMPLETED), ("FIRST_DEALER", FIRST_DEALER),
    ("RNG", RNG))}

P_DISCARD = int(Phase.DISCARD)
P_PLAY = int(Phase.PLAY)
P_DEAL_OVER = int(Phase.DEAL_OVER)
P_GAME_OVER = int(Phase.GAME_OVER)

# Error codes of step_game.
OK = 0
ERR_OVER = 1  # the game is over
ERR_DEAL_OVER = 2  # the deal is over: call next_deal
ERR_NOT_LEGAL = 3  # not a card the player to move may choose now

# Score categories for _award.
CAT_PEG, CAT_HAND, CAT_CRIB, CAT_HEELS = 0, 1, 2, 3

# -- tables (frozen into the compiled code) ----------------------------------------------------
_RANK = RANK_ARRAY.astype(np.int64)
_SUIT = SUIT_ARRAY.astype(np.int64)
_VALUE = VALUE_ARRAY.astype(np.int64)
_RANK_POINTS = RANK_POINTS.astype(np.int8)  # under 1 MB, so numba freezes it and can cache
_FOUR_RANK_POINTS = FOUR_RANK_POINTS.astype(np.int8)
_SET_POINTS = np.array([0, 0, SET_POINTS[2], SET_POINTS[3], SET_POINTS[4]], dtype=np.int64)
#: bitmask of the cards whose counting value is <= room, for room 0..31
_FITS = np.array([sum(1 << c for c in range(N_CARDS) if VALUE_ARRAY[c] <= room)
                  for room in range(MAX_COUNT + 1)], dtype=np.int64)
#: bitmask of each suit's 13 cards
_SUIT_BITS = np.array([((1 << N_RANKS) - 1) << (N_RANKS * s) for s in range(4)], dtype=np.int64)
_JACK = JACK
_MAX_COUNT = MAX_COUNT
_GO_POINTS = GO_POINTS
_FIFTEEN = FIFTEEN_COUNT
_FIFTEEN_POINTS = FIFTEEN_POINTS
_THIRTY_ONE_POINTS = THIRTY_ONE_POINTS
_HAND_FLUSH = HAND_FLUSH_POINTS
_FIVE_FLUSH = FIVE_CARD_FLUSH_POINTS
_NOBS = NOBS_POINTS
_LAST_CARD_POINTS = LAST_CARD_POINTS
_HAND_SIZE = HAND_SIZE
_DISCARDS = DISCARDS_PER_PLAYER

# Observation offsets (the layout of crib_env.observation; one source of truth).
_O_HAND = SLICES["hand"].start
_O_DISC = SLICES["discards"].start
_O_STARTER = SLICES["starter"].start
_O_PLAYED_OWN = SLICES["played_own"].start
_O_PLAYED_OPP = SLICES["played_opp"].start
_O_SEQ = SLICES["sequence"].start
_O_COUNT = SLICES["count"].start
_O_PHASE = SLICES["phase"].start
_O_DEALER = SLICES["is_dealer"].start
_O_SCORES = SLICES["scores"].start
_O_TARGET = SLICES["target"].start
_O_OPP_LEFT = SLICES["opp_cards_left"].start
_O_OPP_GO = SLICES["opp_said_go"].start
_OBS_SIZE = OBS_SIZE
_SCORE_SCALE = SCORE_SCALE
_COUNT_SCALE = COUNT_SCALE
_N_CARDS = N_CARDS


# -- random numbers: splitmix64, one stream per game row ---------------------------------------

@njit(cache=True)
def _mix(z):
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _next_random(S, b):
    state = np.uint64(S[b, RNG]) + np.uint64(0x9E3779B97F4A7C15)
    S[b, RNG] = np.int64(state)
    return _mix(state)


@njit(cache=True)
def rand_below(S, b, n):
    """A uniform int in [0, n) from row ``b``'s random stream (n < 2**31)."""
    return np.int64(((_next_random(S, b) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def seed_row(S, b, seed):
    """Seed row ``b``'s random stream from an int (different seeds give unrelated streams)."""
    S[b, RNG] = np.int64(_mix(np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
                              + np.uint64(0x2545F4914F6CDD1D)))


# -- bit helpers -------------------------------------------------------------------------------

@njit(cache=True)
def _low_card(bits):
    return np.int64(trailing_zeros(np.uint64(bits)))


@njit(cache=True)
def nth_card(bits, n):
    """The ``n``-th lowest card id (0-based) in the bitmask ``bits``."""
    for _ in range(n):
        bits &= bits - 1
    return _low_card(bits)


@njit(cache=True)
def popcount(bits):
    n = 0
    while bits:
        bits &= bits - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def four_cards(bits):
    """The four lowest card ids of the bitmask ``bits``, ascending (a kept hand's four cards).
    Inlined into its callers (numba IR inlining) so that ``show_points`` stays one flat kernel."""
    c0 = _low_card(bits)
    bits &= bits - 1
    c1 = _low_card(bits)
    bits &= bits - 1
    c2 = _low_card(bits)
    bits &= bits - 1
    return c0, c1, c2, _low_card(bits)


# -- scoring -----------------------------------------------------------------------------------

@njit(cache=True)
def five_rank_points(a, b, c, d, e):
    """Fifteens, pairs and runs of five ranks (0..12, any order): the show score of four cards and
    the starter less flush and nobs (the ``scoring.RANK_POINTS`` table)."""
    # sorting network for five values
    if a > b:
        a, b = b, a
    if d > e:
        d, e = e, d
    if c > e:
        c, e = e, c
    if c > d:
        c, d = d, c
    if a > d:
        a, d = d, a
    if a > c:
        a, c = c, a
    if b > e:
        b, e = e, b
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return np.int64(_RANK_POINTS[(((a * N_RANKS + b) * N_RANKS + c) * N_RANKS + d) * N_RANKS + e])


@njit(cache=True)
def show_points(cards, starter, crib):
    """Show score of four cards (bitmask ``cards``) with ``starter`` (card id); ``crib`` applies the
    crib flush rule. Same as ``scoring.score_hand``."""
    c0, c1, c2, c3 = four_cards(cards)
    points = five_rank_points(_RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3], _RANK[starter])
    suit = _SUIT[c0]
    starter_suit = _SUIT[starter]
    if cards & _SUIT_BITS[suit] == cards:
        if starter_suit == suit:
            points += _FIVE_FLUSH
        elif not crib:
            points += _HAND_FLUSH
    if cards & (np.int64(1) << (starter_suit * N_RANKS + _JACK)):
        points += _NOBS
    return points


@njit(cache=True)
def show_points_batch(hands, starters, crib, out):
    """``show_points`` for rows of four card ids ``hands`` (N, 4) with ``starters`` (N,) into
    ``out`` (N,)."""
    for i in range(hands.shape[0]):
        bits = np.int64(0)
        for j in range(4):
            bits |= np.int64(1) << np.int64(hands[i, j])
        out[i] = show_points(bits, np.int64(starters[i]), crib)


@njit(cache=True)
def points_without_starter(cards):
    """Show points of four cards (bitmask ``cards``) counted without a starter: fifteens, pairs,
    runs (the ``scoring.FOUR_RANK_POINTS`` table) and a four-card flush (4). Same as
    ``scoring.score_without_starter``."""
    c0, c1, c2, c3 = four_cards(cards)
    a, b, c, d = _RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3]
    # sorting network for four values
    if a > b:
        a, b = b, a
    if c > d:
        c, d = d, c
    if a > c:
        a, c = c, a
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    points = np.int64(_FOUR_RANK_POINTS[((a * N_RANKS + b) * N_RANKS + c) * N_RANKS + d])
    if cards & _SUIT_BITS[_SUIT[c0]] == cards:
        points += _HAND_FLUSH
    return points


@njit(cache=True)
def show_points_over(cards, rank_left, suit_left):
    """Total show score (hand rules) of four cards (bitmask ``cards``) over a pool of starters
    given only by its counts: ``rank_left[r]`` starters of rank ``r`` and ``suit_left[s]`` of suit
    ``s`` (int64 (13,) and (4,), the four cards not among them). Equal to the sum of
    ``show_points(cards, s, False)`` over the pool, in closed form: fifteens, pairs and runs by the
    starter's rank, nobs by its suit, a four-card flush 4 with every starter and 5 with one of its
    suit. Divide by the pool's size for the expected hand over the unseen starters."""
    c0, c1, c2, c3 = four_cards(cards)
    total = np.int64(0)
    for r in range(N_RANKS):
        if rank_left[r] > 0:
            total += rank_left[r] * five_rank_points(_RANK[c0], _RANK[c1], _RANK[c2], _RANK[c3], r)
    for c in (c0, c1, c2, c3):
        if _RANK[c] == _JACK:
            total += _NOBS * suit_left[_SUIT[c]]  # nobs with a starter of the jack's suit
    if cards & _SUIT_BITS[_SUIT[c0]] == cards:
        n_pool = np.int64(0)
        for r in range(N_RANKS):
            n_pool += rank_left[r]
        total += _HAND_FLUSH * n_pool + (_FIVE_FLUSH - _HAND_FLUSH) * suit_left[_SUIT[c0]]
    return total


@njit(cache=True)
def show_distribution(crib):
    """Counts of each show score 0..29 over all 270,725 four-card hands x 48 starters."""
    counts = np.zeros(30, dtype=np.int64)
    for c0 in range(_N_CARDS):
        for c1 in range(c0 + 1, _N_CARDS):
            for c2 in range(c1 + 1, _N_CARDS):
                for c3 in range(c2 + 1, _N_CARDS):
                    bits = ((np.int64(1) << c0) | (np.int64(1) << c1) | (np.int64(1) << c2)
                            | (np.int64(1) << c3))
                    for s in range(_N_CARDS):
                        if not (bits >> s) & 1:
                            counts[show_points(bits, s, crib)] += 1
    return counts


@njit(cache=True, inline="always")
def sequence_points(cards, start, n, count):
    """Points earned by the last of the ``n`` cards ``cards[start:start + n]`` (card ids, oldest
    first; only their ranks count) at the running ``count``: fifteen, 31, pairs, runs (not go /
    last card). Same as ``scoring.score_play``; the pegging rule of ``peg_points`` and of
    ``agents.rollout``. Inlined into its callers (numba IR inlining): called out of line it would
    cost ``peg_points`` about 20%."""
    end = start + n - 1
    last_rank = _RANK[cards[end]]
    tail = 1
    while tail < n and tail < 4 and _RANK[cards[end - tail]] == last_rank:
        tail += 1
    points = _SET_POINTS[tail]
    if count == _FIFTEEN:
        points += _FIFTEEN_POINTS
    if count == _MAX_COUNT:
        points += _THIRTY_ONE_POINTS
    # Longest run among the last L cards: L distinct ranks spanning L consecutive values.
    best = 0
    seen = 0
    lo = 99
    hi = -1
    for k in range(1, n + 1):
        r = _RANK[cards[end + 1 - k]]
        if seen & (1 << r):
            break  # a repeated rank: no longer tail can be a run
        seen |= 1 << r
        lo = min(lo, r)
        hi = max(hi, r)
        if k >= 3 and hi - lo == k - 1:
            best = k
    return points + best


@njit(cache=True, inline="always")
def last_card_points(count):
    """``scoring.last_card_points``: the point for the last card of the play, none at 31."""
    return 0 if count == _MAX_COUNT else _LAST_CARD_POINTS


@njit(cache=True)
def peg_points(S, b):
    """Points earned by the last card of row ``b``'s count sequence (fifteen, 31, pairs, runs;
    not go / last card). Same as ``scoring.score_play``."""
    return sequence_points(S[b], SEQ, S[b, SEQ_LEN], S[b, COUNT])


# -- rules -------------------------------------------------------------------------------------

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
def new_state(n):
    """A zeroed state array for ``n`` games (initialise rows with ``init_game``)."""
    return np.zeros((n, N_FIELDS), dtype=np.int64)


@njit(cache=True)
def legal_bits(S, b):
    """Bitmask of the card ids the player to move may choose (0 once the deal or game is over)."""
    phase = S[b, PHASE]
    hand = S[b, HAND + S[b, TO_MOVE]]
    if phase == P_DISCARD:
        return hand
    if phase == P_PLAY:
        return hand & _FITS[_MAX_COUNT - S[b, COUNT]]
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
    return S[b, HAND + player] & _FITS[_MAX_COUNT - S[b, COUNT]] != 0


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
    if _RANK[starter] == _JACK:
        _award(S, b, dealer, 2, CAT_HEELS)


@njit(cache=True)
def _play(S, b, player, card, bit):
    other = 1 - player
    S[b, HAND + player] &= ~bit
    S[b, NHAND + player] -= 1
    S[b, PLAYED + player] |= bit
    n = S[b, SEQ_LEN]
    S[b, SEQ + n] = card
    S[b, SEQ_LEN] = n + 1
    S[b, COUNT] += _VALUE[card]
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
    if S[b, COUNT] == _MAX_COUNT:
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


# -- observations ------------------------------------------------------------------------------

@njit(cache=True)
def _set_bits(out, offset, bits):
    while bits:
        out[offset + _low_card(bits)] = 1.0
        bits &= bits - 1


@njit(cache=True)
def encode_obs(S, b, player, out):
    """Write ``player``'s observation of row ``b`` into ``out`` (float32, OBS_SIZE): identical to
    ``crib_env.observation.encode(game, player)``."""
    out[:] = 0.0
    opp = 1 - player
    _set_bits(out, _O_HAND, S[b, HAND + player])
    _set_bits(out, _O_DISC, S[b, DISC + player])
    if S[b, STARTER] >= 0:
        out[_O_STARTER + S[b, STARTER]] = 1.0
    _set_bits(out, _O_PLAYED_OWN, S[b, PLAYED + player])
    _set_bits(out, _O_PLAYED_OPP, S[b, PLAYED + opp])
    for i in range(S[b, SEQ_LEN]):
        out[_O_SEQ + i * _N_CARDS + S[b, SEQ + i]] = 1.0
    out[_O_COUNT] = S[b, COUNT] / _COUNT_SCALE
    out[_O_PHASE + S[b, PHASE]] = 1.0
    out[_O_DEALER] = 1.0 if S[b, DEALER] == player else 0.0
    out[_O_SCORES] = S[b, SCORE + player] / _SCORE_SCALE
    out[_O_SCORES + 1] = S[b, SCORE + opp] / _SCORE_SCALE
    out[_O_TARGET] = S[b, TARGET] / _SCORE_SCALE
    out[_O_OPP_LEFT] = S[b, NHAND + opp] / _HAND_SIZE
    out[_O_OPP_GO] = 1.0 if S[b, SAID_GO + opp] else 0.0


@njit(cache=True)
def encode_batch(S, players, out):
    """``encode_obs`` for every row: ``players`` int64 (B,), ``out`` float32 (B, OBS_SIZE)."""
    for b in range(S.shape[0]):
        encode_obs(S, b, players[b], out[b])


# -- Python side -------------------------------------------------------------------------------

def bits_of(cards) -> int:
    """Bitmask of an iterable of card ids."""
    bits = 0
    for c in cards:
        bits |= 1 << int(c)
    return bits


def cards_of(bits: int) -> list[int]:
    """Card ids in a bitmask, ascending."""
    bits = int(bits)
    return [c for c in range(N_CARDS) if bits >> c & 1]


def load_game(S: np.ndarray, b: int, game: Game, seed: int = 0) -> None:
    """Copy the state of a plain ``Game`` into row ``b`` (its random stream is seeded with ``seed``:
    the plain engine's ``random.Random`` cannot be carried over, so later random deals differ)."""
    row = np.zeros(N_FIELDS, dtype=np.int64)
    for p in range(2):
        row[HAND + p] = bits_of(game.hands[p])
        row[DISC + p] = bits_of(game.discards[p])
        row[PLAYED + p] = bits_of(game.played[p])
        row[NDISC + p] = len(game.discards[p])
        row[NHAND + p] = len(game.hands[p])
        row[SCORE + p] = game.scores[p]
        row[PREV + p] = game.prev_scores[p]
        row[SAID_GO + p] = int(game.said_go[p])
        row[DEALT + p] = bits_of(game.record.hands[p])
        row[PEG + p] = game.record.pegging[p]
        row[HAND_PTS + p] = game.record.hand[p]
    row[SEQ:SEQ + len(game.sequence)] = game.sequence
    row[SEQ_LEN] = len(game.sequence)
    row[COUNT] = game.count
    row[STARTER] = -1 if game.starter is None else game.starter
    row[NEXT_STARTER] = game.record.starter
    row[TO_MOVE] = game.to_move
    row[DEALER] = game.dealer
    row[PHASE] = int(game.phase)
    row[WINNER] = -1 if game.winner is None else game.winner
    row[TARGET] = game.target
    row[SINGLE_DEAL] = int(game.single_deal)
    row[DEAL_NO] = len(game.records)
    row[LAST_PLAYER] = -1 if game.last_player is None else game.last_player
    row[CRIB_PTS] = game.record.crib
    row[HEELS_PTS] = game.record.heels
    row[COMPLETED] = int(game.record.completed)
    row[FIRST_DEALER] = game.records[0].dealer
    S[b] = row
    seed_row(S, b, seed)


def to_game(S: np.ndarray, b: int) -> Game:
    """A plain ``Game`` in the state of row ``b`` (for rendering, checks and ``encode``): hands,
    discards, crib, starter, play, count, scores, phase and the current deal's record. The log and
    the records of earlier deals are not reconstructed; later random deals differ."""
    row = [int(x) for x in S[b]]
    game = Game(target=row[TARGET], seed=0, first_dealer=row[DEALER],
                single_deal=bool(row[SINGLE_DEAL]))
    game.hands = [cards_of(row[HAND]), cards_of(row[HAND + 1])]
    game.discards = [cards_of(row[DISC]), cards_of(row[DISC + 1])]
    game.played = [cards_of(row[PLAYED]), cards_of(row[PLAYED + 1])]
    game.sequence = row[SEQ:SEQ + row[SEQ_LEN]]
    game.count = row[COUNT]
    game.said_go = [bool(row[SAID_GO]), bool(row[SAID_GO + 1])]
    game.to_move = row[TO_MOVE]
    game.phase = Phase(row[PHASE])
    game.scores = [row[SCORE], row[SCORE + 1]]
    game.prev_scores = [row[PREV], row[PREV + 1]]
    game.winner = None if row[WINNER] < 0 else row[WINNER]
    game.last_player = None if row[LAST_PLAYER] < 0 else row[LAST_PLAYER]
    game.starter = None if row[STARTER] < 0 else row[STARTER]
    game._next_starter = row[NEXT_STARTER]
    pone, dealer = 1 - row[DEALER], row[DEALER]
    if game.starter is not None:
        game.crib = game.discards[pone] + game.discards[dealer]
        game.kept = [sorted(game.hands[p] + game.played[p]) for p in (0, 1)]
    game.record = deal_record(S, b)
    game.records = [game.record]
    return game


def deal_record(S: np.ndarray, b: int) -> DealRecord:
    """Row ``b``'s current deal as the plain engine records it (cards dealt, discards, points by
    category, whether the show was completed)."""
    row = [int(x) for x in S[b]]
    return DealRecord(
        number=row[DEAL_NO] - 1,
        dealer=row[DEALER],
        hands=(tuple(cards_of(row[DEALT])), tuple(cards_of(row[DEALT + 1]))),
        starter=row[NEXT_STARTER],
        discards=(cards_of(row[DISC]), cards_of(row[DISC + 1])),
        pegging=[row[PEG], row[PEG + 1]],
        heels=row[HEELS_PTS],
        hand=[row[HAND_PTS], row[HAND_PTS + 1]],
        crib=row[CRIB_PTS],
        completed=bool(row[COMPLETED]),
        laid=[len(cards_of(row[PLAYED])), len(cards_of(row[PLAYED + 1]))],
    )


_ERRORS = {ERR_OVER: "the game is over", ERR_DEAL_OVER: "the deal is over: call next_deal()",
           ERR_NOT_LEGAL: "not a legal card for the player to move"}


class GameBatch:
    """``n`` games stepped together by the compiled core (see the module docstring).

    >>> games = GameBatch(4).reset(seed=1)
    >>> masks = games.legal_masks()          # (4, 52) int8
    >>> games.step(games.random_actions())   # one move in every running game
    """

    def __init__(self, n: int, target: int = DEFAULT_TARGET, single_deal: bool = False) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1 games, got {n}")
        if not isinstance(target, (int, np.integer)) or target < 1:
            raise ValueError(f"target must be a positive int, got {target!r}")
        self.n = int(n)
        self.target = int(target)
        self.single_deal = bool(single_deal)
        self.state = new_state(self.n)
        self._masks = np.zeros((self.n, N_CARDS), dtype=np.int8)
        self._err = np.zeros(self.n, dtype=np.int64)

    def reset(self, seed: int = 0, first_dealer: int | None = None) -> GameBatch:
        """New games: game ``b`` seeded ``seed + b``; ``first_dealer`` 0 / 1, or None to cut."""
        if first_dealer not in (None, 0, 1):
            raise ValueError(f"first_dealer must be 0, 1 or None, got {first_dealer!r}")
        seeds = np.arange(seed, seed + self.n, dtype=np.int64)
        init_games(self.state, seeds, self.target, -1 if first_dealer is None else first_dealer,
                   self.single_deal)
        return self

    def column(self, name: str, player: int = 0) -> np.ndarray:
        """A state column by name (a key of ``COLUMNS``), e.g. ``column("SCORE", 1)``."""
        if name not in COLUMNS:
            raise ValueError(f"unknown column {name!r}; expected one of {', '.join(COLUMNS)}")
        return self.state[:, COLUMNS[name] + player]

    @property
    def scores(self) -> np.ndarray:
        return self.state[:, SCORE:SCORE + 2]

    @property
    def to_move(self) -> np.ndarray:
        return self.state[:, TO_MOVE]

    @property
    def phase(self) -> np.ndarray:
        return self.state[:, PHASE]

    @property
    def over(self) -> np.ndarray:
        return self.state[:, PHASE] == P_GAME_OVER

    def legal_masks(self) -> np.ndarray:
        """(n, 52) int8: 1 for each card the player to move may choose (all 0 in finished rows)."""
        legal_masks(self.state, self._masks)
        return self._masks.copy()

    def random_actions(self) -> np.ndarray:
        """A random legal card per row from each row's own stream (-1 where no move is due)."""
        out = np.empty(self.n, dtype=np.int64)
        random_actions(self.state, out)
        return out

    def step(self, actions: np.ndarray) -> None:
        """One move per row (``-1`` skips a row); raises ``IllegalActionError`` naming bad rows,
        after applying the legal ones."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.n,):
            raise ValueError(f"actions must have shape ({self.n},), got {actions.shape}")
        step_batch(self.state, actions, self._err)
        bad = np.flatnonzero(self._err)
        if bad.size:
            b = int(bad[0])
            raise IllegalActionError(f"{bad.size} illegal action(s), first in game {b}: card "
                                     f"{int(actions[b])}: {_ERRORS[int(self._err[b])]}")

    def observe(self, players: np.ndarray | int) -> np.ndarray:
        """(n, OBS_SIZE) float32 observations, row ``b`` seen by ``players[b]`` (or one player)."""
        players = np.broadcast_to(np.asarray(players, dtype=np.int64), (self.n,))
        out = np.zeros((self.n, OBS_SIZE), dtype=np.float32)
        encode_batch(self.state, np.ascontiguousarray(players), out)
        return out

    def clone(self) -> GameBatch:
        """An independent copy (random streams included)."""
        other = GameBatch.__new__(GameBatch)
        other.__dict__.update(self.__dict__)
        other.state = self.state.copy()
        other._masks = self._masks.copy()
        other._err = self._err.copy()
        return other

