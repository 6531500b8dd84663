"""Pegging rollouts (numba): play the rest of a deal many times over sampled opponent hands.

``rollout_values(view, candidates, sims, seed)`` estimates, for each card the player could lay now,

* ``margin``: the mean of (own pegging points - opponent's pegging points) over the rest of the
  play, the candidate's own points included;
* ``win``: the mean chance of winning the game: 1 or 0 when a player reaches the target during the
  rest of this deal (play, then pone's hand, dealer's hand, crib, in that order), else the
  ``agents.endgame.win_table`` chance from the scores the deal ends on (with ``with_show``).

``keep_pegging(hand6, keeps, unseen, dealer)`` does the same for a whole play from the discard: the
mean pegging margin of each kept four.

Hidden cards are sampled, never read: every simulation deals the opponent its cards from the cards
the player has not seen (``ObservationView.unseen``). With the opponent model (the default) the
opponent's six cards are its played cards plus cards drawn from the unseen ones, and it keeps the
four an expected-value player would (``_model_keep``); a draw that would have thrown a card it has
since played, or kept a card it could have laid when it said go, is redrawn (after 30 failures the
draw falls back to uniform). Without the model, its cards are a uniform draw of the unseen cards that
fit what its go says. With an ``OpponentPlays`` history (the agent's memory of this deal) each
sampled deal is also weighted by how well it explains the opponent's plays so far: ``miss`` for
each play the standard tactics would not have made with those cards (``_consistency``). The same
sampled deals are used for every candidate (common random numbers), so differences between
candidates are not drowned in deal noise.

In the simulations both players follow a rollout policy (``POLICY_TACTICS`` by default: the
standard tactics of ``agents.pegging.tactic_values``, each player judging from what it has seen), so
the expert's pegging is a one-step improvement on the standard's. Only the policy lives here: the
rules are ``crib_env.fast``'s. Each simulation copies the position (``play_position``: the view as
one fast state row, the player as player 0) into a scratch row, fills in the sampled opponent hand
and discards, and steps it with ``fast.apply_action`` (go, 31, count restart, last card, the game
ending at the target, then the show: pone's hand, the dealer's, the crib, stopping at the target);
``keep_pegging`` deals its rows with ``fast.set_deal`` and the four discards. The margin is read off
the row's ``PEG`` columns, except that the points of a card that wins the game count in full (the
row's scores stop at the target). ``tests/test_rollout.py`` replays the rules engine with it. The
policy scores with fast's kernels too: pegging points by ``fast.sequence_points`` over the count
sequence's card ids (a hypothetical reply of rank ``r`` is written as card id ``r``: only ranks
score) and the opponent model's expected hand by ``fast.five_rank_points``. numba's cache
(``cache=True``) is keyed on each file's own text, so after changing fast's kernels delete
``agents/__pycache__``: the kernels here would otherwise keep their compiled copies.
"""

# Inside numba kernels the legacy np.random functions are the supported, seedable generator.
# ruff: noqa: NPY002

from __future__ import annotations

import numpy as np
from numba import njit

from crib_env.cards import VALUE, VALUE_ARRAY
from crib_env.fast import (
    COUNT,
    DEALER,
    DISC,
    HAND,
    N_FIELDS,
    NDISC,
    NHAND,
    OK,
    P_GAME_OVER,
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
    five_rank_points,
    nth_card,
    peg_points,
    sequence_points,
    set_deal,
)
from crib_env.game import Phase
from crib_env.observation import ObservationView
from crib_env.scoring import MAX_COUNT

from .analysis import (
    _ALL_SAME,
    _HIGH_PAIR,
    _KEEP_IDX,
    _LOW_PAIR,
    _PAIR_IDX,
    _TX,
    _TY,
    _TZ,
    _crib_rank_table,
)
from .endgame import win_table

POLICY_ROLLOUT = 0  # points now, avoid counts of 5 and 21, lead low; random tie-breaks
POLICY_LOWEST = 1  # lay the lowest legal card id (deterministic; for tests against the engine)
POLICY_LOOKAHEAD = 2  # points now minus the other's best reply from its (simulated) hand
POLICY_TACTICS = 3  # the standard tactics (agents.pegging.tactic_values) from each side's view
_VALUE = VALUE_ARRAY.astype(np.int64)  # counting value by card id


