"""The opponent model of the rollouts: what the opponent may hold, given what the player has seen.

Hidden cards are sampled, never read: every simulation deals the opponent its cards from the cards
the player has not seen (``ObservationView.unseen``), drawn by ``sample_opponent``:

* with the model (the default) the opponent's six cards are its played cards plus cards drawn from
  the unseen ones, and it keeps the four an expected-value player would (``model_keep``: expected
  hand over the starters plus or minus ``OPPONENT_CRIB``, a rank-pair crib estimate); a draw that
  would have thrown a card it has since played, or kept a card it could have laid when it said go,
  is redrawn (after ``MODEL_DRAWS`` failures the draw falls back to uniform);
* without the model, its cards are a uniform draw of the unseen cards that fit what its go says
  (``opponent_pool``, ``go_count``).

Reading its plays: ``OpponentPlays`` remembers, from the player's successive observations, each
card the opponent laid and what it knew then (``PlayHistory``); ``consistency`` weights a sampled
deal by ``miss`` for each of those plays the standard tactics would not have made with its cards.

The kernels take their tables grouped: ``ModelTables`` (the crib estimate and the 15 discard
splits), ``OpponentCards`` (the pool the opponent's cards come from) and ``PlayHistory``.
"""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from crib_env.cards import N_CARDS, N_RANKS, N_SUITS, RANK_ARRAY, SUIT_ARRAY, VALUE_ARRAY
from crib_env.expected import crib_by_discard_ranks
from crib_env.fast import show_points_over
from crib_env.game import DISCARDS_PER_PLAYER, HAND_SIZE, KEEP_SIZE, Phase
from crib_env.observation import MAX_SEQUENCE, ObservationView
from crib_env.rule_kernels import fits
from crib_env.rules import card_fits, count_of

from .analysis import DISCARD_SPLITS, SPLIT_KEEPS, SPLIT_PAIRS, discard_arrays, discard_order
from .rollout_policy import SEQ_ROOM, tactic_value

_VALUE = VALUE_ARRAY.astype(np.int64)  # counting value by card id
_RANK = RANK_ARRAY.astype(np.int64)  # rank by card id
_SUIT = SUIT_ARRAY.astype(np.int64)
_N_RANKS = N_RANKS
_N_SUITS = N_SUITS
_HAND_SIZE = HAND_SIZE
_KEEP_SIZE = KEEP_SIZE
_DISCARDS = DISCARDS_PER_PLAYER
_N_SPLITS = len(DISCARD_SPLITS)
#: starters a player may still be cut at the deal: the pack less its own six
_DEAL_STARTERS = N_CARDS - HAND_SIZE
#: cards an opponent has not seen once the starter is cut: the pack less its six and the starter
_UNSEEN_AFTER_CUT = N_CARDS - HAND_SIZE - 1
MODEL_DRAWS = 30  # draws of the opponent's six tried before falling back to a uniform draw

#: the opponent model's crib value of two discarded ranks (``crib_env.expected.crib_by_discard_ranks``)
OPPONENT_CRIB = crib_by_discard_ranks()

#: The model's tables: ``crib_by_ranks`` (13, 13) the crib value of two discarded ranks, the 15
#: discard splits of a six (``split_keep`` (15, 4) and ``split_pair`` (15, 2) card indexes), and
#: ``exact`` (1,): keep as the exact analyzer ranks the discards (standard's own keep away from
#: the end of the game) rather than by the rank-pair crib estimate.
ModelTables = namedtuple("ModelTables", ["crib_by_ranks", "split_keep", "split_pair", "exact"])
MODEL_TABLES = ModelTables(OPPONENT_CRIB, SPLIT_KEEPS, SPLIT_PAIRS, np.zeros(1, dtype=np.bool_))
#: ``MODEL_TABLES`` keeping by the exact analyzer (the rank-pair estimate agrees with it on about
#: 92% of random sixes)
EXACT_TABLES = MODEL_TABLES._replace(exact=np.ones(1, dtype=np.bool_))

