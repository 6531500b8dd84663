"""Random count sequences for the pegging-score tests (imported by test modules)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from crib_env.cards import VALUE
from crib_env.rules import COUNT_LIMIT


def random_count_sequences(rng: np.random.Generator, total: int) -> Iterator[tuple[list[int], int]]:
    """``total`` (cards, count) pairs: every prefix of shuffled decks that keeps the count at 31
    or under, so each sequence is one a play could reach."""
    made = 0
    while True:
        seq, count = [], 0
        for card in rng.permutation(52)[:8]:
            if count + VALUE[card] > COUNT_LIMIT:
                break
            seq.append(int(card))
            count += VALUE[card]
            yield list(seq), count
            made += 1
            if made == total:
                return
