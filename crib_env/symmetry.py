"""Suit relabelling: the rules never name a suit, they only ask whether suits are equal (a flush,
nobs, his heels), so renaming the four suits the same way in every card of a game changes no
score, no legal card and no outcome. A decision seen through any of the 24 renamings is the same
decision; training uses that to learn from each recorded decision in several equivalent forms.

Card ids are ``suit * 13 + rank`` (``crib_env.cards``); the observation's card slices are the
52-wide blocks of ``crib_env.observation.LAYOUT``.
"""

from __future__ import annotations

import itertools

import numpy as np

from .cards import N_CARDS, N_RANKS, N_SUITS
from .observation import LAYOUT, OBS_SIZE, SLICES

#: the 24 orders of the suits: renaming ``p`` sends suit ``s`` to ``SUIT_ORDERS[p][s]``
SUIT_ORDERS = np.array(list(itertools.permutations(range(N_SUITS))), dtype=np.int64)
N_RENAMINGS = len(SUIT_ORDERS)

#: CARD_MAP[p, c]: card ``c``'s id under renaming ``p``
CARD_MAP = (SUIT_ORDERS[:, np.arange(N_CARDS) // N_RANKS] * N_RANKS
            + np.arange(N_CARDS) % N_RANKS)
#: CARD_SOURCE[p, d]: the card that renaming ``p`` turns into ``d`` (the inverse of CARD_MAP)
CARD_SOURCE = np.argsort(CARD_MAP, axis=1)


def _observation_sources() -> np.ndarray:
    """OBS_SOURCE[p, i]: the entry of an observation that renaming ``p`` moves to entry ``i``;
    every 52-wide card block is relabelled, the scalar slices stay where they are."""
    sources = np.tile(np.arange(OBS_SIZE), (N_RENAMINGS, 1))
    for name, size in LAYOUT:
        if size % N_CARDS:
            continue
        for block in range(SLICES[name].start, SLICES[name].stop, N_CARDS):
            sources[:, block:block + N_CARDS] = block + CARD_SOURCE
    return sources


OBS_SOURCE = _observation_sources()


def rename_suits(renamings: np.ndarray, obs: np.ndarray, masks: np.ndarray,
                 cards: np.ndarray, values: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Rows of decisions seen through suit renamings, row ``k`` through ``renamings[k]`` (0..23;
    0 is the identity): observations (k, OBS_SIZE), legal-card masks (k, 52), the chosen cards
    (k,) and, where given, per-card values (k, 52). New arrays; the inputs are untouched."""
    renamings = np.asarray(renamings, dtype=np.int64)
    if renamings.shape != (len(obs),) or renamings.min(initial=0) < 0 \
            or renamings.max(initial=0) >= N_RENAMINGS:
        raise ValueError(f"renamings must be one index in 0..{N_RENAMINGS - 1} per row")
    source = CARD_SOURCE[renamings]
    return (np.take_along_axis(obs, OBS_SOURCE[renamings], axis=1),
            np.take_along_axis(masks, source, axis=1),
            CARD_MAP[renamings, np.asarray(cards, dtype=np.int64)],
            None if values is None else np.take_along_axis(values, source, axis=1))
