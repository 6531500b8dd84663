"""Greedy: keep the four cards worth the most on their own; peg the card that scores most now.

"On their own" is the show count of the four kept cards without a starter: fifteens, pairs, runs
and a four-card flush. The crib is ignored. Ties are broken at random (seeded).
"""

from __future__ import annotations

from itertools import combinations

from crib_env.cards import RANK, SUIT, VALUE
from crib_env.observation import ObservationView

from .pegging import peg_points
from .scripted import ScriptedAgent


def points_on_their_own(cards: tuple[int, ...] | list[int]) -> int:
    """Show points of cards counted without a starter: fifteens, pairs, runs, a 4-card flush."""
    values = [VALUE[c] for c in cards]
    fifteens = sum(1 for n in range(2, len(cards) + 1)
                   for combo in combinations(values, n) if sum(combo) == 15)
    counts = [0] * 13
    for c in cards:
        counts[RANK[c]] += 1
    pairs = sum(n * (n - 1) for n in counts)
    runs, start = 0, 0
    while start < 13:
        if not counts[start]:
            start += 1
            continue
        end, ways = start, 1
        while end < 13 and counts[end]:
            ways *= counts[end]
            end += 1
        if end - start >= 3:
            runs += (end - start) * ways
        start = end
    flush = len(cards) if len(cards) >= 4 and len({SUIT[c] for c in cards}) == 1 else 0
    return 2 * fifteens + pairs + runs + flush


class GreedyAgent(ScriptedAgent):
    name = "greedy"

    def choose_discard(self, view: ObservationView, hand6: tuple[int, ...]) -> tuple[int, int]:
        pairs = [p for p in combinations(hand6, 2) if set(view.discards) <= set(p)]
        worth = [points_on_their_own([c for c in hand6 if c not in p]) for p in pairs]
        best = [p for p, w in zip(pairs, worth, strict=True) if w == max(worth)]
        return best[int(self.rng.integers(len(best)))]

    def choose_play(self, view: ObservationView, legal: list[int]) -> int:
        seq = tuple(RANK[c] for c in view.sequence)
        points = [peg_points(seq + (RANK[c],), view.count + VALUE[c]) for c in legal]
        best = [c for c, p in zip(legal, points, strict=True) if p == max(points)]
        return best[int(self.rng.integers(len(best)))]
