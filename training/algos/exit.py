"""Expert iteration (``algo: exit``): the search over a network teaches the next network.

Generation ``g`` (1, 2, ...) is a distillation run (``training.algos.distill``) whose teacher is
``champion-search`` (or the ``rollouts`` teacher, ``training.algos.rollout_teacher``) over
generation ``g - 1``'s network (``exit.start`` for the first) and whose network starts from those
same weights; the search records its card and its value of every legal
card (its chance to win after laying it: ``distill.soft`` learns a softmax of those next to the
card). The new network then goes into the search of the next generation. After each generation
its network plays, without search, the previous generation's network and each of
``exit.opponents`` (duplicate games, ``exit.eval_games`` each, seed ``exit.eval_seed``).

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


def generation_config(cfg: RunConfig, generation: int, previous: Path | str,
                      folder: Path) -> RunConfig:
    """The distillation run of ``generation``: taught by the search over ``previous``, starting
    from its weights, recording its share of ``exit.chunks`` into ``folder/recording``, seeded
    apart from the other generations; it also learns from the configured ``distill.also_from``
    and, with ``exit.keep_recordings``, from the earlier generations' recordings."""
    data = cfg.model_dump()
    data.update(algo="distill", name=f"{cfg.name}-gen{generation}", init_from=str(previous),
                seed=cfg.seed + generation)
    from agents.search import with_network

    earlier = [*cfg.distill.also_from,
               *([str(folder.parent / GENERATION_FOLDER.format(g) / "recording")
                  for g in range(1, generation)] if cfg.exit.keep_recordings else [])]
    chunks = cfg.exit.chunks
    data["distill"].update(teacher=with_network(cfg.exit.search, previous),
                           chunks=chunks[generation - 1] if generation <= len(chunks)
                           else cfg.distill.chunks,
                           recording=str(folder / "recording"), also_from=earlier)
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
                   train: TrainFn) -> tuple[Path, dict[str, Any]]:
    """Generation ``generation`` (recording, fit, evaluations), resumed where it stopped; returns
    its network's checkpoint and its line of ``generations.jsonl``."""
    from agents.checkpoint import resolve_checkpoint

    folder = run_dir / GENERATION_FOLDER.format(generation)
    done = folder / DONE_FILE
    if done.exists():
        line = json.loads(done.read_text(encoding="utf-8"))
        return Path(line["checkpoint"]), line
    gen_cfg = generation_config(cfg, generation, previous, folder)
    started = time.time()
    gen_run = train(gen_cfg, output_dir=folder, resume=has_run(folder, gen_cfg.name))
    network = resolve_checkpoint(gen_run)
    fitted = time.time()
    evaluations = {"previous": _evaluation(folder / "eval_previous.json", str(network),
                                           str(previous), cfg)}
    for opponent in cfg.exit.opponents:
        evaluations[opponent] = _evaluation(folder / f"eval_{opponent}.json", str(network),
                                            opponent, cfg)
    line = {"generation": generation, "checkpoint": str(network), "previous": str(previous),
            "teacher": gen_cfg.distill.teacher,
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
    lines = []
    for generation in range(1, cfg.exit.generations + 1):
        print(f"exit: generation {generation} of {cfg.exit.generations}, teacher "
              f"{cfg.exit.search.partition(':')[0]} over {previous}", flush=True)
        previous, line = run_generation(cfg, run_dir, generation, previous, train)
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
