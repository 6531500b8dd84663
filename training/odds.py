"""The win-odds table for ``crib odds``: build it, look a position up, draw it (the command itself,
which prints, is ``crib_cli.odds``).

* ``crib odds 95 100 --dealer [--json]``: P(win) for the player on 95 against 100 who deals next;
* ``crib odds build [--traces N] [--seed S] [--output PATH]``: record N deal traces of standard
  against standard on the compiled core (``agents.odds_games``), solve the dynamic program
  (``crib_env.odds_dp``) and write the table (``crib_env.odds`` format);
* ``crib odds --plot out.png``: a heatmap of the whole table, both dealers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from agents.files import atomic_write, save_figure
from crib_env.odds import DEFAULT_TABLE, WinOdds, load_table, save_table

DEFAULT_TRACES = 400_000
STRATEGY = "standard vs standard"
TRACE_CHUNK = 10_000
BATCHES = 16


def build(traces: int = DEFAULT_TRACES, seed: int = 0, output: Path = DEFAULT_TABLE,
          target: int = 121) -> WinOdds:
    """Record ``traces`` deals (trace ``i`` from seed ``seed * 2**32 + i``), solve, write
    ``output`` and return the table."""
    if traces < 1000:
        raise ValueError(f"--traces must be at least 1000 for a usable table, got {traces}")
    if seed < 0:
        raise ValueError(f"--seed must be >= 0, got {seed}")
    from agents.odds_games import traces as record
    from crib_env.odds_dp import build_table

    seeds = np.arange(traces, dtype=np.int64) + np.int64(seed) * (1 << 32)
    chunks = [seeds[i:i + TRACE_CHUNK] for i in range(0, traces, TRACE_CHUNK)]
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task("deal traces (standard vs standard)", total=traces)
        events = []
        for chunk in chunks:
            events.append(record(chunk))
            progress.advance(task, len(chunk))
        events = np.concatenate(events)
        task = progress.add_task("dynamic program (batches + whole)", total=BATCHES + 1)
        win, stderr = build_table(events, target, BATCHES, lambda k: progress.advance(task, k))
    header = {"strategy": STRATEGY, "traces": int(traces), "seed": int(seed), "batches": BATCHES,
              "stderr_method": f"batch means over {BATCHES} equal parts of the traces",
              "trace_play": "each deal played from 0-0 (standard's neutral, not endgame, play)"}
    atomic_write(output, lambda tmp: save_table(tmp, win, stderr, header))
    return load_table(output)


def endgame_cell(table: WinOdds, score: int, opponent_score: int) -> bool:
    """True where the standard agent plays for the win (either side within
    ``agents.endgame.ENDGAME_NEED`` of the target) and the undecided cell comes from neutral play,
    so it is an approximation for that agent (measured in BENCHMARKS.md)."""
    from agents.endgame import ENDGAME_NEED, near_the_end

    own, opp = table.target - score, table.target - opponent_score
    return min(own, opp) > 0 and near_the_end(own, opp, ENDGAME_NEED)


def odds_report(table: WinOdds, score: int, opponent_score: int, dealer: bool) -> dict:
    """The lookup as the JSON contract names it."""
    return {"score": score, "opponent_score": opponent_score, "dealer": bool(dealer),
            "win_probability": table.win_probability(score, opponent_score, dealer),
            "stderr": table.standard_error(score, opponent_score, dealer)}


def plot(table: WinOdds, output: Path) -> None:
    """Heatmaps of P(win) by own score (rows) and opponent's score (columns), for each dealer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5), constrained_layout=True)
    for ax, d, title in ((axes[0], 1, "you deal next"), (axes[1], 0, "opponent deals next")):
        image = ax.imshow(table.win[:, :, d], origin="lower", cmap="RdBu", vmin=0, vmax=1)
        ax.set_title(f"P(win), {title}")
        ax.set_xlabel("opponent's score")
        ax.set_ylabel("your score")
    fig.colorbar(image, ax=axes, label="chance to win")
    fig.suptitle(f"Win odds ({table.header['strategy']}, {table.header['traces']:,} traces, "
                 f"max stderr {100 * table.header['max_stderr']:.2f} pp)")
    save_figure(fig, Path(output), dpi=100)
    plt.close(fig)
