"""Pegging rollouts (numba): play the rest of a deal many times over sampled opponent hands.

``rollout_values(view, candidates, sims, seed)`` estimates, for each card the player could lay now,

* ``margin``: the mean of (own pegging points - opponent's pegging points) over the rest of the
  play, the candidate's own points included;
* ``win``: the mean chance of winning the game: 1 or 0 when a player reaches the target during the
  rest of this deal (play, then pone's hand, dealer's hand, crib, in that order), else the
  ``agents.endgame.win_table`` chance from the scores the deal ends on (with ``with_show``).

``keep_pegging(hand6, keeps, unseen, dealer)`` does the same for a whole play from the discard: the
mean pegging margin of each kept four.

This module holds the drivers; the two parts they drive have modules of their own:

* ``agents.opponent_model``: the opponent's hidden cards, sampled from what the player has not
  seen, kept as an expected-value player would, consistent with its go, and (with an
  ``OpponentPlays`` history and ``miss < 1``) each sampled deal weighted by how well it explains
  the opponent's plays so far;
* ``agents.rollout_policy``: how both players lay their cards in a simulation
  (``POLICY_TACTICS`` by default: the standard tactics, each player judging from what it has
  seen, so the expert's pegging is a one-step improvement on the standard's).

The same sampled deals are used for every candidate (common random numbers), so differences
between candidates are not drowned in deal noise. Each simulation copies the position
(``play_position``: the view as one fast state row, the player as player 0) into a scratch row,
fills in the sampled opponent hand and discards, and plays it out with ``crib_env.fast``'s rules
(``rollout_policy.play_out``: go, 31, count restart, last card, the game ending at the target,
then the show: pone's hand, the dealer's, the crib, stopping at the target); ``keep_pegging`` deals
its rows with ``fast.set_deal`` and the four discards. The margin is read off the row's ``PEG``
columns, except that the points of a card that wins the game count in full (the row's scores stop
at the target). ``tests/test_rollout.py`` replays the rules engine with it.

The names of both parts stay importable from here (the expert, tests and benches use them).
"""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import N_RANKS, RANK_ARRAY
from crib_env.fast import (
    COUNT,
    DEALER,
    DISC,
    HAND,
    N_FIELDS,
    NDISC,
    NHAND,
    P_PLAY,
    PEG,
    PHASE,
    PLAYED,
    SAID_GO,
    SCORE,
    SEQ,
    SEQ_LEN,
    STARTER,
    TARGET,
    TO_MOVE,
    WINNER,
    apply_action,
    bits_of,
    nth_card,
    set_deal,
)
from crib_env.game import DISCARDS_PER_PLAYER, KEEP_SIZE
from crib_env.observation import ObservationView

from .endgame import win_table
from .opponent_model import (
    MODEL_DRAWS,
    MODEL_TABLES,
    OPPONENT_CRIB,
    ModelTables,
    OpponentCards,
    OpponentPlays,
    PlayHistory,
    consistency,
    go_count,
    model_keep,
    opponent_cards,
    opponent_pool,
    sample_opponent,
)
from .rollout_policy import (
    POLICIES,
    POLICY_LOWEST,
    POLICY_TACTICS,
    SEQ_ROOM,
    play_out,
    tactic_value,
)

_RANK = RANK_ARRAY.astype(np.int64)  # rank by card id
_N_RANKS = N_RANKS
_KEEP_SIZE = KEEP_SIZE
_DISCARDS = DISCARDS_PER_PLAYER


@njit(cache=True)
def _card_bits(cards: np.ndarray) -> int:
    """Bitmask of card ids (the card sets of ``crib_env.fast``)."""
    bits = 0
    for c in cards:
        bits |= 1 << c
    return bits


@njit(cache=True)
def _rank_counts(cards: np.ndarray, size: int, sign: int, out: np.ndarray) -> None:
    for i in range(size):
        out[_RANK[cards[i]]] += sign


