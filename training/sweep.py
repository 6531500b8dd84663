"""``crib sweep``: search training settings on Ray Tune, one ``crib train`` run per trial.

A sweep takes a run config (``--config``, what every trial starts from) and a search space
(``--space``, YAML)::

    name: example                 # the sweep's folder name
    samples: 4                    # trials to draw (``--samples`` overrides)
    seed: 0                       # seeds the draws: the same space and seed, the same trials
    metric: score                 # rank by: score (the run's eval.best_by score) or win_rate/<opp>
    scheduler: none               # or asha: stop trials whose evaluations trail (early stopping)
    grace_period: 8192            # asha: steps every trial gets before it may be stopped
    reduction_factor: 2           # asha: keep the best 1/reduction_factor at each rung
    overrides:                    # fixed changes to the config for every trial
      train.total_timesteps: 16384
    params:                       # dotted config keys -> one distribution each
      ppo.learning_rate: {loguniform: [3.0e-4, 3.0e-3]}
      ppo.ent_coef: {choice: [0.0, 0.01, 0.03]}
      policy.hidden: {grid: [16, 32]}

Distributions: ``choice`` (a list), ``grid`` (every value, times ``samples``), ``uniform`` and
``loguniform`` ([low, high]) and ``randint`` ([low, high), integers). Every key and every value is
checked against the config schema before Ray starts.

Each trial is an ordinary run (``training.train.train``): run folder, checkpoints, ``best/``,
``evals.jsonl`` and TensorBoard as ``crib train`` writes them, under
``OUTPUT/NAME__TIME/runs/TRIAL_ID/``. Its periodic evaluations are reported to Tune (``step``,
``score``, ``best_score``, ``win_rate/<opponent>``), which the optional ASHA scheduler reads. Tune's
own state lives in ``OUTPUT/NAME__TIME/tune``; ``--resume`` restores the newest sweep of the same
name with ``Tuner.restore``: finished trials stay finished and an interrupted trial continues its
run from its ``latest`` checkpoint (as ``crib train --resume`` does). At the end a table ranks the
trials by their best evaluation and names the best checkpoint; ``sweep.json`` holds the same.
"""

from __future__ import annotations

import copy
import json
import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.files import atomic_write_text, check_output_folder

from .config import RunConfig
from .config_file import load_config, parse_config

DEFAULT_OUTPUT = Path("checkpoints") / "sweeps"
DISTRIBUTIONS = ("choice", "grid", "uniform", "loguniform", "randint")
TUNE_DIR = "tune"  # Tune's experiment folder inside a sweep folder
RUNS_DIR = "runs"  # the trials' crib train run folders


class SweepSpace(BaseModel):
    """A ``--space`` file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    samples: int = Field(1, ge=1)
    seed: int = Field(0, ge=0)
    metric: str = "score"
    scheduler: Literal["none", "asha"] = "none"
    grace_period: int | None = Field(None, ge=1, description="asha: steps before a stop")
    reduction_factor: float = Field(2.0, gt=1)
    overrides: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, dict[str, Any]] = Field(min_length=1)

    @field_validator("params")
    @classmethod
    def _distributions(cls, params: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for key, spec in params.items():
            if len(spec) != 1 or next(iter(spec)) not in DISTRIBUTIONS:
                raise ValueError(f"{key}: give one of {', '.join(DISTRIBUTIONS)}, got {spec!r}")
            kind, values = next(iter(spec.items()))
            if not isinstance(values, list) or not values:
                raise ValueError(f"{key}: {kind} needs a non-empty list, got {values!r}")
            if kind in ("uniform", "loguniform", "randint"):
                if len(values) != 2 or not all(isinstance(v, int | float) for v in values) \
                        or not values[0] < values[1]:
                    raise ValueError(f"{key}: {kind} needs [low, high] with low < high, "
                                     f"got {values!r}")
                if kind == "loguniform" and values[0] <= 0:
                    raise ValueError(f"{key}: loguniform needs low > 0, got {values!r}")
                if kind == "randint" and not all(isinstance(v, int) for v in values):
                    raise ValueError(f"{key}: randint needs whole numbers, got {values!r}")
        return params


def load_space(path: Path) -> SweepSpace:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no sweep space file at {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({err})") from err
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a sweep space must be a YAML mapping")
    try:
        return SweepSpace.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}"
                             for e in err.errors())
        raise ValueError(f"{path}: invalid sweep space: {problems}") from None


def apply(config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy of the config mapping with dotted keys (``ppo.learning_rate``) set."""
    out = copy.deepcopy(config)
    for key, value in changes.items():
        node = out
        *parents, last = key.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"{key}: {part!r} is not a section of the run config")
            node = node[part]
        if last not in node:
            raise ValueError(f"{key}: the run config has no field {last!r} there; allowed: "
                             f"{', '.join(node)}")
        node[last] = value
    return out


