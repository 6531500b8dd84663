"""``crib train``: MaskablePPO on the single-agent env against a weighted opponent mixture.

A run lives in ``OUTPUT_DIR/RUN_NAME/`` with ``RUN_NAME = {env}__{config}__{seed}__{time}``:

* ``config.yaml`` - the resolved config (every default filled in);
* ``tb/`` - TensorBoard events: SB3's own scalars (``rollout/``, ``train/``, ``time/``) next to
  ``charts/SPS``, ``game/pegging_per_deal``, ``game/hand_per_deal``, ``game/crib_per_deal`` (the
  learner's points per deal in training episodes), ``game/discard_regret`` and
  ``eval/win_rate/<opponent>``, ``eval/points_per_game/<opponent>`` from the periodic evaluations;
* ``latest/`` - the newest checkpoint (with optimizer and RNG state for ``--resume``);
* ``best/`` - the checkpoint with the best evaluation so far (``eval.best_by``);
* ``pool/`` - frozen snapshots for the ``self`` opponent;
* ``evals.jsonl`` - one line per evaluation (what ``crib plot`` draws); ``summary.json``.

``--resume`` continues the newest run of the same config name under the output folder from its
``latest`` checkpoint: step count, optimizer state and RNG state carry on, up to the config's
``train.total_timesteps``.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned import LearnedAgent, load_network, resolve_checkpoint

from .checkpoint import (
    atomic_write_text,
    copy_checkpoint,
    load_training_state,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from .config import RunConfig, dump_config, load_config

DEFAULT_OUTPUT = Path("checkpoints")
BEAT_GREEDY = 0.57  # the win rate the issue asks of the champion against greedy


def seed_everything(seed: int) -> None:
    """The one place where the learner's generators are seeded (envs are seeded by the VecEnv)."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - SB3 draws its minibatches from the global generator
    torch.manual_seed(seed)