@njit(cache=True)
def _comb(n: int, k: int) -> float:
    if k < 0 or n < k:
        return 0.0
    out = 1.0
    for i in range(k):
        out = out * (n - i) / (i + 1)
    return out


@njit(cache=True)
def _tactic_value(hands: np.ndarray, sizes: np.ndarray, p: int, i: int, seq: np.ndarray, n: int,
                  count: int, unseen: np.ndarray, n_unseen: int, k: int,
                  reply: np.ndarray) -> float:
    """``agents.pegging.tactic_values`` (score mode) of laying ``hands[p, i]``, seen from ``p``:
    ``unseen`` holds the cards ``p`` has not seen by rank (``n_unseen`` in all), ``k`` how many
    the other player could still lay. Hypothetical cards are written into ``seq`` past ``n``
    (a reply of rank ``r`` as card id ``r``: only ranks score)."""
    card = hands[p, i]
    after = count + _VALUE[card]
    seq[n] = card
    gain = sequence_points(seq, 0, n + 1, after)
    if sizes[p] == 1 and sizes[1 - p] == 0 and after != 31:
        gain += 1  # the last card of the hand
    value = gain + 0.03 * _VALUE[card]
    if after == 31:
        return value
    fitting = 0
    top = -1
    for r in range(13):
        reply[r] = -1
        if unseen[r] > 0 and after + _VALUE[r] <= 31:
            seq[n + 1] = r
            reply[r] = sequence_points(seq, 0, n + 2, after + _VALUE[r])
            fitting += unseen[r]
            top = max(top, reply[r])
    total = _comb(n_unseen, k)
    if k == 0 or total == 0.0:
        return value + 1.0  # the opponent cannot answer: a go (or more) for the player
    value += _comb(n_unseen - fitting, k) / total  # the go
    excluded = 0
    none_before = 1.0
    for level in range(top, -1, -1):
        cards = 0
        for r in range(13):
            if reply[r] == level:
                cards += unseen[r]
        if cards == 0:
            continue
        none_after = _comb(n_unseen - excluded - cards, k) / total
        p_level = none_before - none_after
        for r in range(13):
            if reply[r] != level or p_level <= 0.0:
                continue
            chance = p_level * unseen[r] / cards
            reached = after + _VALUE[r]
            seq[n + 1] = r
            counter = 0
            for j in range(sizes[p]):
                if j != i and reached + _VALUE[hands[p, j]] <= 31:
                    seq[n + 2] = hands[p, j]
                    counter = max(counter, sequence_points(seq, 0, n + 3,
                                                           reached + _VALUE[hands[p, j]]))
            value += chance * (0.5 * counter - level)
        excluded += cards
        none_before = none_after
    return value


@njit(cache=True)
def _choose(hands: np.ndarray, sizes: np.ndarray, p: int, seq: np.ndarray, n: int, count: int,
            policy: int, unseen: np.ndarray, n_unseen: np.ndarray, other_went: bool,
            reply: np.ndarray) -> int:
    """Index into ``hands[p]`` of the card the rollout policy lays (one must fit); ``other_went``:
    the other player has said go in this count sequence."""
    best, best_score = -1, -1e9
    hand = hands[p]
    other = hands[1 - p]
    legal = 0
    for i in range(sizes[p]):
        if count + _VALUE[hand[i]] <= 31:
            legal += 1
            best = i
    if legal == 1:
        return best
    for i in range(sizes[p]):
        card = hand[i]
        after = count + _VALUE[card]
        if after > 31:
            continue
        if policy == POLICY_LOWEST:
            score = -float(card)
        elif policy == POLICY_TACTICS:
            k = 0 if other_went else sizes[1 - p]
            score = _tactic_value(hands, sizes, p, i, seq, n, count, unseen[p], n_unseen[p], k,
                                  reply) + 1e-3 * np.random.random()
        else:
            seq[n] = card
            score = 4.0 * sequence_points(seq, 0, n + 1, after) + np.random.random()
            if policy == POLICY_LOOKAHEAD:
                best_reply = -1
                if after < 31:
                    for j in range(sizes[1 - p]):
                        answer = after + _VALUE[other[j]]
                        if answer <= 31:
                            seq[n + 1] = other[j]
                            best_reply = max(best_reply, sequence_points(seq, 0, n + 2, answer))
                score -= 4.0 * best_reply if best_reply >= 0 else -2.0
                score += 0.1 * _VALUE[card]
            else:
                if after == 5 or after == 21:
                    score -= 2.0
                if n == 0 and _VALUE[card] < 5:
                    score += 0.5
        if score > best_score:
            best, best_score = i, score
    return best


