"""Cards as bitmasks (bit ``c`` set = card id ``c``): the kernels' helpers and the Python
conversions."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ..cards import N_CARDS


@njit(cache=True)
def low_card(bits):
    return np.int64(trailing_zeros(np.uint64(bits)))


@njit(cache=True)
def nth_card(bits, n):
    """The ``n``-th lowest card id (0-based) in the bitmask ``bits``."""
    for _ in range(n):
        bits &= bits - 1
    return low_card(bits)


@njit(cache=True)
def popcount(bits):
    n = 0
    while bits:
        bits &= bits - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def four_cards(bits):
    """The four lowest card ids of the bitmask ``bits``, ascending (a kept hand's four cards).
    Inlined into its callers (numba IR inlining) so that ``show_points`` stays one flat kernel."""
    c0 = low_card(bits)
    bits &= bits - 1
    c1 = low_card(bits)
    bits &= bits - 1
    c2 = low_card(bits)
    bits &= bits - 1
    return c0, c1, c2, low_card(bits)


def bits_of(cards) -> int:
    """Bitmask of an iterable of card ids."""
    bits = 0
    for c in cards:
        bits |= 1 << int(c)
    return bits


def cards_of(bits: int) -> list[int]:
    """Card ids in a bitmask, ascending."""
    bits = int(bits)
    return [c for c in range(N_CARDS) if bits >> c & 1]
