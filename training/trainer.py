"""The trainer interface: ``Trainer``, the base every algorithm of ``training.algos`` builds on.

A subclass provides the learner (``build``: network, optimizer, envs, logger; ``learn``: its loop);
the base owns the session around it: seeding, the schedule of evaluations, self-play snapshots and
saves between updates, checkpoints, the ``best/`` copy, the stop on a signal and the summary.

Crash safety: every checkpoint folder is replaced as a whole (``agents.files``), and ``latest/``
is written last for its step, so a run killed at any moment resumes from its last ``latest/``,
losing at most the steps since that save (``training.recovery`` drops what came after it; the
resumed TensorBoard writer purges the later scalars). SIGINT (Ctrl-C) and SIGTERM stop the run
after the current step: ``latest/`` and ``summary.json`` are saved, the resume command printed,
and the exit status is 130 / 143; a second signal stops at once.
"""

from __future__ import annotations

import functools
import json
import random
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.checkpoint import (
    copy_checkpoint,
    load_network,
    load_training_state,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from agents.files import append_line
from agents.learned import LearnedAgent
from agents.networks import widen_into, with_reader
from agents.reader import load_reader_state

from .config import RunConfig
from .interrupt import StopOnSignal
from .recovery import EVALS_FILE, wait_for_later_event_file


def seed_everything(seed: int) -> None:
    """The one place where the learner's generators are seeded (envs are seeded by the VecEnv)."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - SB3 draws its minibatches from the global generator
    torch.manual_seed(seed)
    # with more than one torch thread some CPU kernels (an index's accumulating backward) add in
    # whatever order the threads finish: the same seed gave other weights; the deterministic
    # kernels cost nothing measurable here (a DMC run of 300,000 steps: 26 s either way)
    torch.use_deterministic_algorithms(True)


def initial_network(cfg: RunConfig) -> torch.nn.Module:
    """The network a DMC or distillation run starts from: built right after seeding, so a seed
    fixes it (``bench/step0_checkpoint.py`` saves it for "what training added"). PPO's is built
    inside SB3's policy instead."""
    from agents.networks import build_network

    seed_everything(cfg.seed)
    return build_network(cfg.policy.arch, **cfg.policy.arch_kwargs())


@functools.cache
def source_commit() -> dict[str, Any] | None:
    """The git commit of the code that trains (and whether the checkout had uncommitted changes),
    for a checkpoint's meta.json; None outside a git checkout."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=root, capture_output=True, text=True, timeout=10,
                                check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(status.strip())}


class Trainer(ABC):
    """One run: builds the envs and the model, trains, evaluates, checkpoints.

    An algorithm (``training.algos``) subclasses it: ``build()`` makes its network, optimizer,
    envs and logger and ``learn(steps)`` runs its loop, calling ``between_updates()`` whenever
    the weights are those of every step counted so far. This class owns what they share: seeding,
    evaluation, checkpoints, the self-play pool and the schedule of evaluations and snapshots
    between updates; ``train()`` runs the whole session.
    """

    def __init__(self, cfg: RunConfig, run_dir: Path, resume: bool,
                 stop: StopOnSignal | None = None) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.stop = stop or StopOnSignal()
        self.code = source_commit()  # the code that starts the run, before a commit can move HEAD
        self.pool_dir = run_dir / "pool"
        self.uses_pool = any(o.agent == "self" for o in cfg.opponents)
        self.best_score: float | None = None
        self.best_step: int | None = None
        self.wall_before = 0.0  # training seconds of earlier sessions of this run (resume)
        self.last_eval: dict[str, Any] | None = None
        self.self_slots = None  # fast engine: the self-play slots to refresh after a snapshot
        self.rollout_cut = False  # a stop request ended a rollout before its update
        self.timings = {"env": 0.0, "forward": 0.0, "update": 0.0}
        #: called after every periodic evaluation with its evals.jsonl line plus "run_dir" and
        #: "best_checkpoint" (a sweep reports these to Ray Tune)
        self.on_eval: Callable[[dict[str, Any]], None] | None = None

    # -- what an algorithm provides --

    network: torch.nn.Module
    optimizer: torch.optim.Optimizer
    num_timesteps: int
    n_updates: int
    logger: Any

    @abstractmethod
    def build(self) -> None:
        """Make the network, optimizer, envs and logger (and restore them on ``--resume``)."""

    @abstractmethod
    def learn(self, steps: int) -> None:
        """Train for up to ``steps`` more steps, stopping early when ``stopping`` or
        ``out_of_time()``."""

    # -- set-up shared by the algorithms --

    def env_seed(self) -> int:
        """Fresh deals on resume, not a replay of step 0."""
        return self.cfg.seed + (self.num_timesteps if self.resume else 0)

    def fast_opponents(self) -> Any:
        """The config's opponents as the vector env's batch mixture (``"random"`` alone runs
        inside the compiled kernel)."""
        from .batch_opponents import batch_mixture

        cfg = self.cfg
        specs = [(o.agent, o.weight) for o in cfg.opponents]
        if [s for s, _ in specs] == ["random"]:
            return "random"
        members, self.self_slots = batch_mixture(
            specs, self.pool_dir if self.uses_pool else None, cfg.selfplay.pool_size,
            cfg.selfplay.fallback, seed=cfg.seed)
        return members

    def start_weights(self) -> None:
        if self.resume:
            self._restore(self.run_dir / "latest")
            return
        reader = self.cfg.policy.reader
        reader_state = load_reader_state(reader) if reader else {}
        if self.cfg.init_from:
            net, _ = load_network(self.cfg.init_from)
            # check_init_from: it fits
            widen_into(self.network, with_reader(net.state_dict(), reader_state))
        elif reader_state:
            self.network.reader.load_state_dict(reader_state)

    def _restore(self, folder: Path) -> None:
        meta, optimizer, rng = load_training_state(folder)
        if meta.get("arch") != self.cfg.policy.arch or \
                meta.get("arch_kwargs") != self.cfg.policy.arch_kwargs():
            raise ValueError(f"--resume: {folder} holds a {meta.get('arch')!r} network with "
                             f"{meta.get('arch_kwargs')}, the config asks for "
                             f"{self.cfg.policy.arch!r} with {self.cfg.policy.arch_kwargs()}")
        net, _ = load_network(folder)
        self.network.load_state_dict(net.state_dict())
        self.optimizer.load_state_dict(optimizer)
        training = meta["training"]
        self.num_timesteps = int(training["num_timesteps"])
        self.n_updates = int(training["n_updates"])
        self.best_score = training.get("best_score")
        self.best_step = training.get("best_step")
        self.wall_before = float(training.get("wall_seconds", 0.0))
        self.last_eval = meta.get("eval")
        set_rng_state(rng)

    # -- checkpoints and evaluation --

    def save(self, folder: Path, with_state: bool = True) -> Path:
        cfg = self.cfg
        steps = self.num_timesteps
        info = {
            "name": f"{self.run_dir.name}@{steps}",
            "run": self.run_dir.name,
            "config": cfg.name,
            "algo": cfg.algo,
            "engine": cfg.train.engine,
            "num_timesteps": steps,
            "run_config": cfg.model_dump(mode="json"),
            "training": {
                "num_timesteps": steps,
                "n_updates": self.n_updates,
                "best_score": self.best_score,
                "best_step": self.best_step,
                "wall_seconds": round(self.wall_seconds(), 1),
            },
            "eval": self.last_eval,
            "code": self.code,
            **self.extra_info(),
        }
        return save_checkpoint(
            folder, self.network, cfg.policy.arch, cfg.policy.arch_kwargs(), info,
            optimizer=self.optimizer.state_dict() if with_state else None,
            rng=rng_state() if with_state else None)

    def extra_info(self) -> dict[str, Any]:
        """What an algorithm adds to a checkpoint's ``meta.json``."""
        return {}

    def save_latest(self) -> None:
        """The commit point of a step: TensorBoard flushed first, then ``latest/`` as a whole."""
        self.logger.dump(self.num_timesteps)
        self.save(self.run_dir / "latest")
        self.next_save = _next_multiple(self.num_timesteps, self.cfg.train.save_every)

    @property
    def stopping(self) -> bool:
        """A SIGINT or SIGTERM asked the run to stop."""
        return self.stop.signum is not None

    def tensorboard(self):
        """SB3's logger on ``tb/``; a resumed run's writer purges the scalars a killed session
        logged after the checkpoint it resumes from (TensorBoard's ``purge_step``), so no step is
        shown twice."""
        from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
        from torch.utils.tensorboard import SummaryWriter

        purge_step = None
        if self.resume:
            purge_step = self.num_timesteps + 1
            wait_for_later_event_file(self.run_dir / "tb")

        class Output(TensorBoardOutputFormat):
            def __init__(self, folder: str) -> None:  # SB3's, with purge_step
                self.writer = SummaryWriter(log_dir=folder, purge_step=purge_step)
                self._is_closed = False

        folder = str(self.run_dir / "tb")
        return Logger(folder, [Output(folder)])

    def wall_seconds(self) -> float:
        return self.wall_before + (time.time() - self.started)

    def out_of_time(self) -> bool:
        """True once ``train.max_wall_seconds`` of training have passed."""
        limit = self.cfg.train.max_wall_seconds
        return limit is not None and self.wall_seconds() >= limit

    def evaluate(self, games: int, progress: bool = False) -> dict[str, Any]:
        from .evaluate import evaluate

        agent = LearnedAgent(self.network, self.cfg.policy.features, name="learner")
        was_training = self.network.training
        results = {}
        try:
            for opponent in self.cfg.eval.opponents:
                report = evaluate(agent, opponent, games=games, seed=self.cfg.eval.seed,
                                  progress=progress)
                results[opponent] = report.to_dict(volatile=False)
        finally:
            self.network.train(was_training)
        return results

    def periodic(self) -> None:
        """Evaluate, log, checkpoint latest (and best)."""
        cfg = self.cfg
        logger = self.logger
        steps = self.num_timesteps
        started = time.time()
        results = self.evaluate(cfg.eval.games)
        self.eval_seconds += time.time() - started
        for opponent, r in results.items():
            logger.record(f"eval/win_rate/{opponent}", r["win_rate"])
            logger.record(f"eval/points_per_game/{opponent}", r["points_per_game"])
            regret = (r.get("discard_regret") or {}).get("agent")
            if regret is not None:
                logger.record("game/discard_regret", regret)
        if cfg.eval.best_by == "mean":
            score = float(np.mean([r["win_rate"] for r in results.values()]))
        else:
            score = results[cfg.eval.best_by]["win_rate"]
        self.last_eval = {"step": steps, "score": score,
                          "win_rate": {o: r["win_rate"] for o, r in results.items()}}
        improved = self.best_score is None or score > self.best_score
        if improved:
            self.best_score, self.best_step = score, steps
        # the order makes latest/ the commit point (training.recovery): what belongs to this
        # step is on disk before it, best/ follows it
        logger.dump(steps)
        line = {"step": steps, "wall_seconds": round(self.wall_seconds(), 1), "score": score,
                "best": improved, "results": results}
        append_line(self.run_dir / EVALS_FILE, json.dumps(line))
        self.save_latest()
        if improved:
            copy_checkpoint(self.run_dir / "latest", self.run_dir / "best",
                            names=("policy.safetensors",))
        if self.on_eval is not None:
            self.on_eval({**line, "run_dir": str(self.run_dir),
                          "best_checkpoint": str(self.run_dir / "best")})
        self.print_progress(results)

    def print_progress(self, results: dict[str, Any]) -> None:
        rates = "  ".join(f"{o} {r['win_rate']:.1%}" for o, r in results.items())
        print(f"step {self.num_timesteps:>10,}  {self.wall_seconds():7.0f} s  win rate: {rates}",
              flush=True)

    def snapshot(self) -> None:
        from .selfplay import add_snapshot

        add_snapshot(self.pool_dir, self.num_timesteps, self.cfg.selfplay.pool_size,
                     lambda folder: self.save(folder, with_state=False))
        if self.self_slots is not None:
            self.self_slots.refresh()

    # -- the schedule --

    def schedule_from(self, steps: int) -> None:
        """The first evaluation, snapshot and save due after ``steps``."""
        self.next_eval = _next_multiple(steps, self.cfg.eval.every)
        self.next_snapshot = _next_multiple(steps, self.cfg.selfplay.snapshot_every)
        self.next_save = _next_multiple(steps, self.cfg.train.save_every)

    def between_updates(self) -> None:
        """Snapshots, evaluations and saves that fall due; called when the weights are those of
        every step counted so far (after an update, before the next rollout). ``latest/`` comes
        last (it is the commit point of the step)."""
        steps = self.num_timesteps
        self.steps_at_update = steps
        # the update's scalars go out now, at its step: left pending, SB3 would write them at the
        # next rollout's step, where the next update's may land too (a step logged twice)
        self.logger.dump(steps)
        if self.uses_pool and steps >= self.next_snapshot:
            self.snapshot()
            self.next_snapshot = _next_multiple(steps, self.cfg.selfplay.snapshot_every)
        if steps >= self.next_eval:
            self.periodic()
            self.next_eval = _next_multiple(steps, self.cfg.eval.every)
        elif steps >= self.next_save:
            self.save_latest()

    def log_speed(self) -> None:
        """Steps per second of this session, evaluations excluded, and where the time went."""
        elapsed = time.time() - self.started - self.eval_seconds
        steps = self.num_timesteps - self.steps_at_start
        self.logger.record("charts/SPS", steps / elapsed if elapsed > 0 else 0.0)
        for part, seconds in self.timings.items():
            self.logger.record(f"time/{part}_seconds", seconds)

    # -- the loop --

    def train(self) -> None:
        cfg = self.cfg
        remaining = cfg.train.total_timesteps - self.num_timesteps
        self.started = time.time()
        self.eval_seconds = 0.0
        self.steps_at_start = self.steps_at_update = self.num_timesteps
        self.schedule_from(self.num_timesteps)
        if not self.resume:
            if cfg.eval.at_start:
                self.periodic()
            else:
                self.save_latest()  # from here on the run can always be resumed
        if remaining > 0 and not self.out_of_time() and not self.stopping:
            self.learn(remaining)
        if self.stopping:
            if self.rollout_cut:
                # the steps of a rollout cut short were not learned from: the checkpoint counts
                # the steps its weights have seen
                self.num_timesteps = self.steps_at_update
            self.save_latest()
            self.close()
            return
        if self.uses_pool and not (self.pool_dir / f"step_{self.num_timesteps:010d}").exists():
            self.snapshot()
        if self.last_eval is None or self.last_eval["step"] != self.num_timesteps:
            self.periodic()
        self.close()

    def close(self) -> None:  # noqa: B027 - optional: an algorithm with envs to close overrides it
        """Release what ``build`` opened (the envs)."""

    def summary(self) -> dict[str, Any]:
        seconds = time.time() - self.started
        steps = self.num_timesteps - self.steps_at_start
        training_seconds = seconds - self.eval_seconds
        return {"run": self.run_dir.name, "algo": self.cfg.algo, "engine": self.cfg.train.engine,
                "num_timesteps": self.num_timesteps,
                "session_steps": steps, "session_seconds": round(seconds, 1),
                "steps_per_second": round(steps / training_seconds, 1)
                if training_seconds > 0 else None,
                "time_split_seconds": {k: round(v, 1) for k, v in self.timings.items()},
                "eval_seconds": round(self.eval_seconds, 1),
                "wall_seconds": round(self.wall_seconds(), 1), "best_score": self.best_score,
                "last_eval": self.last_eval,
                "interrupted_by": signal.Signals(self.stop.signum).name if self.stopping else None}


def _next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` above ``steps``."""
    return (steps // every + 1) * every


def progress_bar(enabled: bool, total: int):
    """A tqdm bar over ``total`` steps (shown only when ``enabled``: ``train.progress_bar``)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="step", unit_scale=True, disable=not enabled, leave=False,
                dynamic_ncols=True)

