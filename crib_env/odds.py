"""Win odds: the chance to win from any board position, read from a table shipped with the package.

``win_probability(score, opponent_score, dealer)`` is P(the player on ``score`` beats the one on
``opponent_score``) at the start of a deal, ``dealer`` True if that player deals it, for two players
of the table's reference strategy (standard against standard). A score at the target has won
(1.0 / 0.0). The table (``crib_env/data/win_odds.npz``) is built by ``crib odds build``
(``training.odds``) from deal traces (``agents.odds_games``) by the dynamic program of
``crib_env.odds_dp``; each cell has its standard error next to it.

File format (numpy ``.npz``, read without pickle):

* ``header``: a JSON string: ``format`` ("crib-win-odds"), ``version`` (``FORMAT_VERSION``),
  ``target``, ``strategy``, ``traces``, ``seed``, ``batches``, ``stderr_method``, ``max_stderr``;
* ``win``: float32 (target, target, 2), ``win[a, b, d]``, ``d = 1`` if the player on ``a`` deals;
* ``stderr``: float32, same shape.

A missing or damaged file raises ``OddsTableError`` saying what is wrong: odds are never guessed.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "crib-win-odds"
FORMAT_VERSION = 1
DEFAULT_TABLE = Path(__file__).resolve().parent / "data" / "win_odds.npz"
_HEADER_KEYS = ("format", "version", "target", "strategy", "traces", "seed")


class OddsTableError(ValueError):
    """The win-odds table is missing or not a valid table."""


@dataclass(frozen=True)
class WinOdds:
    """A loaded table: ``win`` and ``stderr`` float (target, target, 2), the header as a dict."""

    win: np.ndarray
    stderr: np.ndarray
    header: dict[str, Any]

    @property
    def target(self) -> int:
        return int(self.header["target"])

    def _check(self, score: int, opponent_score: int) -> None:
        for name, value in (("score", score), ("opponent score", opponent_score)):
            if not 0 <= value <= self.target:
                raise ValueError(f"{name} must be in 0..{self.target}, got {value}")
        if score >= self.target and opponent_score >= self.target:
            raise ValueError(f"both scores are at the target {self.target}: only one side can win")

    def win_probability(self, score: int, opponent_score: int, dealer: bool) -> float:
        """P(win) for the player on ``score`` against ``opponent_score``, at the start of a deal
        that player deals if ``dealer``; 1.0 / 0.0 once a score has reached the target."""
        self._check(score, opponent_score)
        if score >= self.target:
            return 1.0
        if opponent_score >= self.target:
            return 0.0
        return float(self.win[score, opponent_score, int(bool(dealer))])

    def standard_error(self, score: int, opponent_score: int, dealer: bool) -> float:
        """The cell's standard error (0.0 for a decided position)."""
        self._check(score, opponent_score)
        if score >= self.target or opponent_score >= self.target:
            return 0.0
        return float(self.stderr[score, opponent_score, int(bool(dealer))])


def save_table(path: Path, win: np.ndarray, stderr: np.ndarray, header: dict[str, Any]) -> None:
    """Write a table file (creates the folder); ``header`` gets ``format``, ``version`` and
    ``max_stderr`` filled in."""
    header = {**header, "format": FORMAT, "version": FORMAT_VERSION,
              "target": int(win.shape[0]), "max_stderr": float(np.max(stderr))}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:  # a file object: savez would otherwise append ".npz" to the name
        np.savez_compressed(f, header=np.array(json.dumps(header, sort_keys=True)),
                            win=win.astype(np.float32), stderr=stderr.astype(np.float32))


