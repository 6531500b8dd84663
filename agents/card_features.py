"""Per-card decision features computed from ``(observation, action_mask)`` alone.

A learned policy that scores each of the 52 actions can learn far faster when every card carries a
few numbers a cribbage player would work out before moving. They are a pure function of what the
player may see (the observation and the mask), so the same function runs inside the training
environment and inside ``LearnedAgent.act``; ``FEATURES_VERSION`` is stored in every checkpoint that
uses them and bumped whenever their meaning changes.

Row ``c`` of ``card_features(obs, mask)`` (shape ``(52, N_CARD_FEATURES)``, float32), zero for
cards that are not legal actions:

| column         | discard phase                                                            |
|----------------|--------------------------------------------------------------------------|
| legal          | 1 if the mask allows card ``c``                                          |
| keep_ev        | expected show points of the kept four, over every starter still unseen,  |
|                | for the best discard that includes ``c`` (/ 10)                          |
| crib_ev        | expected crib points of that discard pair (table), signed + when dealing |
|                | and - when not (/ 10)                                                    |
| total_ev       | keep_ev + crib_ev (/ 10)                                                 |
| total_regret   | total_ev minus the best total_ev over the legal cards (<= 0, / 5)        |
| is_best        | 1 if ``c`` belongs to the best discard by total_ev                       |

| column         | play phase                                                               |
|----------------|--------------------------------------------------------------------------|
| peg_points     | points the card scores now: 15, 31, pairs, runs (/ 4)                    |
| new_count      | the count after laying it (/ 31)                                         |
| leaves_5_21    | 1 if it leaves the count at 5 or 21 (a ten card then makes 15 or 31)     |
| reply_mean     | mean points of the opponent's reply over the unseen cards (/ 2)          |
| reply_risk     | chance that the opponent holds at least one scoring reply                |
| is_best_peg    | 1 if no legal card scores more now                                       |

``card_features`` is the reference, in Python, one decision at a time.
``agents.card_features_kernels.card_features_batch`` computes the same rows for many decisions in
one compiled call, float32-equal to it row by row; use it wherever decisions come in batches (the
compiled training envs, ``LearnedAgent.act_batch``). This module never loads numba, so one-row
users (the Python envs, scripted tools) do not either.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np

from crib_env.cards import N_CARDS, N_RANKS, RANK, VALUE
from crib_env.game import Phase
from crib_env.observation import COUNT_SCALE, decode
from crib_env.rules import card_fits, count_after, count_restarts, ten_card_scores_at
from crib_env.scoring import play_points_of, score_hands

FEATURES_VERSION = 1
FEATURE_NAMES = ("legal", "keep_ev", "crib_ev", "total_ev", "total_regret", "is_best",
                 "peg_points", "new_count", "leaves_5_21", "reply_mean", "reply_risk",
                 "is_best_peg")
N_CARD_FEATURES = len(FEATURE_NAMES)
_COL = {name: i for i, name in enumerate(FEATURE_NAMES)}
#: ``peg_points`` is the points the card scores now over this
PEG_POINTS_SCALE = 4.0
_CRIB_SAMPLES = 4000  # Monte Carlo samples per discard rank pair for the crib table


@lru_cache(maxsize=1)
def crib_table() -> np.ndarray:
    """Expected crib points (13 x 13, by the two discards' ranks) when the other two crib cards and
    the starter are random: a fixed-seed Monte Carlo estimate, computed once (about a second).

    The exact crib is ``crib_env.expected.expected_cribs``; this estimate is within 0.11 points of
    it for two discards of different suits (mean error 0.04; ``tests/test_analysis.py``). It stays
    a sample, not the exact value, because its numbers are part of ``FEATURES_VERSION`` 1, which
    trained checkpoints were fitted to."""
    rng = np.random.default_rng(20240601)
    table = np.zeros((N_RANKS, N_RANKS))
    for r1 in range(N_RANKS):
        for r2 in range(r1, N_RANKS):
            # Suits: different ones (a same-suit pair is rare to matter; flushes need all five).
            c1, c2 = r1, N_RANKS + r2
            rest = np.array([c for c in range(N_CARDS) if c not in (c1, c2)])
            picks = np.argsort(rng.random((_CRIB_SAMPLES, rest.size)), axis=1)[:, :3]
            others = rest[picks]
            hands = np.column_stack([np.full(_CRIB_SAMPLES, c1), np.full(_CRIB_SAMPLES, c2),
                                     others[:, 0], others[:, 1]])
            table[r1, r2] = table[r2, r1] = score_hands(hands, others[:, 2], crib=True).mean()
    return table


def _discard_features(out: np.ndarray, hand: tuple[int, ...], discards: tuple[int, ...],
                      legal: np.ndarray, is_dealer: bool) -> None:
    seen = set(hand) | set(discards)
    starters = np.array([c for c in range(N_CARDS) if c not in seen])
    if discards:  # the second discard: the pair is the first discard plus this card
        options = [((c,), (discards[0], c)) for c in legal]
    else:
        options = [((c, d), (c, d)) for c, d in combinations(hand, 2)]
    keeps = np.array([[k for k in hand if k not in away] for away, _ in options])
    n = starters.size
    evs = score_hands(np.repeat(keeps, n, axis=0), np.tile(starters, len(options))) \
        .reshape(len(options), n).mean(axis=1)
    table = crib_table()
    sign = 1.0 if is_dealer else -1.0
    cribs = np.array([sign * table[RANK[a], RANK[b]] for _, (a, b) in options])
    totals = evs + cribs
    best_total = totals.max()
    best_cards = set(options[int(np.argmax(totals))][0])
    for c in legal:
        rows = [i for i, (away, _) in enumerate(options) if c in away]
        i = max(rows, key=lambda j: totals[j])
        out[c, _COL["keep_ev"]] = evs[i] / 10.0
        out[c, _COL["crib_ev"]] = cribs[i] / 10.0
        out[c, _COL["total_ev"]] = totals[i] / 10.0
        out[c, _COL["total_regret"]] = (totals[i] - best_total) / 5.0
        out[c, _COL["is_best"]] = float(c in best_cards)


def _play_features(out: np.ndarray, sequence: tuple[int, ...], count: int,
                   unseen: tuple[int, ...], opp_cards: int, legal: np.ndarray) -> None:
    # The opponent's reply depends on rank only: one representative card per unseen rank.
    rank_count = np.zeros(N_RANKS, dtype=int)
    card_of_rank: dict[int, int] = {}
    for u in unseen:
        rank_count[RANK[u]] += 1
        card_of_rank.setdefault(RANK[u], u)
    n_unseen = max(len(unseen), 1)
    points = {}
    for c in legal:
        line = [*sequence, c]
        pts = play_points_of(line)
        points[c] = pts
        new_count = count_after(count, VALUE[c])
        total_reply, scoring = 0.0, 0
        if not count_restarts(new_count):
            for rank, u in card_of_rank.items():
                if card_fits(u, new_count):
                    reply = play_points_of([*line, u])
                    total_reply += reply * rank_count[rank]
                    scoring += rank_count[rank] * (reply > 0)
        p = scoring / n_unseen
        out[c, _COL["peg_points"]] = pts / PEG_POINTS_SCALE
        out[c, _COL["new_count"]] = new_count / COUNT_SCALE
        out[c, _COL["leaves_5_21"]] = float(ten_card_scores_at(new_count))
        out[c, _COL["reply_mean"]] = total_reply / n_unseen / 2.0
        out[c, _COL["reply_risk"]] = 1.0 - (1.0 - p) ** opp_cards if opp_cards else 0.0
    best = max(points.values())
    for c, pts in points.items():
        out[c, _COL["is_best_peg"]] = float(pts == best)


def card_features(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    """The ``(52, N_CARD_FEATURES)`` float32 feature rows described in the module docstring."""
    out = np.zeros((N_CARDS, N_CARD_FEATURES), dtype=np.float32)
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        return out
    out[legal, _COL["legal"]] = 1.0
    view = decode(observation)
    if view.phase == Phase.DISCARD and len(view.hand) >= 5:
        _discard_features(out, view.hand, view.discards, legal, view.is_dealer)
    elif view.phase == Phase.PLAY:
        _play_features(out, view.sequence, view.count, view.unseen, view.opp_cards_left, legal)
    return out