#: What the opponent's cards are drawn from: ``pool`` the cards the player has not seen,
#: ``eligible`` a mask over ``pool`` of those it may still hold (after a go: only cards that did
#: not fit then), ``held`` how many it holds and ``played`` the cards it has laid, in order.
OpponentCards = namedtuple("OpponentCards", ["pool", "eligible", "held", "played"])

#: The opponent's past plays (``OpponentPlays.arrays``), one row ``d`` per card it laid: the count
#: sequence before it (``seq[d, :n[d]]``) at ``count[d]``, the ``card``, how many cards it could
#: expect the player to lay (``k``) and the player held (``left``), and the cards both had laid
#: before it (``before[d, :n_before[d]]``).
PlayHistory = namedtuple("PlayHistory",
                         ["seq", "n", "count", "card", "k", "left", "before", "n_before"])


@njit(cache=True)
def exact_keep(six: np.ndarray, deals: bool) -> int:
    """Index into the 15 discard splits of the discard with the best net expected points by the
    exact analyzer (``agents.analysis``: the hand over the 46 starters, the exact crib), as standard
    makes it away from the end of the game."""
    unseen = np.empty(N_CARDS - _HAND_SIZE, dtype=np.int64)
    n = 0
    for card in range(N_CARDS):
        if card not in six:
            unseen[n] = card
            n += 1
    hand_points, crib = discard_arrays(six, unseen)
    return discard_order(hand_points, crib, deals)[0]


@njit(cache=True)
def model_keep(six: np.ndarray, deals: bool, tables: ModelTables) -> int:
    """Index into the 15 discard splits of the discard an expected-value player makes from
    ``six``: expected hand over the 46 starters plus (dealer) or minus (pone) the crib value of
    the two discarded ranks (``tables``: ``MODEL_TABLES``); with ``tables.exact``, ``exact_keep``."""
    if tables.exact[0]:
        return exact_keep(six, deals)
    crib_by_ranks, split_keep, split_pair = tables.crib_by_ranks, tables.split_keep, tables.split_pair
    rank_left = np.full(_N_RANKS, _N_SUITS, dtype=np.int64)  # the starters it may be cut
    suit_left = np.full(_N_SUITS, _N_RANKS, dtype=np.int64)
    for c in six:
        rank_left[_RANK[c]] -= 1
        suit_left[_SUIT[c]] -= 1
    best, best_value = 0, -1e9
    for s in range(_N_SPLITS):
        keep = np.int64(0)
        for i in range(_KEEP_SIZE):
            keep |= np.int64(1) << six[split_keep[s, i]]
        value = show_points_over(keep, rank_left, suit_left) / _DEAL_STARTERS
        crib = crib_by_ranks[_RANK[six[split_pair[s, 0]]], _RANK[six[split_pair[s, 1]]]]
        value += crib if deals else -crib
        if value > best_value:
            best, best_value = s, value
    return best