@njit(cache=True)
def _play_out(S: np.ndarray, hands: np.ndarray, sizes: np.ndarray, seq: np.ndarray, forced: int,
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
            idx = _choose(hands, sizes, p, seq, n, S[0, COUNT], policy, unseen, n_unseen,
                          S[0, SAID_GO + o] != 0, reply)
        card = hands[p, idx]
        hands[p, idx] = hands[p, sizes[p] - 1]
        sizes[p] -= 1
        if unseen[o, card % 13] > 0:  # the other player now has seen it
            unseen[o, card % 13] -= 1
            n_unseen[o] -= 1
        seq[n] = card
        before = S[0, SCORE + p]
        if apply_action(S, 0, card) != OK:
            raise ValueError("a rollout card that is not legal")
    if S[0, PHASE] == P_GAME_OVER:
        return max(0, before + peg_points(S, 0) - S[0, TARGET])
    return 0


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
        out[cards[i] % 13] += sign


def _crib_by_ranks() -> np.ndarray:
    """Float (13, 13): expected crib points (fifteens, pairs, runs) of two discarded ranks with
    three other cards drawn from the rest of the pack, for the opponent model's discards."""
    table = np.zeros((13, 13))
    crib_rank = _crib_rank_table()
    for r1 in range(13):
        for r2 in range(13):
            n = np.full(13, 4.0)
            n[r1] -= 1
            n[r2] -= 1
            c2 = n * (n - 1) / 2
            c3 = c2 * (n - 2) / 3
            weight = np.where(_ALL_SAME, c3[_TX], np.where(
                _LOW_PAIR, c2[_TX] * n[_TZ], np.where(_HIGH_PAIR, n[_TX] * c2[_TY],
                                                      n[_TX] * n[_TY] * n[_TZ])))
            table[r1, r2] = crib_rank[r1, r2] @ weight / weight.sum()
    return table


_CRIB_BY_RANKS = _crib_by_ranks()
_SPLIT_KEEP = _KEEP_IDX.astype(np.int64)
_SPLIT_PAIR = _PAIR_IDX.astype(np.int64)


@njit(cache=True)
def _model_keep(six: np.ndarray, deals: bool, crib_by_ranks: np.ndarray, split_keep: np.ndarray,
                split_pair: np.ndarray) -> int:
    """Index into the 15 discard splits of the discard an expected-value player makes from
    ``six``: expected hand over the 46 starters plus (dealer) or minus (pone) the crib value of
    the two discarded ranks."""
    unseen_rank = np.full(13, 4, dtype=np.int64)
    unseen_suit = np.full(4, 13, dtype=np.int64)
    for c in six:
        unseen_rank[c % 13] -= 1
        unseen_suit[c // 13] -= 1
    best, best_value = 0, -1e9
    for s in range(15):
        total = 0.0
        r0, r1 = six[split_keep[s, 0]] % 13, six[split_keep[s, 1]] % 13
        r2, r3 = six[split_keep[s, 2]] % 13, six[split_keep[s, 3]] % 13
        for r in range(13):  # fifteens, pairs and runs with each starter rank
            if unseen_rank[r] > 0:
                total += unseen_rank[r] * five_rank_points(r0, r1, r2, r3, r)
        suit = six[split_keep[s, 0]] // 13
        flush = True
        for i in range(4):
            card = six[split_keep[s, i]]
            if card // 13 != suit:
                flush = False
            if card % 13 == 10:
                total += unseen_suit[card // 13]  # nobs with a starter of the jack's suit
        if flush:
            total += 4 * 46 + unseen_suit[suit]
        value = total / 46.0
        crib = crib_by_ranks[six[split_pair[s, 0]] % 13, six[split_pair[s, 1]] % 13]
        value += crib if deals else -crib
        if value > best_value:
            best, best_value = s, value
    return best


@njit(cache=True)
def _sample_opponent(pool: np.ndarray, eligible: np.ndarray, k_opp: int, played: np.ndarray,
                     model: bool, deals: bool, crib_by_ranks: np.ndarray,
                     split_keep: np.ndarray, split_pair: np.ndarray, hand: np.ndarray,
                     discards: np.ndarray, picks: np.ndarray, used: np.ndarray) -> None:
    """Draw the opponent's ``k_opp`` cards still held (into ``hand``) and its two discards (into
    ``discards``) from ``pool``. With ``model``, the opponent's six cards are its played cards plus
    cards drawn from the pool, kept the way an expected-value player would; draws whose kept four
    miss a played card, or hold a card the go rules out (not ``eligible``), are redrawn. Without
    it (or after 30 failed draws) the cards are uniform over the eligible pool."""
    m = played.size
    six = np.empty(6, dtype=np.int64)
    if model:
        for _ in range(30):
            for i in range(6 - m):
                j = i + np.random.randint(pool.size - i)
                picks[i], picks[j] = picks[j], picks[i]
            for i in range(m):
                six[i] = played[i]
            for i in range(6 - m):
                six[m + i] = picks[i]  # pool indexes for now
            for i in range(m, 6):
                six[i] = pool[six[i]]
            s = _model_keep(six, deals, crib_by_ranks, split_keep, split_pair)
            ok = True
            for i in range(2):  # a played card thrown to the crib: inconsistent
                if split_pair[s, i] < m:
                    ok = False
            n = 0
            for i in range(4):
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
    while d < 2:
        j = np.random.randint(pool.size)
        if not used[j]:
            used[j] = True
            discards[d] = pool[j]
            d += 1
    # picks is reset to the identity for the next draw's indexes
    for i in range(pool.size):
        picks[i] = i


@njit(cache=True)
def _consistency(kept: np.ndarray, discards: np.ndarray, starter: int, dec_seq: np.ndarray,
                 dec_n: np.ndarray, dec_count: np.ndarray, dec_card: np.ndarray,
                 dec_k: np.ndarray, dec_left: np.ndarray, dec_before: np.ndarray,
                 dec_nbefore: np.ndarray, miss: float, reply: np.ndarray) -> float:
    """Weight of a sampled opponent deal (``kept`` four and ``discards``) given the plays it made:
    each past decision (row ``d``: count sequence cards ``dec_seq[d, :dec_n[d]]``, ``dec_count``,
    the card laid, the player's cards left ``dec_left`` and what the opponent could expect of them
    ``dec_k``, the cards played before it) where the standard tactics, from what the opponent had
    seen, would not have laid that card multiplies the weight by ``miss``."""
    weight = 1.0
    hands = np.zeros((2, 4), dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    seq = np.zeros(16, dtype=np.int64)
    unseen = np.zeros(13, dtype=np.int64)
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
            if dec_count[d] + _VALUE[hands[0, i]] <= 31:
                legal += 1
            if hands[0, i] == dec_card[d]:
                actual = i
        if legal < 2 or actual < 0:
            continue
        for r in range(13):
            unseen[r] = 4
        for c in kept:
            unseen[c % 13] -= 1
        for c in discards:
            unseen[c % 13] -= 1
        unseen[starter % 13] -= 1
        n_unseen = 52 - 7
        for j in range(dec_nbefore[d]):  # the player's cards laid before it
            c = dec_before[d, j]
            mine = True
            for k in kept:
                if k == c:
                    mine = False
            if mine:
                unseen[c % 13] -= 1
                n_unseen -= 1
        for j in range(dec_n[d]):
            seq[j] = dec_seq[d, j]
        sizes[0], sizes[1] = m, dec_left[d]
        best = -1e18
        chosen = 0.0
        for i in range(m):
            if dec_count[d] + _VALUE[hands[0, i]] > 31:
                continue
            value = _tactic_value(hands, sizes, 0, i, seq, dec_n[d], dec_count[d], unseen,
                                  n_unseen, dec_k[d], reply)
            best = max(best, value)
            if i == actual:
                chosen = value
        if chosen < best - 1e-9:
            weight *= miss
    return weight


@njit(cache=True)
def _scratch(pool_size: int):
    """The work buffers of one batch of simulations: a scratch state row, both hands in the
    policy's order and their sizes, the count sequence (with room for imagined replies), cards
    unseen by each player by rank, the reply table, and the pool draw's indices and flags."""
    return (np.zeros((1, N_FIELDS), dtype=np.int64), np.zeros((2, 4), dtype=np.int64),
            np.zeros(2, dtype=np.int64), np.zeros(16, dtype=np.int64),
            np.zeros((2, 13), dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(13, dtype=np.int64), np.arange(pool_size), np.zeros(pool_size, dtype=np.bool_))


@njit(cache=True)
def _rollouts(candidates: np.ndarray, position: np.ndarray, my_hand: np.ndarray, pool: np.ndarray,
              eligible: np.ndarray, k_opp: int, opp_played: np.ndarray, sims: int, seed: int,
              policy: int, with_show: bool, wins: np.ndarray, model: bool,
              crib_by_ranks: np.ndarray, split_keep: np.ndarray, split_pair: np.ndarray,
              dec_seq: np.ndarray, dec_n: np.ndarray, dec_count: np.ndarray, dec_card: np.ndarray,
              dec_k: np.ndarray, dec_left: np.ndarray, dec_before: np.ndarray,
              dec_nbefore: np.ndarray, miss: float) -> tuple[np.ndarray, np.ndarray]:
    """``rollout_values`` from ``position`` (``play_position``); ``my_hand`` the player's cards
    in the order the policy weighs them, ``opp_played`` the opponent's in the order laid."""
    n_cand = candidates.size
    margin = np.zeros(n_cand)
    win = np.zeros(n_cand)
    S, hands, sizes, seq, unseen, n_unseen, reply, picks, used = _scratch(pool.size)
    opp_hands = np.zeros((sims, 4), dtype=np.int64)
    opp_discards = np.zeros((sims, 2), dtype=np.int64)
    opp_kept = np.zeros(4, dtype=np.int64)
    i_deal = position[DEALER] == 0
    starter = position[STARTER]
    target = position[TARGET]
    next_deal = 0 if i_deal else 1  # whether the player deals the next deal
    n_disc = position[NDISC]
    weights = np.ones(sims)
    np.random.seed(seed)
    for sim in range(sims):  # the same sampled deals for every candidate
        _sample_opponent(pool, eligible, k_opp, opp_played, model, not i_deal, crib_by_ranks,
                         split_keep, split_pair, opp_hands[sim], opp_discards[sim], picks, used)
        if miss < 1.0 and dec_card.size:
            for i in range(opp_played.size):
                opp_kept[i] = opp_played[i]
            for i in range(k_opp):
                opp_kept[opp_played.size + i] = opp_hands[sim, i]
            weights[sim] = _consistency(opp_kept[:opp_played.size + k_opp], opp_discards[sim],
                                        starter, dec_seq, dec_n, dec_count, dec_card, dec_k,
                                        dec_left, dec_before, dec_nbefore, miss, reply)
    for c in range(n_cand):
        np.random.seed(seed + 1)
        for sim in range(sims):
            opp_hand = opp_hands[sim]
            S[0] = position  # the sampled deal: the opponent's hand and discards drawn
            S[0, HAND + 1] = _card_bits(opp_hand[:k_opp])
            S[0, NHAND + 1] = k_opp
            S[0, DISC + 1] = _card_bits(opp_discards[sim])
            S[0, NDISC + 1] = 2
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
            _rank_counts(opp_discards[sim], 2, -1, unseen[1])
            _rank_counts(my_hand, my_hand.size, 1, unseen[1])
            for i in range(n_disc):
                unseen[1, nth_card(position[DISC], i) % 13] += 1
            n_unseen[0] = pool.size
            n_unseen[1] = pool.size - k_opp - 2 + my_hand.size + n_disc
            past = _play_out(S, hands, sizes, seq, candidates[c], policy, unseen, n_unseen, reply)
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
    if view.starter is None or len(view.discards) != 2:
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
    return sum(VALUE[c] for c in view.sequence[:upto + 1])


def opponent_pool(view: ObservationView) -> tuple[np.ndarray, np.ndarray]:
    """``(pool, eligible)``: the unseen cards the opponent's cards are drawn from, and a mask over
    ``pool`` of those it may still hold (after a go: only cards that did not fit then)."""
    pool = np.array(view.unseen, dtype=np.int64)
    eligible = np.ones(pool.size, dtype=np.bool_)
    limit = go_count(view)
    if limit is not None:
        fits = np.array([VALUE[c] > MAX_COUNT - limit for c in view.unseen], dtype=np.bool_)
        if fits.sum() >= view.opp_cards_left:
            eligible = fits
    return pool, eligible


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
            left = 4 - sum(c in mine for c in before)
            went = i > 0 and seq[i - 1] in theirs  # it laid twice running: the player was out
            self.rows[card] = (tuple(seq[:i]), sum(VALUE[c] for c in seq[:i]),
                               0 if went else left, left, before)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(seq, n, count, card, k, left, before, n_before)`` arrays for the kernels."""
        n = len(self.rows)
        seq = np.zeros((n, 8), dtype=np.int64)
        before = np.zeros((n, 8), dtype=np.int64)
        lengths, counts, cards, ks, lefts, n_before = (np.zeros(n, dtype=np.int64)
                                                        for _ in range(6))
        for d, (card, (prefix, count, k, left, laid)) in enumerate(sorted(self.rows.items())):
            seq[d, :len(prefix)] = prefix
            before[d, :len(laid)] = laid
            lengths[d], counts[d], cards[d], ks[d], lefts[d] = len(prefix), count, card, k, left
            n_before[d] = len(laid)
        return seq, lengths, counts, cards, ks, lefts, before, n_before


def rollout_values(view: ObservationView, candidates: list[int], sims: int = 200,
                   seed: int = 0, with_show: bool = False, policy: int = POLICY_TACTICS,
                   model: bool = True, history: OpponentPlays | None = None,
                   miss: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(margin, win)`` arrays over ``candidates`` (cards in the player's hand that fit) from a view
    of the play, see the module docstring; ``win`` is all zero unless ``with_show``.
    With ``history`` and ``miss < 1``, each sampled deal is weighted by ``miss`` for every past
    play of the opponent the standard tactics would not have made with those cards."""
    pool, eligible = opponent_pool(view)
    return _rollouts(
        np.array(candidates, dtype=np.int64), play_position(view),
        np.array(view.hand, dtype=np.int64), pool, eligible, view.opp_cards_left,
        np.array(view.played_opp, dtype=np.int64), sims, seed, policy, with_show,
        win_table(view.target), model, _CRIB_BY_RANKS, _SPLIT_KEEP, _SPLIT_PAIR,
        *(history or OpponentPlays()).arrays(), miss)


@njit(cache=True)
def _deal_rollouts(keeps: np.ndarray, discards: np.ndarray, pool: np.ndarray, i_deal: bool,
                   sims: int, seed: int, policy: int, model: bool, crib_by_ranks: np.ndarray,
                   split_keep: np.ndarray, split_pair: np.ndarray) -> np.ndarray:
    """Mean pegging margin of a whole play for each kept four (rows of ``keeps``, with the
    matching ``discards``): the opponent's six drawn from ``pool`` and kept by the model (or its
    four drawn uniformly), a starter cut from the rest, the play simulated; the same draws for
    every row."""
    margin = np.zeros(keeps.shape[0])
    dealer = 0 if i_deal else 1
    S, hands, sizes, seq, unseen, n_unseen, reply, picks, used = _scratch(pool.size)
    eligible = np.ones(pool.size, dtype=np.bool_)
    no_cards = np.zeros(0, dtype=np.int64)
    opp_hands = np.zeros((sims, 4), dtype=np.int64)
    opp_discards = np.zeros((sims, 2), dtype=np.int64)
    starters = np.zeros(sims, dtype=np.int64)
    np.random.seed(seed)
    for sim in range(sims):
        _sample_opponent(pool, eligible, 4, no_cards, model, not i_deal, crib_by_ranks,
                         split_keep, split_pair, opp_hands[sim], opp_discards[sim], picks, used)
        while True:  # the starter: any other unseen card
            starter = pool[np.random.randint(pool.size)]
            if starter != opp_discards[sim, 0] and starter != opp_discards[sim, 1] and \
                    starter != opp_hands[sim, 0] and starter != opp_hands[sim, 1] and \
                    starter != opp_hands[sim, 2] and starter != opp_hands[sim, 3]:
                break
        starters[sim] = starter
    for row in range(keeps.shape[0]):
        np.random.seed(seed + 1)
        for sim in range(sims):
            for i in range(4):
                hands[1, i] = opp_hands[sim, i]
                hands[0, i] = keeps[row, i]
            # The player has seen neither the opponent's six nor the rest of the stock; the
            # opponent has seen its own six, not the player's six.
            unseen[:, :] = 0
            _rank_counts(pool, pool.size, 1, unseen[0])
            unseen[0, starters[sim] % 13] -= 1
            for r in range(13):
                unseen[1, r] = unseen[0, r]
            _rank_counts(opp_hands[sim], 4, -1, unseen[1])
            _rank_counts(opp_discards[sim], 2, -1, unseen[1])
            _rank_counts(hands[0], 4, 1, unseen[1])
            _rank_counts(discards[row], 2, 1, unseen[1])
            n_unseen[0] = pool.size - 1
            n_unseen[1] = pool.size - 1
            sizes[0], sizes[1] = 4, 4
            # The deal by the rules: both sixes and the starter, pone's discards, the dealer's, the
            # cut; no target (a game never ends in the play).
            S[0, :] = 0
            S[0, DEALER] = dealer
            S[0, WINNER] = -1
            S[0, TARGET] = 1 << 30
            set_deal(S, 0, _card_bits(keeps[row]) | _card_bits(discards[row]),
                     _card_bits(opp_hands[sim]) | _card_bits(opp_discards[sim]), starters[sim])
            for d in range(2):
                apply_action(S, 0, discards[row, d] if dealer == 1 else opp_discards[sim, d])
            for d in range(2):
                apply_action(S, 0, discards[row, d] if dealer == 0 else opp_discards[sim, d])
            _play_out(S, hands, sizes, seq, -1, policy, unseen, n_unseen, reply)
            margin[row] += S[0, PEG] - S[0, PEG + 1]
    return margin / sims


def keep_pegging(hand6: tuple[int, ...], keeps: list[tuple[int, ...]],
                 unseen: np.ndarray | list[int], dealer: bool, sims: int = 200, seed: int = 0,
                 policy: int = POLICY_TACTICS, model: bool = True) -> np.ndarray:
    """Mean (own - opponent's) pegging points of a whole play for each kept four of ``hand6``,
    the opponent's cards and the starter drawn from ``unseen`` (the pone leads)."""
    discards = [[c for c in hand6 if c not in keep] for keep in keeps]
    return _deal_rollouts(np.array(keeps, dtype=np.int64), np.array(discards, dtype=np.int64),
                          np.asarray(unseen, dtype=np.int64), dealer, sims, seed, policy, model,
                          _CRIB_BY_RANKS, _SPLIT_KEEP, _SPLIT_PAIR)