def _candidates(spec: dict[str, Any]) -> list[Any]:
    """Values to check a distribution with: every listed value, or both ends of a range."""
    kind, values = next(iter(spec.items()))
    if kind == "randint":
        return [values[0], values[1] - 1]
    return list(values)


def trial_config(base: dict[str, Any], space: SweepSpace, params: dict[str, Any]) -> RunConfig:
    """The run config of a trial with sampled ``params``."""
    cfg = apply(apply(base, space.overrides), params)
    cfg["train"]["progress_bar"] = False  # trials share the driver's terminal
    return parse_config(cfg, f"sweep trial {params}")


def check_space(base: RunConfig, space: SweepSpace) -> dict[str, Any]:
    """Check every key and value of the space against the schema (before Ray starts); returns
    the base config as a mapping with the overrides applied."""
    data = apply(base.model_dump(mode="json"), space.overrides)
    parse_config(data, f"{space.name}: overrides")
    for key, spec in space.params.items():
        for value in _candidates(spec):
            trial_config(data, space, {key: value})
    allowed = ["score", *(f"win_rate/{o}" for o in data["eval"]["opponents"])]
    if space.metric not in allowed:
        raise ValueError(f"{space.name}: metric {space.metric!r}; allowed: {', '.join(allowed)}")
    return data


def _tune_space(space: SweepSpace) -> dict[str, Any]:
    from ray import tune

    make = {"choice": tune.choice, "grid": tune.grid_search,
            "uniform": lambda v: tune.uniform(*v), "loguniform": lambda v: tune.loguniform(*v),
            "randint": lambda v: tune.randint(*v)}
    return {key: make[kind](values) for key, spec in space.params.items()
            for kind, values in spec.items()}


# -- the trial (runs in a Ray worker) --

def run_trial(params: dict[str, Any], base: dict[str, Any], space: dict[str, Any],
              runs_root: str, cwd: str) -> None:
    """One trial: a ``crib train`` run whose evaluations go to ``tune.report``. A trial restarted
    by ``Tuner.restore`` finds its run folder and resumes it from ``latest``."""
    from ray import tune

    from .runs import has_run
    from .train import train

    if os.path.isdir(cwd):
        os.chdir(cwd)  # Tune starts trials in their own folder; configs' relative paths need this
    cfg = trial_config(base, SweepSpace.model_validate(space), params)
    out = Path(runs_root) / tune.get_context().get_trial_id()
    resume = has_run(out, cfg.name)

    def report(line: dict[str, Any]) -> None:
        metrics = {"step": line["step"], "score": line["score"],
                   "run_dir": line["run_dir"], "best_checkpoint": line["best_checkpoint"]}
        for opponent, result in line["results"].items():
            metrics[f"win_rate/{opponent}"] = result["win_rate"]
            metrics[f"points_per_game/{opponent}"] = result["points_per_game"]
        tune.report(metrics)

    train(cfg, output_dir=out, resume=resume, on_eval=report)


# -- the driver --

def find_sweep_to_resume(output_dir: Path, name: str) -> Path:
    candidates = [p for p in output_dir.glob(f"{name}__*") if (p / TUNE_DIR).is_dir()]
    if not candidates:
        raise FileNotFoundError(f"--resume: no sweep named {name!r} under {output_dir}")
    return max(candidates, key=lambda p: p.name)