@njit(cache=True)
def sample_opponent(cards: OpponentCards, model: bool, deals: bool, tables: ModelTables,
                    hand: np.ndarray, discards: np.ndarray, picks: np.ndarray,
                    used: np.ndarray) -> None:
    """Draw the opponent's ``cards.held`` cards still held (into ``hand``) and its two discards
    (into ``discards``) from ``cards.pool``. With ``model``, the opponent's six cards are its played
    cards plus cards drawn from the pool, kept the way an expected-value player would; draws whose
    kept four miss a played card, or hold a card the go rules out (not ``cards.eligible``), are
    redrawn. Without it (or after ``MODEL_DRAWS`` failed draws) the cards are uniform over the
    eligible pool. ``picks`` (``arange(pool.size)``) and ``used`` (pool.size,) are scratch."""
    pool, eligible, k_opp, played = cards.pool, cards.eligible, cards.held, cards.played
    split_keep, split_pair = tables.split_keep, tables.split_pair
    m = played.size
    six = np.empty(_HAND_SIZE, dtype=np.int64)
    if model:
        for _ in range(MODEL_DRAWS):
            for i in range(_HAND_SIZE - m):
                j = i + np.random.randint(pool.size - i)
                picks[i], picks[j] = picks[j], picks[i]
            for i in range(m):
                six[i] = played[i]
            for i in range(_HAND_SIZE - m):
                six[m + i] = picks[i]  # pool indexes for now
            for i in range(m, _HAND_SIZE):
                six[i] = pool[six[i]]
            s = model_keep(six, deals, tables)
            ok = True
            for i in range(_DISCARDS):  # a played card thrown to the crib: inconsistent
                if split_pair[s, i] < m:
                    ok = False
            n = 0
            for i in range(_KEEP_SIZE):
                idx = split_keep[s, i]
                if idx >= m:
                    if not eligible[picks[idx - m]]:
                        ok = False
                    hand[n] = six[idx]
                    n += 1
            if ok and n == k_opp:
                discards[0] = six[split_pair[s, 0]]
                discards[1] = six[split_pair[s, 1]]
                return
    used[:] = False
    n = 0
    for i in range(pool.size):  # uniform: k_opp eligible cards, then two more for the crib
        j = i + np.random.randint(pool.size - i)
        picks[i], picks[j] = picks[j], picks[i]
        if n < k_opp and eligible[picks[i]]:
            hand[n] = pool[picks[i]]
            used[picks[i]] = True
            n += 1
        if n == k_opp:
            break
    d = 0
    while d < _DISCARDS:
        j = np.random.randint(pool.size)
        if not used[j]:
            used[j] = True
            discards[d] = pool[j]
            d += 1
    # picks is reset to the identity for the next draw's indexes
    for i in range(pool.size):
        picks[i] = i


