"""Differential check of the compiled core (``crib_env.fast``) against the plain engine (``Game``).

Random-legal games are played by the plain engine; their deals and moves are then replayed by
``fast.replay_games`` and the two are compared after every move (scores, back pegs, player to move,
count, phase, dealer, sequence length, go flags, legal cards, winner, deal number) and deal by deal
(pegging, heels, hand and crib points). Used by ``tests/test_fast_differential.py`` and, at a
larger size, by ``bench/bench_differential.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from . import fast
from .game import Game

#: targets mixed into the check so that games also end early: on heels, mid-play and mid-show
CHECK_TARGETS = (121, 121, 61, 31, 15)


@dataclass
class ReferenceGames:
    """Plain-engine games in the flat form ``fast.replay_games`` takes, with the expected results."""

    first_dealers: np.ndarray
    targets: np.ndarray
    deal_start: np.ndarray
    deals: np.ndarray
    action_start: np.ndarray
    actions: np.ndarray
    trace: np.ndarray  # expected, one row per move, columns fast.TRACE_FIELDS
    records: np.ndarray  # expected, one row per deal, columns fast.DEAL_FIELDS

    @property
    def n_games(self) -> int:
        return len(self.first_dealers)


def _bits(cards) -> int:
    bits = 0
    for c in cards:
        bits |= 1 << c
    return bits


def _trace_row(g: Game) -> tuple[int, ...]:
    return (g.scores[0], g.scores[1], g.prev_scores[0], g.prev_scores[1], g.to_move, g.count,
            int(g.phase), g.dealer, len(g.sequence), int(g.said_go[0]), int(g.said_go[1]),
            _bits(g.legal_actions()), -1 if g.winner is None else g.winner, len(g.records))


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
            trace.append(_trace_row(g))
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
                          arr(deals, (-1, 13)), arr(action_start), arr(actions),
                          arr(trace, (-1, len(fast.TRACE_FIELDS))),
                          arr(records, (-1, len(fast.DEAL_FIELDS))))


def compare(ref: ReferenceGames) -> list[str]:
    """Replay ``ref`` through the compiled core; returns the disagreements (empty when none)."""
    trace, records, errors = fast.replay_games(ref.first_dealers, ref.targets, ref.deal_start,
                                               ref.deals, ref.action_start, ref.actions)
    problems = []
    for g in np.flatnonzero(errors >= 0)[:5]:
        problems.append(f"game {g}: move {errors[g] - ref.action_start[g]} "
                        f"(card {ref.actions[errors[g]]}) rejected by the fast core")
    bad_rows = np.flatnonzero((trace != ref.trace).any(axis=1))
    for t in bad_rows[:5]:
        g = int(np.searchsorted(ref.action_start, t, side="right") - 1)
        cols = np.flatnonzero(trace[t] != ref.trace[t])
        diffs = ", ".join(f"{fast.TRACE_FIELDS[c]}: fast {trace[t, c]} vs plain {ref.trace[t, c]}"
                          for c in cols)
        problems.append(f"game {g}, move {t - ref.action_start[g]}: {diffs}")
    bad_deals = np.flatnonzero((records != ref.records).any(axis=1))
    for d in bad_deals[:5]:
        problems.append(f"deal row {d}: fast {records[d].tolist()} vs plain {ref.records[d].tolist()}"
                        f" ({', '.join(fast.DEAL_FIELDS)})")
    if len(bad_rows) > 5 or len(bad_deals) > 5:
        problems.append(f"... {len(bad_rows)} bad moves and {len(bad_deals)} bad deals in all")
    return problems