def sweep(config: Path, space_path: Path, samples: int | None = None, address: str | None = None,
          output_dir: Path | None = None, resume: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    """Run (or resume) a sweep; returns its folder and the trials ranked best first."""
    from .ray_backend import LOCAL, connect, require_ray

    output_dir = check_output_folder(output_dir if output_dir is not None else DEFAULT_OUTPUT,
                                     "--output-dir").resolve()  # before Ray starts
    require_ray()
    base = load_config(config)
    space = load_space(space_path)
    if samples is not None and (isinstance(samples, bool) or samples <= 0):
        raise ValueError(f"--samples must be a positive whole number, got {samples!r}")
    base_data = check_space(base, space)
    if resume:
        sweep_dir = find_sweep_to_resume(output_dir, space.name)
        # the trials go on with the settings the sweep started with
        space = load_space(sweep_dir / "space.yaml")
        base_data = yaml.safe_load((sweep_dir / "base_config.yaml").read_text(encoding="utf-8"))
        base = parse_config(base_data, str(sweep_dir / "base_config.yaml"))
    else:
        sweep_dir = output_dir / f"{space.name}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        sweep_dir.mkdir(parents=True, exist_ok=False)
        atomic_write_text(sweep_dir / "space.yaml", yaml.safe_dump(space.model_dump(),
                                                                   sort_keys=False))
        atomic_write_text(sweep_dir / "base_config.yaml", yaml.safe_dump(base_data,
                                                                         sort_keys=False))

    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.basic_variant import BasicVariantGenerator

    started = connect(address or LOCAL)
    try:
        trainable = tune.with_resources(
            tune.with_parameters(run_trial, base=base_data, space=space.model_dump(),
                                 runs_root=str(sweep_dir / RUNS_DIR), cwd=os.getcwd()),
            {"cpu": base.train.torch_threads})
        if resume:
            tuner = tune.Tuner.restore(str(sweep_dir / TUNE_DIR), trainable,
                                       resume_unfinished=True, resume_errored=True)
        else:
            scheduler = None
            if space.scheduler == "asha":
                total = int(base_data["train"]["total_timesteps"])
                grace = space.grace_period or 2 * int(base_data["eval"]["every"])
                scheduler = ASHAScheduler(time_attr="step", max_t=total,
                                          grace_period=min(grace, total),
                                          reduction_factor=space.reduction_factor)
            tuner = tune.Tuner(
                trainable, param_space=_tune_space(space),
                tune_config=tune.TuneConfig(
                    metric=space.metric, mode="max", scheduler=scheduler,
                    num_samples=samples or space.samples,
                    search_alg=BasicVariantGenerator(random_state=space.seed)),
                run_config=tune.RunConfig(name=TUNE_DIR, storage_path=str(sweep_dir), verbose=1))
        grid = tuner.fit()
    finally:
        if started:
            import ray

            ray.shutdown()
    ranking = rank_trials(grid, space.metric, int(base_data["train"]["total_timesteps"]))
    unfinished = len(grid) - grid.num_terminated - grid.num_errors
    atomic_write_text(sweep_dir / "sweep.json", json.dumps(
        {"sweep": sweep_dir.name, "metric": space.metric, "unfinished_trials": unfinished,
         "trials": ranking}, indent=2) + "\n")
    if unfinished:  # Ctrl-C: Tune saved its state and returned early
        print(f"sweep interrupted with {unfinished} trial(s) unfinished; continue it with: "
              f"crib sweep --config {config} --space {space_path} --output-dir {output_dir} "
              f"--resume")
    return sweep_dir, ranking


def rank_trials(grid: Any, metric: str, total_steps: int) -> list[dict[str, Any]]:
    """One row per trial, best evaluation first (trials with no evaluation last)."""
    rows = []
    for result in grid:
        history = result.metrics_dataframe
        trial = (result.metrics or {}).get("trial_id") or os.path.basename(result.path)
        row: dict[str, Any] = {"trial": trial, "params": result.config,
                               "error": None if result.error is None else str(result.error)}
        if history is not None and metric in history and history[metric].notna().any():
            best = history.loc[history[metric].idxmax()]
            last = history.iloc[-1]
            row.update(best=float(best[metric]), best_step=int(best["step"]),
                       steps=int(last["step"]), stopped_early=int(last["step"]) < total_steps,
                       checkpoint=str(last["best_checkpoint"]), run_dir=str(last["run_dir"]))
        else:
            row.update(best=None, best_step=None, steps=0, stopped_early=False, checkpoint=None,
                       run_dir=None)
        rows.append(row)
    rows.sort(key=lambda r: -math.inf if r["best"] is None else r["best"], reverse=True)
    return rows
