"""``crib_env.rules``' functions compiled for numba kernels: the same functions, not copies.

Each name here is the rules module's function compiled with ``njit(cache=True, inline="always")``,
so a kernel that calls it gets the rule inlined into its own machine code, with the rules'
constants (``COUNT_LIMIT``, ``LAST_CARD_POINTS``...) frozen in as compile-time constants. Kernels
call these with counting values from their own value table (``cards.VALUE_ARRAY``).
"""

from __future__ import annotations

from numba import njit

from . import rules

_compiled = njit(cache=True, inline="always")

count_after = _compiled(rules.count_after)
fits = _compiled(rules.fits)
count_restarts = _compiled(rules.count_restarts)
ten_card_scores_at = _compiled(rules.ten_card_scores_at)
last_card_points = _compiled(rules.last_card_points)
fifteen_points = _compiled(rules.fifteen_points)
thirty_one_points = _compiled(rules.thirty_one_points)
set_points = _compiled(rules.set_points)
run_points = _compiled(rules.run_points)
flush_points = _compiled(rules.flush_points)
nobs_points = _compiled(rules.nobs_points)
heels_points = _compiled(rules.heels_points)
