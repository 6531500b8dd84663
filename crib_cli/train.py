"""``crib train`` on the command line: load the config, train, then show the run's learning curve
and its final evaluations as rich tables and say where everything is. The library
(``training.train``) prints only its progress."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.checkpoint import read_meta, resolve_checkpoint
from training.config import RunConfig
from training.config_file import load_config
from training.interrupt import TrainingInterrupted
from training.train import train


def curve_table(run_dir: Path) -> Any:
    """The run's evaluations as a table: the learning curve, step by step."""
    from rich.table import Table

    from training.plots import read_evals

    evals = read_evals(run_dir)
    opponents = sorted({o for line in evals for o in line["results"]})
    table = Table(title=f"learning curve of {run_dir.name} (evaluations during training)")
    for column in ("step", "minutes", *(f"vs {o}" for o in opponents), "best"):
        table.add_column(column, justify="right")
    for line in evals:
        rates = [f"{line['results'][o]['win_rate']:.1%}" if o in line["results"] else ""
                 for o in opponents]
        table.add_row(f"{line['step']:,}", f"{line['wall_seconds'] / 60:.1f}", *rates,
                      "*" if line.get("best") else "")
    return table


def final_table(cfg: RunConfig, run_dir: Path, final: list[dict[str, Any]]) -> Any:
    """The best checkpoint's final evaluations (``summary.json["final"]``) as a table."""
    from rich.table import Table

    best = resolve_checkpoint(run_dir)
    meta = read_meta(best)
    table = Table(title=f"{run_dir.name}/{best.name} ({meta.get('num_timesteps')} steps), "
                        f"{cfg.eval.final_games} games each, seed {cfg.eval.seed}")
    for column in ("opponent", "win rate", "95% CI", "points/game", "95% CI"):
        table.add_column(column, justify="right")
    for opponent, r in zip(cfg.eval.opponents, final, strict=True):
        table.add_row(opponent, f"{r['win_rate']:.1%}",
                      f"{r['win_rate_ci95'][0]:.1%} - {r['win_rate_ci95'][1]:.1%}",
                      f"{r['points_per_game']:+.2f}",
                      f"{r['points_per_game_ci95'][0]:+.2f} - {r['points_per_game_ci95'][1]:+.2f}")
    return table


def generations_table(run_dir: Path) -> Any:
    """``algo: exit``: each generation's network against the previous one and the opponents."""
    from rich.table import Table

    from training.algos.exit import GENERATIONS_FILE

    lines = [json.loads(x) for x in (run_dir / GENERATIONS_FILE).read_text().splitlines() if x]
    names = list(lines[0]["results"]) if lines else []
    table = Table(title=f"{run_dir.name}: expert iteration (duplicate games, win rate, 95% over "
                        f"pairs)")
    for column in ("generation", *(f"vs {n}" for n in names), "minutes"):
        table.add_column(column, justify="right")
    for line in lines:
        cells = []
        for name in names:
            r = line["results"][name]
            lo, hi = r["win_rate_ci95_paired"] or r["win_rate_ci95"]
            cells.append(f"{r['win_rate']:.1%} ({lo:.1%}-{hi:.1%})")
        minutes = (line["fit_seconds"] + line["eval_seconds"]) / 60
        table.add_row(str(line["generation"]), *cells, f"{minutes:.1f}")
    return table


def train_command(config: Path, output_dir: Path | None = None, resume: bool = False,
                  ray: str | None = None, overrides: Sequence[str] = ()) -> Path:
    """``crib train``: load and validate the config (with ``overrides``, ``--set KEY=VALUE``),
    train, say where everything is. ``ray`` records a distillation's (or expert iteration's) games
    on Ray (``distill.ray``)."""
    cfg = load_config(config, overrides)
    if ray is not None:
        if cfg.algo not in ("distill", "exit"):
            raise ValueError(f"--ray: algo {cfg.algo!r} does not record games; only distill and "
                             f"exit do (crib sweep runs whole trainings on Ray)")
        from training.ray_backend import require_ray

        require_ray()
        cfg = cfg.model_copy(update={"distill": cfg.distill.model_copy(update={"ray": ray})})
    where = "" if output_dir is None else f" --output-dir {output_dir}"
    resume_command = f"crib train --config {config}{where} --resume" + \
        "".join(f" --set {shlex.quote(item)}" for item in overrides) + \
        (f" --ray {ray}" if ray is not None else "")
    try:
        run_dir = train(cfg, output_dir=output_dir, resume=resume)
    except TrainingInterrupted as stopped:
        run_dir = stopped.run_dir
        print(f"{stopped}: latest/ and summary.json are saved", flush=True)
        print(f"run:         {run_dir}")
        print(f"latest:      {run_dir / 'latest'}   ({stopped.steps:,} steps)")
        print(f"resume with: {resume_command}", flush=True)
        raise
    if cfg.algo == "exit":
        from rich.console import Console

        Console().print(generations_table(run_dir))
        print(f"run:         {run_dir}   (resume: {resume_command})")
        return run_dir
    final = json.loads((run_dir / "summary.json").read_text()).get("final")
    if final is not None:
        from rich.console import Console

        console = Console()
        console.print(curve_table(run_dir))
        console.print(final_table(cfg, run_dir, final))
    best = run_dir / "best" if (run_dir / "best").exists() else run_dir / "latest"
    print(f"run:         {run_dir}")
    print(f"checkpoint:  {best}   (crib evaluate --agent {best})")
    print(f"latest:      {run_dir / 'latest'}   ({resume_command})")
    print(f"tensorboard: tensorboard --logdir {run_dir / 'tb'}")
    print(f"curves:      crib plot {run_dir}")
    return run_dir