@njit(cache=True)
def consistency(kept: np.ndarray, discards: np.ndarray, starter: int, history: PlayHistory,
                miss: float, reply: np.ndarray) -> float:
    """Weight of a sampled opponent deal (``kept`` four and ``discards``) given the plays it made:
    each past decision in ``history`` where the standard tactics, from what the opponent had
    seen, would not have laid that card multiplies the weight by ``miss``. ``reply`` (13,) is
    scratch."""
    dec_seq, dec_n, dec_count, dec_card = history.seq, history.n, history.count, history.card
    dec_k, dec_left, dec_before, dec_nbefore = (history.k, history.left, history.before,
                                                history.n_before)
    weight = 1.0
    hands = np.zeros((2, _KEEP_SIZE), dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    seq = np.zeros(SEQ_ROOM, dtype=np.int64)
    unseen = np.zeros(_N_RANKS, dtype=np.int64)
    for d in range(dec_card.size):
        m = 0
        for c in kept:  # the opponent's hand then: its four less what it had laid
            laid = False
            for j in range(dec_nbefore[d]):
                if dec_before[d, j] == c:
                    laid = True
            if not laid:
                hands[0, m] = c
                m += 1
        legal, actual = 0, -1
        for i in range(m):
            if fits(dec_count[d], _VALUE[hands[0, i]]):
                legal += 1
            if hands[0, i] == dec_card[d]:
                actual = i
        if legal < 2 or actual < 0:
            continue
        for r in range(_N_RANKS):
            unseen[r] = _N_SUITS
        for c in kept:
            unseen[_RANK[c]] -= 1
        for c in discards:
            unseen[_RANK[c]] -= 1
        unseen[_RANK[starter]] -= 1
        n_unseen = _UNSEEN_AFTER_CUT
        for j in range(dec_nbefore[d]):  # the player's cards laid before it
            c = dec_before[d, j]
            mine = True
            for k in kept:
                if k == c:
                    mine = False
            if mine:
                unseen[_RANK[c]] -= 1
                n_unseen -= 1
        for j in range(dec_n[d]):
            seq[j] = dec_seq[d, j]
        sizes[0], sizes[1] = m, dec_left[d]
        best = -1e18
        chosen = 0.0
        for i in range(m):
            if not fits(dec_count[d], _VALUE[hands[0, i]]):
                continue
            value = tactic_value(hands, sizes, 0, i, seq, dec_n[d], dec_count[d], unseen,
                                 n_unseen, dec_k[d], reply)
            best = max(best, value)
            if i == actual:
                chosen = value
        if chosen < best - 1e-9:
            weight *= miss
    return weight


def go_count(view: ObservationView) -> int | None:
    """The count at which the opponent said go in the current sequence (None if it has not).

    The opponent says go on its turn right after the player's first card that follows the
    opponent's last card of the sequence, so that count is read off the sequence.
    """
    if not view.opp_said_go:
        return None
    theirs = set(view.played_opp)
    last_opp = max((i for i, c in enumerate(view.sequence) if c in theirs), default=-1)
    mine = [i for i, c in enumerate(view.sequence) if i > last_opp and c not in theirs]
    upto = mine[0] if mine else len(view.sequence) - 1
    return count_of(view.sequence[:upto + 1])


def opponent_pool(view: ObservationView) -> tuple[np.ndarray, np.ndarray]:
    """``(pool, eligible)``: the unseen cards the opponent's cards are drawn from, and a mask over
    ``pool`` of those it may still hold (after a go: only cards that did not fit then)."""
    pool = np.array(view.unseen, dtype=np.int64)
    eligible = np.ones(pool.size, dtype=np.bool_)
    limit = go_count(view)
    if limit is not None:
        # it said go at ``limit``: every card it still holds was too big to lay then
        too_big = np.array([not card_fits(c, limit) for c in view.unseen], dtype=np.bool_)
        if too_big.sum() >= view.opp_cards_left:
            eligible = too_big
    return pool, eligible


def opponent_cards(view: ObservationView) -> OpponentCards:
    """What the opponent's cards are drawn from in ``view`` (``opponent_pool``, the cards it holds
    and those it has laid)."""
    pool, eligible = opponent_pool(view)
    return OpponentCards(pool, eligible, view.opp_cards_left,
                         np.array(view.played_opp, dtype=np.int64))


class OpponentPlays:
    """The opponent's plays in this deal, read off the player's successive observations.

    Each card the opponent laid in a count sequence the player saw is kept with what the opponent
    knew then: the sequence before it, the count, the cards laid before it and how many cards the
    player still held (0 for the opponent's purposes after the player's go). Cards laid in a
    sequence that ended between two of the player's turns are not seen in order and are skipped.
    This is agent memory built from observations only; ``clear`` it at each new game.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.starter: int | None = None
        self.rows: dict[int, tuple[tuple[int, ...], int, int, int, tuple[int, ...]]] = {}

    def update(self, view: ObservationView) -> None:
        if view.starter is None or view.phase != Phase.PLAY:
            self.clear()
            return
        theirs, mine = set(view.played_opp), set(view.played_own)
        if view.starter != self.starter or not set(self.rows) <= theirs:
            self.clear()  # a new deal
            self.starter = view.starter
        seq = view.sequence
        for i, card in enumerate(seq):
            if card not in theirs or card in self.rows:
                continue
            later = set(seq[i:])
            before = tuple(c for c in sorted(theirs | mine) if c not in later)
            left = KEEP_SIZE - sum(c in mine for c in before)
            went = i > 0 and seq[i - 1] in theirs  # it laid twice running: the player was out
            self.rows[card] = (tuple(seq[:i]), count_of(seq[:i]),
                               0 if went else left, left, before)

    def arrays(self) -> PlayHistory:
        """The plays as a ``PlayHistory`` of arrays for the kernels."""
        n = len(self.rows)
        seq = np.zeros((n, MAX_SEQUENCE), dtype=np.int64)
        before = np.zeros((n, 2 * KEEP_SIZE), dtype=np.int64)  # both players' laid cards
        lengths, counts, cards, ks, lefts, n_before = (np.zeros(n, dtype=np.int64)
                                                        for _ in range(6))
        for d, (card, (prefix, count, k, left, laid)) in enumerate(sorted(self.rows.items())):
            seq[d, :len(prefix)] = prefix
            before[d, :len(laid)] = laid
            lengths[d], counts[d], cards[d], ks[d], lefts[d] = len(prefix), count, card, k, left
            n_before[d] = len(laid)
        return PlayHistory(seq, lengths, counts, cards, ks, lefts, before, n_before)
