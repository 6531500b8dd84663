"""Interval estimates used by the evaluator and the tournament (numpy only, no scipy).

All intervals are two-sided 95% intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054  # the 97.5% point of the standard normal


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / trials``.

    Unlike the normal ("Wald") interval it stays inside [0, 1] and keeps its coverage near 0 and 1,
    which matters for lopsided matches (greedy against random wins 95%+).
    """
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..{trials}, got {successes}")
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], limits: tuple[float, float] | None = None,
                  z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: normal-approximation interval with the sample standard deviation.

    ``limits`` (if given) is the range the values can take: the interval is clipped to it, and with
    a single value (no spread to estimate) the interval is that whole range.
    """
    n = len(values)
    if n == 0:
        raise ValueError("mean_interval needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        lo, hi = limits if limits is not None else (-math.inf, math.inf)
        return mean, float(lo), float(hi)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    lo, hi = mean - half, mean + half
    if limits is not None:
        lo, hi = max(lo, limits[0]), min(hi, limits[1])
    return mean, lo, hi
