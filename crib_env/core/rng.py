"""Random numbers of the compiled core: splitmix64, one stream per game row (column ``RNG``), so
copying a row copies its future deals and random moves too."""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import RNG


@njit(cache=True)
def _mix(z):
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _next_random(S, b):
    state = np.uint64(S[b, RNG]) + np.uint64(0x9E3779B97F4A7C15)
    S[b, RNG] = np.int64(state)
    return _mix(state)


@njit(cache=True)
def rand_below(S, b, n):
    """A uniform int in [0, n) from row ``b``'s random stream (n < 2**31)."""
    return np.int64(((_next_random(S, b) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def seed_row(S, b, seed):
    """Seed row ``b``'s random stream from an int (different seeds give unrelated streams)."""
    S[b, RNG] = np.int64(_mix(np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
                              + np.uint64(0x2545F4914F6CDD1D)))