@njit(cache=True)
def _scratch(pool_size: int):
    """The work buffers of one batch of simulations: a scratch state row, both hands in the
    policy's order and their sizes, the count sequence (with room for imagined replies), cards
    unseen by each player by rank, the reply table, and the pool draw's indices and flags."""
    return (np.zeros((1, N_FIELDS), dtype=np.int64), np.zeros((2, _KEEP_SIZE), dtype=np.int64),
            np.zeros(2, dtype=np.int64), np.zeros(SEQ_ROOM, dtype=np.int64),
            np.zeros((2, _N_RANKS), dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(_N_RANKS, dtype=np.int64), np.arange(pool_size),
            np.zeros(pool_size, dtype=np.bool_))


@njit(cache=True)
def rollouts(candidates: np.ndarray, position: np.ndarray, my_hand: np.ndarray,
             opponent: OpponentCards, sims: int, seed: int, policy: int, with_show: bool,
             wins: np.ndarray, model: bool, tables: ModelTables, history: PlayHistory,
             miss: float) -> tuple[np.ndarray, np.ndarray]:
    """``rollout_values`` from ``position`` (``play_position``); ``my_hand`` the player's cards
    in the order the policy weighs them, ``opponent`` what its cards are drawn from
    (``opponent_cards``; ``played`` in the order laid), ``wins`` the ``endgame.win_table``,
    ``tables`` the model's (``MODEL_TABLES``), ``history`` its plays (``OpponentPlays.arrays``)."""
    pool, k_opp, opp_played = opponent.pool, opponent.held, opponent.played
    n_cand = candidates.size
    margin = np.zeros(n_cand)
    win = np.zeros(n_cand)
    S, hands, sizes, seq, unseen, n_unseen, reply, picks, used = _scratch(pool.size)
    opp_hands = np.zeros((sims, _KEEP_SIZE), dtype=np.int64)
    opp_discards = np.zeros((sims, _DISCARDS), dtype=np.int64)
    opp_kept = np.zeros(_KEEP_SIZE, dtype=np.int64)
    i_deal = position[DEALER] == 0
    starter = position[STARTER]
    target = position[TARGET]
    next_deal = 0 if i_deal else 1  # whether the player deals the next deal
    n_disc = position[NDISC]
    weights = np.ones(sims)
    np.random.seed(seed)
    for sim in range(sims):  # the same sampled deals for every candidate
        sample_opponent(opponent, model, not i_deal, tables, opp_hands[sim], opp_discards[sim],
                        picks, used)
        if miss < 1.0 and history.card.size:
            for i in range(opp_played.size):
                opp_kept[i] = opp_played[i]
            for i in range(k_opp):
                opp_kept[opp_played.size + i] = opp_hands[sim, i]
            weights[sim] = consistency(opp_kept[:opp_played.size + k_opp], opp_discards[sim],
                                       starter, history, miss, reply)
    for c in range(n_cand):
        np.random.seed(seed + 1)
        for sim in range(sims):
            opp_hand = opp_hands[sim]
            S[0] = position  # the sampled deal: the opponent's hand and discards drawn
            S[0, HAND + 1] = _card_bits(opp_hand[:k_opp])
            S[0, NHAND + 1] = k_opp
            S[0, DISC + 1] = _card_bits(opp_discards[sim])
            S[0, NDISC + 1] = _DISCARDS
            sizes[0] = my_hand.size
            sizes[1] = k_opp
            for i in range(my_hand.size):
                hands[0, i] = my_hand[i]
            for i in range(k_opp):
                hands[1, i] = opp_hand[i]
            for i in range(S[0, SEQ_LEN]):
                seq[i] = S[0, SEQ + i]
            # What each side has not seen: the player the unseen pool; the opponent the pool
            # less its own cards and discards, plus the player's hand and discards.
            unseen[:, :] = 0
            _rank_counts(pool, pool.size, 1, unseen[0])
            _rank_counts(pool, pool.size, 1, unseen[1])
            _rank_counts(opp_hand, k_opp, -1, unseen[1])
            _rank_counts(opp_discards[sim], _DISCARDS, -1, unseen[1])
            _rank_counts(my_hand, my_hand.size, 1, unseen[1])
            for i in range(n_disc):
                unseen[1, _RANK[nth_card(position[DISC], i)]] += 1
            n_unseen[0] = pool.size
            n_unseen[1] = pool.size - k_opp - _DISCARDS + my_hand.size + n_disc
            past = play_out(S, hands, sizes, seq, candidates[c], policy, unseen, n_unseen, reply)
            winner = S[0, WINNER]
            pegged = S[0, PEG] - S[0, PEG + 1] + (past if winner == 0 else -past)
            margin[c] += weights[sim] * pegged
            if not with_show:
                continue
            if winner == 0:
                win[c] += weights[sim]
            elif winner < 0:
                win[c] += weights[sim] * wins[min(S[0, SCORE], target - 1),
                                              min(S[0, SCORE + 1], target - 1), next_deal]
    total = weights.sum()
    return margin / total, win / total


def play_position(view: ObservationView) -> np.ndarray:
    """The deal as ``view``'s player knows it, as one ``crib_env.fast`` state row (int64,
    ``N_FIELDS``) in the play phase, the player as player 0 and to move: hands, cards laid, the
    count sequence, goes, scores, target, dealer, starter and the player's discards. The
    opponent's hand and discards are left empty: each simulation draws them."""
    if view.starter is None or len(view.discards) != DISCARDS_PER_PLAYER:
        raise ValueError("rollouts need a view of the play (starter cut, discards made)")
    row = np.zeros(N_FIELDS, dtype=np.int64)
    row[HAND] = bits_of(view.hand)
    row[NHAND] = len(view.hand)
    row[PLAYED] = bits_of(view.played_own)
    row[PLAYED + 1] = bits_of(view.played_opp)
    row[DISC] = bits_of(view.discards)
    row[NDISC] = len(view.discards)
    row[SCORE] = view.own_score
    row[SCORE + 1] = view.opp_score
    row[SEQ:SEQ + len(view.sequence)] = view.sequence
    row[SEQ_LEN] = len(view.sequence)
    row[COUNT] = view.count
    row[SAID_GO + 1] = int(view.opp_said_go)
    row[STARTER] = view.starter
    row[TO_MOVE] = 0
    row[DEALER] = 0 if view.is_dealer else 1
    row[PHASE] = P_PLAY
    row[WINNER] = -1
    row[TARGET] = view.target
    return row


def _check_policy(policy: int) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown rollout policy {policy!r}: expected one of {sorted(POLICIES)}")


def rollout_values(view: ObservationView, candidates: list[int], sims: int = 200,
                   seed: int = 0, with_show: bool = False, policy: int = POLICY_TACTICS,
                   model: bool = True, history: OpponentPlays | None = None,
                   miss: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(margin, win)`` arrays over ``candidates`` (cards in the player's hand that fit) from a view
    of the play, see the module docstring; ``win`` is all zero unless ``with_show``.
    With ``history`` and ``miss < 1``, each sampled deal is weighted by ``miss`` for every past
    play of the opponent the standard tactics would not have made with those cards."""
    _check_policy(policy)
    return rollouts(np.array(candidates, dtype=np.int64), play_position(view),
                    np.array(view.hand, dtype=np.int64), opponent_cards(view), sims, seed, policy,
                    with_show, win_table(view.target), model, MODEL_TABLES,
                    (history or OpponentPlays()).arrays(), miss)


@njit(cache=True, nogil=True)  # a server's review thread must not hold up its requests
def deal_outcomes(keeps: np.ndarray, discards: np.ndarray, pool: np.ndarray, i_deal: bool,
                  sims: int, seed: int, policy: int, model: bool, tables: ModelTables,
                  own: int, opp: int, target: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole deal from the discard, ``sims`` times for each kept four (rows of ``keeps``,
    with the matching ``discards``), the player on ``own`` and the opponent on ``opp`` in a game
    to ``target``: the opponent's six drawn from ``pool`` and kept by the model (or its four drawn
    uniformly), a starter cut from the rest, the play and the show by fast's rules (the game
    ending where a score reaches the target); the same draws for every row. Returns, per row and
    simulation, the pegging margin (own - opponent's), both scores after the deal, and the winner
    (-1: nobody yet)."""
    n_rows = keeps.shape[0]
    margin = np.zeros((n_rows, sims), dtype=np.int64)
    scores = np.zeros((n_rows, sims, 2), dtype=np.int64)
    winner = np.full((n_rows, sims), -1, dtype=np.int64)
    dealer = 0 if i_deal else 1
    S, hands, sizes, seq, unseen, n_unseen, reply, picks, used = _scratch(pool.size)
    # a fresh deal: the opponent holds four of the pool, any of them, and has laid none
    opponent = OpponentCards(pool, np.ones(pool.size, dtype=np.bool_), _KEEP_SIZE,
                             np.zeros(0, dtype=np.int64))
    opp_hands = np.zeros((sims, _KEEP_SIZE), dtype=np.int64)
    opp_discards = np.zeros((sims, _DISCARDS), dtype=np.int64)
    starters = np.zeros(sims, dtype=np.int64)
    np.random.seed(seed)
    for sim in range(sims):
        sample_opponent(opponent, model, not i_deal, tables, opp_hands[sim], opp_discards[sim],
                        picks, used)
        while True:  # the starter: any other unseen card
            starter = pool[np.random.randint(pool.size)]
            if starter != opp_discards[sim, 0] and starter != opp_discards[sim, 1] and \
                    starter != opp_hands[sim, 0] and starter != opp_hands[sim, 1] and \
                    starter != opp_hands[sim, 2] and starter != opp_hands[sim, 3]:
                break
        starters[sim] = starter
    for row in range(n_rows):
        np.random.seed(seed + 1)
        for sim in range(sims):
            for i in range(_KEEP_SIZE):
                hands[1, i] = opp_hands[sim, i]
                hands[0, i] = keeps[row, i]
            # The player has seen neither the opponent's six nor the rest of the stock; the
            # opponent has seen its own six, not the player's six.
            unseen[:, :] = 0
            _rank_counts(pool, pool.size, 1, unseen[0])
            unseen[0, _RANK[starters[sim]]] -= 1
            for r in range(_N_RANKS):
                unseen[1, r] = unseen[0, r]
            _rank_counts(opp_hands[sim], _KEEP_SIZE, -1, unseen[1])
            _rank_counts(opp_discards[sim], _DISCARDS, -1, unseen[1])
            _rank_counts(hands[0], _KEEP_SIZE, 1, unseen[1])
            _rank_counts(discards[row], _DISCARDS, 1, unseen[1])
            n_unseen[0] = pool.size - 1
            n_unseen[1] = pool.size - 1
            sizes[0], sizes[1] = _KEEP_SIZE, _KEEP_SIZE
            # The deal by the rules: both sixes and the starter, pone's discards, the dealer's,
            # the cut (his heels), the play, the show.
            S[0, :] = 0
            S[0, DEALER] = dealer
            S[0, WINNER] = -1
            S[0, TARGET] = target
            S[0, SCORE] = own
            S[0, SCORE + 1] = opp
            set_deal(S, 0, _card_bits(keeps[row]) | _card_bits(discards[row]),
                     _card_bits(opp_hands[sim]) | _card_bits(opp_discards[sim]), starters[sim])
            for d in range(_DISCARDS):
                apply_action(S, 0, discards[row, d] if dealer == 1 else opp_discards[sim, d])
            for d in range(_DISCARDS):
                apply_action(S, 0, discards[row, d] if dealer == 0 else opp_discards[sim, d])
            if S[0, WINNER] < 0:  # his heels can end the game at the cut
                play_out(S, hands, sizes, seq, -1, policy, unseen, n_unseen, reply)
            margin[row, sim] = S[0, PEG] - S[0, PEG + 1]
            scores[row, sim, 0] = S[0, SCORE]
            scores[row, sim, 1] = S[0, SCORE + 1]
            winner[row, sim] = S[0, WINNER]
    return margin, scores, winner


#: a target no deal reaches: the pegging alone, the game never ends in it
_NO_TARGET = 1 << 30


def deal_rollouts(keeps: np.ndarray, discards: np.ndarray, pool: np.ndarray, i_deal: bool,
                  sims: int, seed: int, policy: int, model: bool,
                  tables: ModelTables) -> np.ndarray:
    """Mean pegging margin of a whole play for each kept four (``deal_outcomes`` with no
    target)."""
    margin, _, _ = deal_outcomes(keeps, discards, pool, i_deal, sims, seed, policy, model,
                                 tables, 0, 0, _NO_TARGET)
    return margin.mean(axis=1)


def keep_pegging(hand6: tuple[int, ...], keeps: list[tuple[int, ...]],
                 unseen: np.ndarray | list[int], dealer: bool, sims: int = 200, seed: int = 0,
                 policy: int = POLICY_TACTICS, model: bool = True) -> np.ndarray:
    """Mean (own - opponent's) pegging points of a whole play for each kept four of ``hand6``,
    the opponent's cards and the starter drawn from ``unseen`` (the pone leads)."""
    _check_policy(policy)
    discards = [[c for c in hand6 if c not in keep] for keep in keeps]
    return deal_rollouts(np.array(keeps, dtype=np.int64), np.array(discards, dtype=np.int64),
                         np.asarray(unseen, dtype=np.int64), dealer, sims, seed, policy, model,
                         MODEL_TABLES)


def keep_win_chances(hand6: tuple[int, ...], keeps: list[tuple[int, ...]],
                     unseen: np.ndarray | list[int], dealer: bool, own: int, opp: int,
                     target: int, sims: int = 2000, seed: int = 0,
                     policy: int = POLICY_TACTICS, model: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(chance, stderr)`` for each kept four of ``hand6``: the chance to win the game after the
    rest of this deal is simulated ``sims`` times (``deal_outcomes``: the opponent's cards and the
    starter drawn from ``unseen``, both sides pegging by ``policy``), each simulation worth 1 or 0
    when a score reaches the target in the deal, else the ``endgame.win_table`` chance at the
    scores it ends on with the other side dealing next; ``stderr`` is the standard error of that
    mean over the simulations."""
    _check_policy(policy)
    if sims < 2:
        raise ValueError(f"sims must be at least 2 (a standard error needs two), got {sims}")
    discards = [[c for c in hand6 if c not in keep] for keep in keeps]
    _, scores, winner = deal_outcomes(np.array(keeps, dtype=np.int64),
                                      np.array(discards, dtype=np.int64),
                                      np.asarray(unseen, dtype=np.int64), dealer, sims, seed,
                                      policy, model, MODEL_TABLES, own, opp, target)
    wins = win_table(target)
    deals_next = 0 if dealer else 1  # the deal passes to the other side
    last = target - 1
    value = wins[np.minimum(scores[..., 0], last), np.minimum(scores[..., 1], last), deals_next]
    value = np.where(winner == 0, 1.0, np.where(winner == 1, 0.0, value))
    return value.mean(axis=1), value.std(axis=1, ddof=1) / np.sqrt(sims)


__all__ = ["MODEL_DRAWS", "MODEL_TABLES", "OPPONENT_CRIB", "POLICIES", "POLICY_LOWEST",
           "POLICY_TACTICS", "SEQ_ROOM", "ModelTables", "OpponentCards",
           "OpponentPlays", "PlayHistory", "consistency", "deal_outcomes", "deal_rollouts",
           "go_count", "keep_pegging", "keep_win_chances", "model_keep", "opponent_cards",
           "opponent_pool", "play_out", "play_position", "rollout_values", "rollouts",
           "sample_opponent", "tactic_value"]