def load_table(path: Path | str | None = None) -> WinOdds:
    """Read and check a table file (default: the packaged table). Raises ``OddsTableError``."""
    path = Path(path) if path is not None else DEFAULT_TABLE
    if not path.is_file():
        raise OddsTableError(f"win-odds table {path} not found; build it with `crib odds build`")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = {"header", "win", "stderr"} - set(data.files)
            if missing:
                raise OddsTableError(f"win-odds table {path} lacks {', '.join(sorted(missing))}")
            header = json.loads(str(data["header"]))
            win = np.array(data["win"], dtype=np.float64)
            stderr = np.array(data["stderr"], dtype=np.float64)
    except (OSError, ValueError, zipfile.BadZipFile, json.JSONDecodeError) as err:
        if isinstance(err, OddsTableError):
            raise
        raise OddsTableError(f"win-odds table {path} is not a readable table file: {err}") from err
    _validate(path, header, win, stderr)
    win.flags.writeable = False
    stderr.flags.writeable = False
    return WinOdds(win, stderr, header)


def _validate(path: Path, header: Any, win: np.ndarray, stderr: np.ndarray) -> None:
    if not isinstance(header, dict) or any(k not in header for k in _HEADER_KEYS):
        raise OddsTableError(f"win-odds table {path}: header must hold {', '.join(_HEADER_KEYS)}")
    if header["format"] != FORMAT or header["version"] != FORMAT_VERSION:
        raise OddsTableError(f"win-odds table {path}: format {header['format']!r} version "
                             f"{header['version']!r}, expected {FORMAT!r} version {FORMAT_VERSION}")
    target = header["target"]
    shape = (target, target, 2)
    if win.shape != shape or stderr.shape != shape:
        raise OddsTableError(f"win-odds table {path}: arrays of shape {win.shape} and "
                             f"{stderr.shape}, expected {shape} for target {target}")
    if not (np.isfinite(win).all() and ((win >= 0) & (win <= 1)).all()):
        raise OddsTableError(f"win-odds table {path}: probabilities outside 0..1 or not finite")
    if not (np.isfinite(stderr).all() and (stderr >= 0).all()):
        raise OddsTableError(f"win-odds table {path}: standard errors negative or not finite")
    # one deal's dealer is the other's pone: P(a beats b, a deals) + P(b beats a, b pone) = 1
    if np.abs(win[:, :, 1] + win[:, :, 0].T - 1.0).max() > 1e-5:
        raise OddsTableError(f"win-odds table {path}: the two players' chances do not add up to 1")


@lru_cache(maxsize=1)
def default_table() -> WinOdds:
    """The packaged table, loaded once."""
    return load_table(DEFAULT_TABLE)


def win_probability(score: int, opponent_score: int, dealer: bool) -> float:
    """``default_table().win_probability``: P(win) from the packaged table."""
    return default_table().win_probability(score, opponent_score, dealer)


@lru_cache(maxsize=1)
def _potential(path: Path) -> np.ndarray:
    table = load_table(path)
    t = table.target
    phi = np.zeros((t + 1, t + 1, 2))
    phi[:t, :t] = 2.0 * table.win - 1.0
    phi[t, :t] = 1.0  # a score at the target has won
    phi[:t, t] = -1.0
    phi.flags.writeable = False
    return phi


def winprob_potential(target: int, path: Path | None = None) -> np.ndarray:
    """The ``reward="winprob"`` potential: float64 (target + 1, target + 1, 2),
    ``phi[a, b, d] = 2 * P(win) - 1`` for the player on ``a`` against ``b`` (``d`` = 1 if that
    player deals the next deal), +1 / -1 once a score is at the target. Raises ``OddsTableError``
    without a table and ``ValueError`` if the table's target is not ``target``."""
    phi = _potential(Path(path) if path is not None else DEFAULT_TABLE)
    if phi.shape[0] - 1 != target:
        raise ValueError(f"reward='winprob' needs target_score {phi.shape[0] - 1} (the win-odds "
                         f"table's target), got {target}")
    return phi


def potential_of(phi: np.ndarray, own: int, opp: int, dealer: int, player: int) -> float:
    """``player``'s potential at scores ``own`` (its) and ``opp`` while ``dealer`` deals the deal
    in progress: the table's value as if the deal had just ended, so that ``player`` deals next
    when it is the pone now. It changes only when points are scored, or when a finished show deals
    on (the deal edge passes to the other side)."""
    return float(phi[own, opp, int(player != dealer)])
