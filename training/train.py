"""``crib train``: one run from its config to its summary, whatever the algorithm.

``train(cfg)`` checks what the config names before anything is written (``training.preflight``),
finds or makes the run folder, hands the session to the algorithm's ``Trainer``
(``training.algos.TRAINERS[cfg.algo]``: ``ppo``, ``dmc``, ``distill``; ``exit`` runs generations of
``distill`` runs, ``training.algos.exit``), then writes the summary with the final evaluations
(``training.final_eval``).

A run lives in ``OUTPUT_DIR/RUN_NAME/`` with ``RUN_NAME = {env}__{config}__{seed}__{time}``:

* ``config.yaml`` - the resolved config (every default filled in);
* ``tb/`` - TensorBoard events: SB3's own scalars (``rollout/``, ``train/``, ``time/``) next to
  ``charts/SPS``, ``game/pegging_per_deal``, ``game/hand_per_deal``, ``game/crib_per_deal`` (the
  learner's points per deal in training episodes), ``game/discard_regret`` and
  ``eval/win_rate/<opponent>``, ``eval/points_per_game/<opponent>`` from the periodic evaluations;
* ``latest/`` - the newest checkpoint (with optimizer and RNG state for ``--resume``), saved at
  step 0, every ``train.save_every`` steps, at every evaluation and when the run stops;
* ``best/`` - the checkpoint with the best evaluation so far (``eval.best_by``);
* ``pool/`` - frozen snapshots for the ``self`` opponent;
* ``evals.jsonl`` - one line per evaluation (what ``crib plot`` draws); ``summary.json``.

``--resume`` continues the newest run of the same config name under the output folder from its
``latest`` checkpoint: step count, optimizer state and RNG state carry on, up to the config's
``train.total_timesteps``. What a run does when killed or stopped by a signal is
``training.trainer``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.checkpoint import check_init_from
from agents.files import atomic_write_text, check_output_folder, remove_folder

from .algos import TRAINERS
from .algos.exit import run_expert_iteration
from .config import RunConfig
from .config_file import dump_config
from .final_eval import final_evaluations
from .interrupt import StopOnSignal, TrainingInterrupted
from .preflight import check_named_agents, resume_point
from .recovery import EVALS_FILE, rewind_run
from .runs import find_run_to_resume, run_name

DEFAULT_OUTPUT = Path("checkpoints")


def train(cfg: RunConfig, output_dir: Path | None = None, resume: bool = False,
          on_eval: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Run (or resume) training for ``cfg``; returns the run folder. ``on_eval`` is called after
    each periodic evaluation (``Trainer.on_eval``). Raises ``TrainingInterrupted`` after saving
    when SIGINT or SIGTERM stopped the run."""
    output_dir = check_output_folder(output_dir if output_dir is not None else DEFAULT_OUTPUT,
                                     "--output-dir")
    if cfg.algo == "exit":
        from agents.registry import network_path

        # the first generation's fits start from it: checked before anything is recorded
        check_init_from(network_path(cfg.exit.start), cfg.policy.arch, cfg.policy.arch_kwargs(),
                        field="exit.start")
        return run_expert_iteration(cfg, output_dir, resume, train)
    arch, arch_kwargs = cfg.policy.arch, cfg.policy.arch_kwargs()
    check_named_agents(cfg)
    # the checkpoint to start from is checked before anything of the run is written
    run_dir = find_run_to_resume(output_dir, cfg.name) if resume else None
    start = resume_point(run_dir, arch, arch_kwargs) if run_dir is not None else None
    if start is not None:
        training = json.loads((run_dir / "latest" / "meta.json").read_text())["training"]
        rewind_run(run_dir, start, training.get("best_step"))
    else:
        if cfg.init_from:
            check_init_from(cfg.init_from, arch, arch_kwargs)
        if run_dir is not None:
            print(f"{run_dir} was stopped before its first checkpoint: starting it again from "
                  f"step 0", flush=True)
            for part in ("tb", "pool", "best"):
                remove_folder(run_dir / part)
            (run_dir / EVALS_FILE).unlink(missing_ok=True)
        else:
            run_dir = output_dir / run_name(cfg)
            run_dir.mkdir(parents=True, exist_ok=False)
    atomic_write_text(run_dir / "config.yaml", dump_config(cfg))
    with StopOnSignal() as stop:
        trainer = TRAINERS[cfg.algo](cfg, run_dir, start is not None, stop)
        trainer.on_eval = on_eval
        trainer.build()
        trainer.train()
        summary = trainer.summary()
        if cfg.eval.final_games and not trainer.stopping:
            summary["final"] = final_evaluations(cfg, run_dir)
        atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
        if stop.signum is not None:
            raise TrainingInterrupted(stop.signum, run_dir, trainer.num_timesteps)
    return run_dir
