"""Chances to win shown to the person: from the start of a deal (the packaged win-odds table,
``crib odds``), and for each throw of a six-card hand at a board position (the rest of the deal
simulated, then the table: ``crib analyze --score``, the page's "What is each choice worth?", the
game review)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from crib_env.game import DEFAULT_TARGET

#: simulations of the rest of the deal per throw: a standard error of about 1.1% a throw, the
#: differences between throws much closer (every throw is played on the same sampled deals)
THROW_SIMS = 2000
#: the page's and the terminal's "what is each choice worth?": an answer within a second or two
ANALYSIS_SIMS = 1000
MAX_THROW_SIMS = 100_000  # about two minutes of one core for the 15 throws


def win_chance(score: int, opponent_score: int, dealer: bool,
               target: int) -> tuple[float | None, str | None]:
    """The chance that the side on ``score`` wins a game to ``target`` from a deal that side deals
    (``dealer``) or not, from the packaged win-odds table (``crib odds``), and why not where it
    cannot say: the table is for games to 121, and a missing or corrupt table is never guessed."""
    from crib_env.odds import OddsTableError, default_table

    if target != 121:
        return None, f"unavailable: the win-odds table is for games to 121, not {target}"
    try:
        return default_table().win_probability(score, opponent_score, dealer), None
    except OddsTableError as err:
        return None, f"unavailable: {err}"


class ThrowChance(NamedTuple):
    """A throw's chance to win after the simulated rest of the deal, and its standard error."""

    chance: float
    stderr: float


def check_board(score: int, opponent_score: int, target: int = DEFAULT_TARGET) -> None:
    """``ValueError`` naming the problem unless both scores are whole numbers a game to
    ``target`` can be at before a deal (0..target - 1: at the target the game is over)."""
    for name, value in (("your score", score), ("the opponent's score", opponent_score)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"--score: {name} must be a whole number, got {value!r}")
        if not 0 <= value < target:
            raise ValueError(f"--score: {name} must be 0..{target - 1} in a game to {target} (at "
                             f"{target} the game is won), got {value}")


def check_sims(sims: int) -> None:
    if isinstance(sims, bool) or not isinstance(sims, int) or not 2 <= sims <= MAX_THROW_SIMS:
        raise ValueError(f"--sims must be a whole number 2..{MAX_THROW_SIMS:,}, got {sims!r}")


def throw_win_chances(hand6: Sequence[int], dealer: bool, score: int, opponent_score: int,
                      target: int = DEFAULT_TARGET, sims: int = THROW_SIMS,
                      seed: int = 0) -> dict[frozenset, ThrowChance]:
    """Each throw of ``hand6`` (card ids) by the thrown pair: the chance to win from ``score`` to
    ``opponent_score`` after the rest of the deal is simulated ``sims`` times from that throw
    (``agents.rollout.keep_win_chances``: the opponent's six drawn from the unseen cards and kept
    as an expected-value player keeps them, the starter cut, both sides pegging by the standard
    tactics, the show counted), then read from the win-odds table at the scores the deal ends on.
    The scores and ``sims`` are checked first (``ValueError``)."""
    from agents.analysis import discard_table
    from agents.rollout import keep_win_chances

    check_board(score, opponent_score, target)
    check_sims(sims)
    table = discard_table(sorted(hand6))
    keeps = [table.keep(i) for i in range(len(table.hand_points))]
    chance, stderr = keep_win_chances(table.hand6, keeps, table.unseen, dealer, score,
                                      opponent_score, target, sims, seed)
    return {frozenset(table.discard(i)): ThrowChance(float(chance[i]), float(stderr[i]))
            for i in range(len(keeps))}
