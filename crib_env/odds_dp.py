"""The win-odds dynamic program: from a library of deal traces to P(win) for every board position.

A deal trace (``agents.odds_games``) is one deal's scoring events in the order of the rules, as
signed ints: ``+k`` the dealer pegs ``k``, ``-k`` the pone pegs ``k``; 0 pads the end. Let
``V[x, y]`` be the chance that the dealer of the coming deal, on ``x`` points, beats the pone on
``y``. Applying trace ``t`` to ``(x, y)`` event by event:

* the dealer reaches the target first (``x + dealer's running total >= target`` before the pone's
  running total reaches ``target - y``): the dealer wins, 1;
* the pone reaches it first: 0;
* neither: the next deal starts from ``(x + D_t, y + P_t)`` with the roles swapped, and the old
  dealer wins with ``1 - V[y + P_t, x + D_t]`` (both sides play the same strategy, so the table of
  the new dealer is the same ``V``).

``V[x, y]`` is the mean over the traces. Every deal scores at least one point (the last card or a
31), so each cell depends only on cells with a larger ``x + y``: the program fills anti-diagonals
from ``x + y = 2 * (target - 1)`` down to 0, each cell's traces in one compiled loop.

The table of the public contract, ``win[a, b, d]`` = P(the player on ``a`` beats the one on ``b``),
``d = 1`` if that player deals next, is ``win[a, b, 1] = V[a, b]`` and ``win[a, b, 0] = 1 - V[b, a]``.

Standard error: the traces are split into ``batches`` equal parts, the program is solved on each
part alone, and the standard error of the whole-library table is taken as the standard deviation
of the part tables over ``sqrt(batches)`` (batch means: it carries the error of every later deal
through the recursion, which a one-step variance would miss).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange

NEVER = 255  # "this side never reaches that need within the trace"


@njit(cache=True)
def _first_reach(events, target):
    """For each trace: the index of the event at which the dealer's (``dealer[n, t]``) and the
    pone's (``pone[n, t]``) running totals first reach ``n`` points (n = 1 .. target; NEVER if not),
    and each side's total. Need-major so that one cell reads two contiguous rows."""
    n_traces, n_events = events.shape
    dealer = np.full((target + 1, n_traces), NEVER, dtype=np.uint8)
    pone = np.full((target + 1, n_traces), NEVER, dtype=np.uint8)
    dealer_total = np.zeros(n_traces, dtype=np.int64)
    pone_total = np.zeros(n_traces, dtype=np.int64)
    for t in range(n_traces):
        d = 0
        p = 0
        for k in range(n_events):
            e = events[t, k]
            if e > 0:
                for n in range(d + 1, min(d + e, target) + 1):
                    dealer[n, t] = k
                d += e
            elif e < 0:
                for n in range(p + 1, min(p - e, target) + 1):
                    pone[n, t] = k
                p -= e
        dealer_total[t] = d
        pone_total[t] = p
    return dealer, pone, dealer_total, pone_total


@njit(cache=True, parallel=True)
def _solve(dealer, pone, dealer_total, pone_total, target):
    """``V`` (float64 (target, target)) by anti-diagonals, high scores first."""
    V = np.zeros((target, target))
    n_traces = dealer_total.size
    for s in range(2 * (target - 1), -1, -1):
        lo = max(0, s - (target - 1))
        hi = min(s, target - 1)
        for x in prange(lo, hi + 1):
            y = s - x
            need_d = target - x
            need_p = target - y
            row_d = dealer[need_d]
            row_p = pone[need_p]
            total = 0.0
            for t in range(n_traces):
                kd = row_d[t]
                kp = row_p[t]
                if kd < kp:
                    total += 1.0
                elif kp == NEVER:  # kd >= kp == NEVER: neither reached the target
                    total += 1.0 - V[y + pone_total[t], x + dealer_total[t]]
            V[x, y] = total / n_traces
    return V


def dealer_table(events: np.ndarray, target: int = 121) -> np.ndarray:
    """``V[x, y]`` (see the module docstring) from traces ``events`` (int (n, k), signed events)."""
    events = np.ascontiguousarray(events, dtype=np.int64)
    if events.ndim != 2 or events.shape[0] == 0:
        raise ValueError(f"events must be a non-empty (traces, events) array, got shape {events.shape}")
    if events.shape[1] >= NEVER:
        raise ValueError(f"a trace may hold at most {NEVER - 1} events, got {events.shape[1]}")
    if not ((events != 0).any(axis=1)).all():
        raise ValueError("every trace must score at least one point (a deal always does)")
    if target < 1:
        raise ValueError(f"target must be a positive score, got {target}")
    return _solve(*_first_reach(events, target), target)


def win_from_dealer(V: np.ndarray) -> np.ndarray:
    """``win[a, b, d]`` from ``V``: ``win[a, b, 1] = V[a, b]``, ``win[a, b, 0] = 1 - V[b, a]``."""
    return np.stack([1.0 - V.T, V], axis=-1)


def build_table(events: np.ndarray, target: int = 121, batches: int = 16,
                progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(win, stderr)``, both float64 (target, target, 2): the table from all traces and its
    batch-means standard error (``batches`` parts; see the module docstring). ``progress(k)`` is
    called after each of the ``batches + 1`` programs."""
    if batches < 2:
        raise ValueError(f"batches must be >= 2 to estimate a standard error, got {batches}")
    if len(events) < batches:
        raise ValueError(f"need at least {batches} traces for {batches} batches, got {len(events)}")
    parts = []
    for part in np.array_split(np.asarray(events), batches):
        parts.append(win_from_dealer(dealer_table(part, target)))
        if progress:
            progress(1)
    win = win_from_dealer(dealer_table(events, target))
    if progress:
        progress(1)
    stderr = np.std(np.stack(parts), axis=0, ddof=1) / np.sqrt(batches)
    return win, stderr
