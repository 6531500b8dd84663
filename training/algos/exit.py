"""Expert iteration (``algo: exit``): the search over a network teaches the next network.

Generation ``g`` (1, 2, ...) is a distillation run (``training.algos.distill``) whose teacher is
``champion-search`` (or the ``rollouts`` teacher, ``training.algos.rollout_teacher``) over
generation ``g - 1``'s network (``exit.start`` for the first) and whose network starts from those
same weights; the search records its card and its value of every legal
card (its chance to win after laying it: ``distill.soft`` learns a softmax of those next to the
card). The new network then goes into the search of the next generation. After each generation
its network plays, without search, the previous generation's network and each of
``exit.opponents`` (duplicate games, ``exit.eval_games`` each, seed ``exit.eval_seed``).

With ``exit.fits`` above 1 a generation fits several networks on its one recording, each ordering
its minibatches by its own seed, and its network is their pool (``training.pool``); with
``exit.pool_previous`` the previous generation's network is in the pool too, so the pool leaves the
previous network's card only where the fits learned a large advantage for another (their small
departures are the noisiest). The next generation's search plays the pool; its fits start from
this generation's first fit.

Everything resumes: each generation is a run folder under ``gen_<g>/`` (its recording resumes
chunk by chunk and its fit from ``latest/``, as any distillation run), each finished evaluation is
a JSON file beside it, and ``generations.jsonl`` in the exit run folder is rewritten from those
files after every generation: a killed run started again with ``--resume`` redoes only what had
not been written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.files import atomic_write_text

from ..config import RunConfig
from ..config_file import dump_config
from ..runs import find_run_to_resume, has_run, run_name

GENERATIONS_FILE = "generations.jsonl"
GENERATION_FOLDER = "gen_{}"
DONE_FILE = "generation.json"
#: the generation's pool of networks (exit.fits, exit.pool_previous), in its folder
POOL_FOLDER = "pool"


def generation_config(cfg: RunConfig, generation: int, previous: Path | str,
                      folder: Path, start: Path | str | None = None, fit: int = 1) -> RunConfig:
    """Fit ``fit`` (of ``exit.fits``) of ``generation``: a distillation run taught by the search
    over ``previous``, starting from the weights ``start`` (default ``previous``), recording its
    share of ``exit.chunks`` into ``folder/recording``, seeded apart from the other generations
    (a later fit only orders its minibatches by another seed); it also learns from the configured
    ``distill.also_from`` and, with ``exit.keep_recordings``, from the earlier generations'
    recordings."""
    data = cfg.model_dump()
    data.update(algo="distill", name=f"{cfg.name}-gen{generation}" + (f"-fit{fit}" if fit > 1
                                                                      else ""),
                init_from=str(start or previous), seed=cfg.seed + generation)
    from agents.search import with_network

    earlier = [*cfg.distill.also_from,
               *([str(folder.parent / GENERATION_FOLDER.format(g) / "recording")
                  for g in range(1, generation)] if cfg.exit.keep_recordings else [])]
    chunks = cfg.exit.chunks
    data["distill"].update(teacher=with_network(cfg.exit.search, previous),
                           chunks=chunks[generation - 1] if generation <= len(chunks)
                           else cfg.distill.chunks,
                           recording=str(folder / "recording"), also_from=earlier)
    if fit > 1:
        data["distill"]["fit_seed"] = cfg.seed + generation + fit - 1
    return RunConfig.model_validate(data)


def _evaluation(path: Path, agent: str, opponent: str, cfg: RunConfig) -> dict[str, Any]:
    """The duplicate evaluation of ``agent`` against ``opponent``, read from ``path`` if an
    earlier session finished it."""
    from ..evaluate import evaluate

    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    report = evaluate(agent, opponent, games=cfg.exit.eval_games, seed=cfg.exit.eval_seed,
                      duplicate=True, workers=cfg.exit.eval_workers, progress=True).to_dict()
    atomic_write_text(path, json.dumps(report, indent=2) + "\n")
    return report


#: ``training.train.train``: runs (or resumes) one config's training in an output folder
TrainFn = Callable[..., Path]


def run_generation(cfg: RunConfig, run_dir: Path, generation: int, previous: Path | str,
                   train: TrainFn, start: Path | str | None = None) -> tuple[Path, dict[str, Any]]:
    """Generation ``generation`` (recording, fits, pool, evaluations), resumed where it stopped,
    its fits starting from ``start`` (default ``previous``); returns its network's checkpoint and
    its line of ``generations.jsonl``."""
    from agents.checkpoint import resolve_checkpoint

    from ..pool import pool_checkpoint

    folder = run_dir / GENERATION_FOLDER.format(generation)
    done = folder / DONE_FILE
    if done.exists():
        line = json.loads(done.read_text(encoding="utf-8"))
        return Path(line["checkpoint"]), line
    started = time.time()
    fits = []
    for fit in range(1, cfg.exit.fits + 1):
        fit_cfg = generation_config(cfg, generation, previous, folder, start, fit)
        fits.append(resolve_checkpoint(train(fit_cfg, output_dir=folder,
                                             resume=has_run(folder, fit_cfg.name))))
    network = fits[0]
    if cfg.exit.fits > 1 or cfg.exit.pool_previous > 0:
        kept = [(Path(previous), cfg.exit.pool_previous)] if cfg.exit.pool_previous > 0 else []
        network = pool_checkpoint(folder / POOL_FOLDER, [*kept, *((f, 1.0) for f in fits)],
                                  name=f"{cfg.name}-gen{generation}-pool")
    fitted = time.time()
    evaluations = {"previous": _evaluation(folder / "eval_previous.json", str(network),
                                           str(previous), cfg)}
    for opponent in cfg.exit.opponents:
        evaluations[opponent] = _evaluation(folder / f"eval_{opponent}.json", str(network),
                                            opponent, cfg)
    line = {"generation": generation, "checkpoint": str(network), "previous": str(previous),
            "fits": [str(f) for f in fits],
            "teacher": fit_cfg.distill.teacher,  # the same for every fit
            "fit_seconds": round(fitted - started, 1),
            "eval_seconds": round(time.time() - fitted, 1),
            "results": {name: {k: report[k] for k in ("games", "win_rate", "win_rate_ci95",
                                                       "win_rate_ci95_paired", "points_per_game")}
                        for name, report in evaluations.items()}}
    atomic_write_text(done, json.dumps(line, indent=2) + "\n")
    return network, line


def expert_iteration(cfg: RunConfig, run_dir: Path, train: TrainFn) -> list[dict[str, Any]]:
    """All of ``cfg.exit.generations`` in ``run_dir``, each generation's distillation run by
    ``train`` (``training.train.train``); returns their lines."""
    from agents.registry import network_path

    previous: Path | str = network_path(cfg.exit.start)
    start: Path | str = previous
    lines = []
    for generation in range(1, cfg.exit.generations + 1):
        print(f"exit: generation {generation} of {cfg.exit.generations}, teacher "
              f"{cfg.exit.search.partition(':')[0]} over {previous}", flush=True)
        previous, line = run_generation(cfg, run_dir, generation, previous, train, start)
        start = Path(line.get("fits", [previous])[0])
        lines.append(line)
        atomic_write_text(run_dir / GENERATIONS_FILE,
                          "".join(json.dumps(x) + "\n" for x in lines))
    return lines


def run_expert_iteration(cfg: RunConfig, output_dir: Path, resume: bool, train: TrainFn) -> Path:
    """``algo: exit`` under ``output_dir``: a new run folder, or with ``resume`` the newest one of
    the config's name; returns it. ``train`` is ``training.train.train`` (passed in, as it
    dispatches here)."""
    run_dir = find_run_to_resume(output_dir, cfg.name) if resume else output_dir / run_name(cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.yaml", dump_config(cfg))
    expert_iteration(cfg, run_dir, train)
    return run_dir