def make_env(rank: int, config: dict[str, Any], pool_dir: str | None):
    """Build one training environment (runs inside the env process)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    from stable_baselines3.common.monitor import Monitor

    from crib_env.single import SingleAgentCribbageEnv

    from .policy import CardFeatureWrapper
    from .selfplay import build_opponent

    cfg = RunConfig.model_validate(config)
    specs = [(o.agent, o.weight) for o in cfg.opponents]
    opponent = build_opponent(specs, Path(pool_dir) if pool_dir else None, cfg.selfplay.fallback,
                              seed=cfg.seed * 100 + rank)
    env = SingleAgentCribbageEnv(opponent=opponent, seat=cfg.env.seat, reward=cfg.env.reward,
                                 episode=cfg.env.episode, target_score=cfg.env.target_score)
    return Monitor(CardFeatureWrapper(env, cfg.policy.features))


def run_name(cfg: RunConfig) -> str:
    return f"{cfg.env_id}__{cfg.name}__{cfg.seed}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def find_run_to_resume(output_dir: Path, name: str) -> Path:
    """The newest run folder under ``output_dir`` made by config ``name`` with a latest
    checkpoint."""
    candidates = []
    if output_dir.exists():
        for run in output_dir.iterdir():
            parts = run.name.split("__")
            if len(parts) == 4 and parts[1] == name and (run / "latest" / "meta.json").exists():
                candidates.append(run)
    if not candidates:
        raise FileNotFoundError(f"--resume: no run of config {name!r} with a latest checkpoint "
                                f"under {output_dir}")
    return max(candidates, key=lambda p: p.name.split("__")[3])


class Trainer:
    """One run: builds the envs and the model, trains, evaluates, checkpoints."""

    def __init__(self, cfg: RunConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.pool_dir = run_dir / "pool"
        self.uses_pool = any(o.agent == "self" for o in cfg.opponents)
        self.best_score: float | None = None
        self.first_beat_greedy: dict[str, float] | None = None
        self.wall_before = 0.0  # training seconds of earlier sessions of this run (resume)
        self.last_eval: dict[str, Any] | None = None

    # -- set-up --

    def build(self) -> None:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.logger import configure
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        from .policy import NetworkPolicy

        cfg = self.cfg
        torch.set_num_threads(cfg.train.torch_threads)
        # -- seeding: Python, NumPy and Torch here; each env gets seed + rank from the VecEnv --
        seed_everything(cfg.seed)
        config = cfg.model_dump(mode="json")
        pool = str(self.pool_dir) if self.uses_pool else None
        fns = [functools.partial(make_env, rank, config, pool) for rank in range(cfg.train.n_envs)]
        vec_cls = SubprocVecEnv if cfg.train.vec_env == "subproc" and cfg.train.n_envs > 1 \
            else DummyVecEnv
        self.env = vec_cls(fns)
        ppo = cfg.ppo.model_dump()
        self.model = MaskablePPO(
            NetworkPolicy, self.env, device="cpu", verbose=0, seed=None,
            policy_kwargs={"arch": cfg.policy.arch, "arch_kwargs": cfg.policy.arch_kwargs()},
            **ppo)
        self.model.set_logger(configure(str(self.run_dir / "tb"), ["tensorboard"]))
        env_seed = cfg.seed
        if self.resume:
            self._restore(self.run_dir / "latest")
            env_seed = cfg.seed + self.model.num_timesteps  # fresh deals, not a replay of step 0
        elif cfg.init_from:
            net, _ = load_network(cfg.init_from)
            self.network.load_state_dict(net.state_dict())
        self.env.seed(env_seed)

    @property
    def network(self) -> torch.nn.Module:
        return self.model.policy.network

    def _restore(self, folder: Path) -> None:
        meta, optimizer, rng = load_training_state(folder)
        if meta.get("arch") != self.cfg.policy.arch or \
                meta.get("arch_kwargs") != self.cfg.policy.arch_kwargs():
            raise ValueError(f"--resume: {folder} holds a {meta.get('arch')!r} network with "
                             f"{meta.get('arch_kwargs')}, the config asks for "
                             f"{self.cfg.policy.arch!r} with {self.cfg.policy.arch_kwargs()}")
        net, _ = load_network(folder)
        self.network.load_state_dict(net.state_dict())
        self.model.policy.optimizer.load_state_dict(optimizer)
        training = meta["training"]
        self.model.num_timesteps = int(training["num_timesteps"])
        self.model._n_updates = int(training["n_updates"])
        self.best_score = training.get("best_score")
        self.first_beat_greedy = training.get("first_beat_greedy")
        self.wall_before = float(training.get("wall_seconds", 0.0))
        self.last_eval = meta.get("eval")
        set_rng_state(rng)

    # -- checkpoints and evaluation --

    def save(self, folder: Path, with_state: bool = True) -> Path:
        cfg = self.cfg
        steps = self.model.num_timesteps
        info = {
            "name": f"{self.run_dir.name}@{steps}",
            "run": self.run_dir.name,
            "config": cfg.name,
            "num_timesteps": steps,
            "training": {
                "num_timesteps": steps,
                "n_updates": self.model._n_updates,
                "best_score": self.best_score,
                "first_beat_greedy": self.first_beat_greedy,
                "wall_seconds": self.wall_seconds(),
            },
            "eval": self.last_eval,
        }
        return save_checkpoint(
            folder, self.network, cfg.policy.arch, cfg.policy.arch_kwargs(), info,
            optimizer=self.model.policy.optimizer.state_dict() if with_state else None,
            rng=rng_state() if with_state else None)

    def wall_seconds(self) -> float:
        return self.wall_before + (time.time() - self.started)

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

    def periodic(self, logger) -> None:
        """Evaluate, log, checkpoint latest (and best), snapshot for self-play."""
        cfg = self.cfg
        steps = self.model.num_timesteps
        results = self.evaluate(cfg.eval.games)
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
        greedy = results.get("greedy")
        if greedy and greedy["win_rate"] >= BEAT_GREEDY and self.first_beat_greedy is None:
            self.first_beat_greedy = {"step": steps, "wall_seconds": round(self.wall_seconds(), 1)}
        self.last_eval = {"step": steps, "score": score,
                          "win_rate": {o: r["win_rate"] for o, r in results.items()}}
        improved = self.best_score is None or score > self.best_score
        if improved:
            self.best_score = score
        self.save(self.run_dir / "latest")
        if improved:
            copy_checkpoint(self.run_dir / "latest", self.run_dir / "best",
                            names=("policy.safetensors",))
        line = {"step": steps, "wall_seconds": round(self.wall_seconds(), 1), "score": score,
                "best": improved, "results": results}
        with open(self.run_dir / "evals.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        logger.dump(steps)

    def snapshot(self) -> None:
        from .selfplay import add_snapshot

        staging = self.run_dir / ".snapshot"
        self.save(staging, with_state=False)
        add_snapshot(self.pool_dir, staging, self.model.num_timesteps,
                     self.cfg.selfplay.pool_size)

    # -- the loop --

    def train(self) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self
        cfg = self.cfg

        class Callback(BaseCallback):
            def _on_training_start(self) -> None:
                self.stats: dict[str, list[float]] = {"pegging_per_deal": [], "hand_per_deal": [],
                                                      "crib_per_deal": []}
                self.t0, self.s0 = time.time(), self.model.num_timesteps
                every = cfg.eval.every
                self.next_eval = (self.s0 // every + 1) * every
                snap = cfg.selfplay.snapshot_every
                self.next_snapshot = (self.s0 // snap + 1) * snap

            def _on_step(self) -> bool:
                for info in self.locals.get("infos", ()):
                    stats = info.get("deal_stats")
                    if stats:
                        for key in self.stats:
                            self.stats[key].append(stats[key])
                return True

            def _on_rollout_start(self) -> None:
                # Here, not in _on_step: the previous rollout's update is done, so the weights
                # saved and evaluated are those of every step counted so far.
                steps = self.model.num_timesteps
                if trainer.uses_pool and steps >= self.next_snapshot:
                    trainer.snapshot()
                    self.next_snapshot = (steps // cfg.selfplay.snapshot_every + 1) \
                        * cfg.selfplay.snapshot_every
                if steps >= self.next_eval:
                    trainer.periodic(self.logger)
                    self.next_eval = (steps // cfg.eval.every + 1) * cfg.eval.every

            def _on_rollout_end(self) -> None:
                elapsed = time.time() - self.t0
                self.logger.record("charts/SPS", (self.model.num_timesteps - self.s0) / elapsed
                                   if elapsed > 0 else 0.0)
                for key, values in self.stats.items():
                    if values:
                        self.logger.record(f"game/{key}", float(np.mean(values)))
                    values.clear()

        remaining = cfg.train.total_timesteps - self.model.num_timesteps
        self.started = time.time()
        self.steps_at_start = self.model.num_timesteps
        if cfg.eval.at_start and self.model.num_timesteps == 0:
            self.periodic(self.model.logger)
        if remaining > 0:
            self.model.learn(total_timesteps=remaining, callback=Callback(),
                             reset_num_timesteps=False, progress_bar=cfg.train.progress_bar,
                             log_interval=1)
        if self.uses_pool and not (self.pool_dir / f"step_{self.model.num_timesteps:010d}").exists():
            self.snapshot()
        if self.last_eval is None or self.last_eval["step"] != self.model.num_timesteps:
            self.periodic(self.model.logger)
        self.env.close()

    def summary(self) -> dict[str, Any]:
        seconds = time.time() - self.started
        steps = self.model.num_timesteps - self.steps_at_start
        return {"run": self.run_dir.name, "num_timesteps": self.model.num_timesteps,
                "session_steps": steps, "session_seconds": round(seconds, 1),
                "steps_per_second": round(steps / seconds, 1) if seconds > 0 else None,
                "wall_seconds": round(self.wall_seconds(), 1), "best_score": self.best_score,
                "first_beat_greedy": self.first_beat_greedy, "last_eval": self.last_eval}


def _final_table(cfg: RunConfig, run_dir: Path, trainer: Trainer) -> list[dict[str, Any]]:
    from rich.console import Console
    from rich.table import Table

    from .evaluate import evaluate

    best = resolve_checkpoint(run_dir)
    net, meta = load_network(best)
    agent = LearnedAgent(net, bool(meta["arch_kwargs"].get("features")), name=best.name)
    rows = []
    table = Table(title=f"{run_dir.name}/{best.name} ({meta.get('num_timesteps')} steps), "
                        f"{cfg.eval.final_games} games each, seed {cfg.eval.seed}")
    for column in ("opponent", "win rate", "95% CI", "points/game", "95% CI"):
        table.add_column(column, justify="right")
    for opponent in cfg.eval.opponents:
        r = evaluate(agent, opponent, games=cfg.eval.final_games, seed=cfg.eval.seed,
                     progress=True)
        rows.append(r.to_dict())
        table.add_row(opponent, f"{r.win_rate:.1%}",
                      f"{r.win_rate_ci95[0]:.1%} - {r.win_rate_ci95[1]:.1%}",
                      f"{r.points_per_game:+.2f}",
                      f"{r.points_per_game_ci95[0]:+.2f} - {r.points_per_game_ci95[1]:+.2f}")
    Console().print(table)
    return rows


def train(cfg: RunConfig, output_dir: Path | None = None, resume: bool = False) -> Path:
    """Run (or resume) training for ``cfg``; returns the run folder."""
    output_dir = Path(output_dir) if output_dir is not None else DEFAULT_OUTPUT
    if resume:
        run_dir = find_run_to_resume(output_dir, cfg.name)
    else:
        run_dir = output_dir / run_name(cfg)
        run_dir.mkdir(parents=True, exist_ok=False)
    atomic_write_text(run_dir / "config.yaml", dump_config(cfg))
    trainer = Trainer(cfg, run_dir, resume)
    trainer.build()
    trainer.train()
    summary = trainer.summary()
    if cfg.eval.final_games:
        summary["final"] = _final_table(cfg, run_dir, trainer)
    atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return run_dir


def train_command(config: Path, output_dir: Path | None = None, resume: bool = False) -> Path:
    """``crib train``: load and validate the config, train, say where everything is."""
    cfg = load_config(config)
    run_dir = train(cfg, output_dir=output_dir, resume=resume)
    best = run_dir / "best" if (run_dir / "best").exists() else run_dir / "latest"
    print(f"run:         {run_dir}")
    print(f"checkpoint:  {best}   (crib evaluate --agent {best})")
    where = "" if output_dir is None else f" --output-dir {output_dir}"
    print(f"latest:      {run_dir / 'latest'}   (crib train --config {config}{where} --resume)")
    print(f"tensorboard: tensorboard --logdir {run_dir / 'tb'}")
    print(f"curves:      crib plot {run_dir}")
    return run_dir
