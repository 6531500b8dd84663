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

The code lives in ``crib_env.core``, one module per role: ``layout`` (the columns and codes below),
``rng``, ``bits``, ``score_kernels``, ``rules``, ``observe``, ``convert`` (to and from ``Game``) and
``batch`` (``GameBatch``). This module is the public import path and re-exports their public names.
"""

from __future__ import annotations

from .core.batch import GameBatch
from .core.bits import (
    bits_of,
    cards_of,
    four_cards,
    nth_card,
    popcount,
)
from .core.convert import (
    deal_record,
    load_game,
    to_game,
)
from .core.engine import (
    apply_action,
    cut_for_deal,
    init_game,
    init_games,
    legal_bits,
    legal_masks,
    next_deal,
    playout_random,
    random_action,
    random_actions,
    random_deal,
    random_games,
    set_deal,
    step_batch,
    step_game,
)
from .core.layout import (
    COLUMNS,
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
    N_FIELDS,
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
from .core.observe import (
    encode_batch,
    encode_obs,
)
from .core.rng import (
    rand_below,
    seed_row,
)
from .core.score_kernels import (
    five_rank_points,
    peg_points,
    points_without_starter,
    sequence_points,
    show_distribution,
    show_points,
    show_points_batch,
    show_points_over,
)
from .rule_kernels import last_card_points

__all__ = [
    "HAND", "DISC", "PLAYED", "NDISC", "NHAND", "SCORE", "PREV", "SAID_GO", "SEQ", "SEQ_LEN",
    "COUNT", "STARTER", "NEXT_STARTER", "TO_MOVE", "DEALER", "PHASE", "WINNER", "TARGET",
    "SINGLE_DEAL", "DEAL_NO", "LAST_PLAYER", "DEALT", "PEG", "HAND_PTS", "CRIB_PTS", "HEELS_PTS",
    "COMPLETED", "FIRST_DEALER", "RNG", "N_FIELDS", "COLUMNS", "P_DISCARD", "P_PLAY",
    "P_DEAL_OVER", "P_GAME_OVER", "OK", "ERR_OVER", "ERR_DEAL_OVER", "ERR_NOT_LEGAL", "new_state",
    "rand_below", "seed_row", "nth_card", "popcount", "four_cards", "bits_of", "cards_of",
    "five_rank_points", "show_points", "show_points_batch", "points_without_starter",
    "show_points_over", "show_distribution", "sequence_points", "last_card_points", "peg_points",
    "set_deal", "random_deal", "cut_for_deal", "init_game", "init_games", "legal_bits",
    "legal_masks", "apply_action", "next_deal", "step_game", "step_batch", "random_action",
    "random_actions", "playout_random", "random_games", "encode_obs", "encode_batch", "load_game",
    "to_game", "deal_record", "GameBatch",
]
