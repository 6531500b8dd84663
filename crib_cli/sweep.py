"""``crib sweep`` on the command line: run the sweep, print its ranking as a rich table and where
the best checkpoint is. The library (``training.sweep``) prints nothing of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.sweep import RUNS_DIR, TUNE_DIR, load_space, sweep


def print_ranking(ranking: list[dict[str, Any]], metric: str, sweep_dir: Path) -> None:
    """The trials by their best ``metric`` as a rich table, then the best checkpoint."""
    from rich.console import Console
    from rich.table import Table

    keys = sorted({k for r in ranking for k in r["params"]})
    table = Table(title=f"{sweep_dir.name}: trials by best {metric}", title_justify="left",
                  caption=f"run folders: {sweep_dir / RUNS_DIR}/TRIAL/", caption_justify="left")
    # a parameter's column is named by its last part (ppo.learning_rate -> learning_rate)
    for column in ("rank", "trial", *(k.rsplit(".", 1)[-1] for k in keys), f"best {metric}",
                   "at step", "steps"):
        table.add_column(column, justify="left" if column == "trial" else "right",
                         no_wrap=column == "trial")
    for rank, r in enumerate(ranking, start=1):
        params = [_fmt(r["params"].get(k)) for k in keys]
        if r["best"] is None:
            status = "error" if r["error"] else "no evaluation"
            table.add_row(str(rank), r["trial"], *params, status, "", "")
            continue
        steps = f"{r['steps']:,}" + (" stopped" if r["stopped_early"] else "")
        table.add_row(str(rank), r["trial"], *params, f"{r['best']:.3f}", f"{r['best_step']:,}",
                      steps)
    console = Console()
    console.print(table)
    if ranking and ranking[0]["best"] is not None:
        best = ranking[0]["checkpoint"]
        console.print(f"best checkpoint: {best}")
        console.print(f"                 (crib evaluate --agent {best})")
    console.print(f"sweep folder:    {sweep_dir}  (sweep.json; Tune's state in {TUNE_DIR}/)")
    console.print(f"tensorboard:     tensorboard --logdir {sweep_dir / RUNS_DIR}")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def sweep_command(config: Path, space: Path, samples: int | None = None,
                  address: str | None = None, output_dir: Path | None = None,
                  resume: bool = False) -> Path:
    """``crib sweep``: run the sweep, print the ranking and the best checkpoint."""
    sweep_dir, ranking = sweep(config, space, samples=samples, address=address,
                               output_dir=output_dir, resume=resume)
    print_ranking(ranking, load_space(space).metric, sweep_dir)
    return sweep_dir
