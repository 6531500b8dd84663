"""Differential check of the compiled core (``crib_env.fast``) against the plain engine (``Game``).

Test and bench support, not used at run time. Random-legal games are played by the plain engine;
their deals and moves are then replayed on the compiled core by ``replay_games`` (a kernel that
traces the state after every move) and the two are compared after every move (scores, back pegs,
player to move, count, phase, dealer, sequence length, go flags, legal cards, winner, deal number)
and deal by deal (pegging, heels, hand and crib points). Used by ``tests/test_fast_differential.py``
and, at a larger size, by ``bench/bench_differential.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from numba import njit

from crib_env import fast
from crib_env.fast import (
    COMPLETED,
    COUNT,
    CRIB_PTS,
    DEAL_NO,
    DEALER,
    FIRST_DEALER,
    HAND_PTS,
    HEELS_PTS,
    OK,
    P_DEAL_OVER,
    P_GAME_OVER,
    PEG,
    PHASE,
    PREV,
    SAID_GO,
    SCORE,
    SEQ_LEN,
    TARGET,
    TO_MOVE,
    WINNER,
    apply_action,
    legal_bits,
    new_state,
    random_deal,
    set_deal,
)
from crib_env.game import HAND_SIZE, Game

#: cards of one deal: player 0's six, player 1's six, the starter
DEAL_CARDS = 2 * HAND_SIZE + 1

# -- replay of recorded games on the compiled core ---------------------------------------------

#: columns of the per-step trace of replay_games
TRACE_FIELDS = ("score0", "score1", "prev0", "prev1", "to_move", "count", "phase", "dealer",
                "seq_len", "said_go0", "said_go1", "legal_bits", "winner", "deal_no")
#: columns of the per-deal record of replay_games
DEAL_FIELDS = ("peg0", "peg1", "heels", "hand0", "hand1", "crib", "completed")


@njit(cache=True)
def _trace_row(S, out):
    out[0] = S[0, SCORE]
    out[1] = S[0, SCORE + 1]
    out[2] = S[0, PREV]
    out[3] = S[0, PREV + 1]
    out[4] = S[0, TO_MOVE]
    out[5] = S[0, COUNT]
    out[6] = S[0, PHASE]
    out[7] = S[0, DEALER]
    out[8] = S[0, SEQ_LEN]
    out[9] = S[0, SAID_GO]
    out[10] = S[0, SAID_GO + 1]
    out[11] = legal_bits(S, 0)
    out[12] = S[0, WINNER]
    out[13] = S[0, DEAL_NO]


@njit(cache=True)
def _record_deal(S, out):
    out[0] = S[0, PEG]
    out[1] = S[0, PEG + 1]
    out[2] = S[0, HEELS_PTS]
    out[3] = S[0, HAND_PTS]
    out[4] = S[0, HAND_PTS + 1]
    out[5] = S[0, CRIB_PTS]
    out[6] = S[0, COMPLETED]


@njit(cache=True)
def replay_games(first_dealers, targets, deal_start, deals, action_start, actions):
    """Replay G games with scripted deals and recorded moves.

    Game ``g`` has dealer ``first_dealers[g]``, target ``targets[g]``, deals
    ``deals[deal_start[g]:deal_start[g + 1]]`` (rows of ``DEAL_CARDS`` card ids: player 0's six,
    player 1's six, the starter) used in order, and moves ``actions[action_start[g]:action_start[g + 1]]``.
    Returns (trace int64 (len(actions), len(TRACE_FIELDS)): the state after every move,
    records int64 (len(deals), len(DEAL_FIELDS)): points credited per deal (-1 rows for deals never
    reached), errors int64 (G,): index of the first illegal move or -1).
    """
    G = first_dealers.shape[0]
    trace = np.zeros((actions.shape[0], len(TRACE_FIELDS)), dtype=np.int64)
    records = np.full((deals.shape[0], len(DEAL_FIELDS)), -1, dtype=np.int64)
    errors = np.full(G, -1, dtype=np.int64)
    S = new_state(1)
    for g in range(G):
        S[0, :] = 0
        S[0, TARGET] = targets[g]
        S[0, WINNER] = -1
        S[0, DEALER] = first_dealers[g]
        S[0, FIRST_DEALER] = first_dealers[g]
        d = deal_start[g]
        _scripted_deal(S, deals[d])
        for t in range(action_start[g], action_start[g + 1]):
            if apply_action(S, 0, actions[t]) != OK:
                errors[g] = t
                break
            phase = S[0, PHASE]
            if phase == P_DEAL_OVER or phase == P_GAME_OVER:
                _record_deal(S, records[d])
            if phase == P_DEAL_OVER:
                d += 1
                S[0, DEALER] = 1 - S[0, DEALER]
                if d < deal_start[g + 1]:
                    _scripted_deal(S, deals[d])
                else:
                    random_deal(S, 0)
            _trace_row(S, trace[t])
    return trace, records, errors


@njit(cache=True)
def _scripted_deal(S, cards):
    hand0 = np.int64(0)
    hand1 = np.int64(0)
    for i in range(HAND_SIZE):
        hand0 |= np.int64(1) << cards[i]
        hand1 |= np.int64(1) << cards[HAND_SIZE + i]
    set_deal(S, 0, hand0, hand1, cards[2 * HAND_SIZE])


#: targets mixed into the check so that games also end early: on heels, mid-play and mid-show
CHECK_TARGETS = (121, 121, 61, 31, 15)


@dataclass
class ReferenceGames:
    """Plain-engine games in the flat form ``replay_games`` takes, with the expected results."""

    first_dealers: np.ndarray
    targets: np.ndarray
    deal_start: np.ndarray
    deals: np.ndarray
    action_start: np.ndarray
    actions: np.ndarray
    trace: np.ndarray  # expected, one row per move, columns TRACE_FIELDS
    records: np.ndarray  # expected, one row per deal, columns DEAL_FIELDS

    @property
    def n_games(self) -> int:
        return len(self.first_dealers)


def _game_trace_row(g: Game) -> tuple[int, ...]:
    return (g.scores[0], g.scores[1], g.prev_scores[0], g.prev_scores[1], g.to_move, g.count,
            int(g.phase), g.dealer, len(g.sequence), int(g.said_go[0]), int(g.said_go[1]),
            fast.bits_of(g.legal_actions()), -1 if g.winner is None else g.winner, len(g.records))


def play_reference_games(n: int, seed: int = 0,
                         targets: tuple[int, ...] = CHECK_TARGETS) -> ReferenceGames:
    """Play ``n`` random-legal games with the plain engine (game ``i``: engine seed ``seed + i``,
    target ``targets[i % len(targets)]``, moves from ``random.Random(seed)``), recording everything."""
    rng = random.Random(seed)
    first_dealers, game_targets, deal_start, action_start = [], [], [0], [0]
    deals: list[tuple[int, ...]] = []
    actions: list[int] = []
    trace: list[tuple[int, ...]] = []
    records: list[tuple[int, ...]] = []
    for i in range(n):
        target = targets[i % len(targets)]
        g = Game(target=target, seed=seed + i)
        while not g.is_over:
            legal = g.legal_actions()
            card = legal[rng.randrange(len(legal))]
            g.step(card)
            actions.append(card)
            trace.append(_game_trace_row(g))
        first_dealers.append(g.records[0].dealer)
        game_targets.append(target)
        for rec in g.records:
            deals.append((*rec.hands[0], *rec.hands[1], rec.starter))
            records.append((rec.pegging[0], rec.pegging[1], rec.heels, rec.hand[0], rec.hand[1],
                            rec.crib, int(rec.completed)))
        deal_start.append(len(deals))
        action_start.append(len(actions))

    def arr(x, shape=None):
        return np.array(x, dtype=np.int64).reshape(shape) if shape else np.array(x, dtype=np.int64)

    return ReferenceGames(arr(first_dealers), arr(game_targets), arr(deal_start),
                          arr(deals, (-1, DEAL_CARDS)), arr(action_start), arr(actions),
                          arr(trace, (-1, len(TRACE_FIELDS))),
                          arr(records, (-1, len(DEAL_FIELDS))))


def compare(ref: ReferenceGames) -> list[str]:
    """Replay ``ref`` through the compiled core; returns the disagreements (empty when none)."""
    trace, records, errors = replay_games(ref.first_dealers, ref.targets, ref.deal_start,
                                          ref.deals, ref.action_start, ref.actions)
    problems = []
    for g in np.flatnonzero(errors >= 0)[:5]:
        problems.append(f"game {g}: move {errors[g] - ref.action_start[g]} "
                        f"(card {ref.actions[errors[g]]}) rejected by the fast core")
    bad_rows = np.flatnonzero((trace != ref.trace).any(axis=1))
    for t in bad_rows[:5]:
        g = int(np.searchsorted(ref.action_start, t, side="right") - 1)
        cols = np.flatnonzero(trace[t] != ref.trace[t])
        diffs = ", ".join(f"{TRACE_FIELDS[c]}: fast {trace[t, c]} vs plain {ref.trace[t, c]}"
                          for c in cols)
        problems.append(f"game {g}, move {t - ref.action_start[g]}: {diffs}")
    bad_deals = np.flatnonzero((records != ref.records).any(axis=1))
    for d in bad_deals[:5]:
        problems.append(f"deal row {d}: fast {records[d].tolist()} vs plain {ref.records[d].tolist()}"
                        f" ({', '.join(DEAL_FIELDS)})")
    if len(bad_rows) > 5 or len(bad_deals) > 5:
        problems.append(f"... {len(bad_rows)} bad moves and {len(bad_deals)} bad deals in all")
    return problems
