"""``crib train``: MaskablePPO or Deep Monte-Carlo against a weighted opponent mixture.

``train.engine: fast`` (the default) steps all ``train.n_envs`` games in lockstep on the compiled
core (``crib_env.vector``), every opponent acting for all the rows that face it in one call
(``training.batch_opponents``); ``python`` runs one ``SingleAgentCribbageEnv`` per env (needed for
an opponent that keeps memory, the expert). ``algo: ppo`` is MaskablePPO; ``algo: dmc`` is Deep
Monte-Carlo (``training.dmc``), fast engine only.

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
``train.total_timesteps``.

Crash safety: every checkpoint folder is replaced as a whole (``training.files``), and ``latest/``
is written last for its step, so a run killed at any moment resumes from its last ``latest/``,
losing at most the steps since that save (``training.recovery`` drops what came after it; the
resumed TensorBoard writer purges the later scalars). SIGINT (Ctrl-C) and SIGTERM stop the run
after the current step: ``latest/`` and ``summary.json`` are saved, the resume command printed,
and the exit status is 130 / 143; a second signal stops at once.
"""

from __future__ import annotations

import functools
import json
import os
import random
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned import LearnedAgent, load_network, resolve_checkpoint
from crib_env.cards import N_CARDS

from .checkpoint import (
    copy_checkpoint,
    load_training_state,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from .config import SELF, STATEFUL_OPPONENTS, RunConfig, dump_config
from .files import append_line, atomic_write_text, check_output_folder, remove_folder
from .interrupt import StopOnSignal, TrainingInterrupted
from .recovery import EVALS_FILE, recover_run, rewind_run
from .runs import find_run_to_resume, run_name

DEFAULT_OUTPUT = Path("checkpoints")


def seed_everything(seed: int) -> None:
    """The one place where the learner's generators are seeded (envs are seeded by the VecEnv)."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - SB3 draws its minibatches from the global generator
    torch.manual_seed(seed)


def initial_network(cfg: RunConfig) -> torch.nn.Module:
    """The network a DMC or distillation run starts from: built right after seeding, so a seed
    fixes it (``bench/step0_checkpoint.py`` saves it for "what training added"). PPO's is built
    inside SB3's policy instead."""
    from agents.learned import build_network

    seed_everything(cfg.seed)
    return build_network(cfg.policy.arch, **cfg.policy.arch_kwargs())


def make_env(rank: int, config: dict[str, Any], pool_dir: str | None, worker: bool = False):
    """Build one training environment (``worker``: inside its own env process)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    if worker:
        # Ctrl-C reaches the whole process group and a scheduler may signal every process: the
        # trainer decides when to stop (training.interrupt) and closes its workers itself
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
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

class Trainer:
    """One run: builds the envs and the model, trains, evaluates, checkpoints.

    The algorithm-specific parts (``PPOTrainer``, ``DMCTrainer``) build the learner and run its
    loop; this class owns what they share: seeding, evaluation, checkpoints, the self-play pool
    and the schedule of evaluations and snapshots between updates.
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

    def build(self) -> None:
        raise NotImplementedError

    def learn(self, steps: int) -> None:
        raise NotImplementedError

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
        elif self.cfg.init_from:
            net, _ = load_network(self.cfg.init_from)
            self.network.load_state_dict(net.state_dict())

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

        purge_step = self.num_timesteps + 1 if self.resume else None

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

    def close(self) -> None:
        pass

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


class PPOTrainer(Trainer):
    """MaskablePPO (sb3-contrib) on the fast vector env or on Python envs."""

    def build(self) -> None:
        from sb3_contrib import MaskablePPO

        from .policy import NetworkPolicy

        cfg = self.cfg
        torch.set_num_threads(cfg.train.torch_threads)
        seed_everything(cfg.seed)
        self.env = self._fast_env() if cfg.train.engine == "fast" else self._python_envs()
        self.model = MaskablePPO(
            NetworkPolicy, self.env, device="cpu", verbose=0, seed=None,
            policy_kwargs={"arch": cfg.policy.arch, "arch_kwargs": cfg.policy.arch_kwargs()},
            **cfg.ppo.model_dump())
        self.start_weights()
        self.model.set_logger(self.tensorboard())
        self.env.seed(self.env_seed())

    def _fast_env(self):
        from agents.learned import input_size, network_input_batch

        from .sb3_vec_env import SB3VecEnv

        cfg = self.cfg
        features = cfg.policy.features

        def inputs(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return network_input_batch(obs, masks, features)

        return SB3VecEnv(cfg.train.n_envs, opponent=self.fast_opponents(), seat=cfg.env.seat,
                          reward=cfg.env.reward, episode=cfg.env.episode,
                          target_score=cfg.env.target_score,
                          obs_transform=inputs if features else None,
                          obs_size=input_size(features))

    def _python_envs(self):
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        cfg = self.cfg
        config = cfg.model_dump(mode="json")
        pool = str(self.pool_dir) if self.uses_pool else None
        subproc = cfg.train.vec_env == "subproc" and cfg.train.n_envs > 1
        fns = [functools.partial(make_env, rank, config, pool, worker=subproc)
               for rank in range(cfg.train.n_envs)]
        return (SubprocVecEnv if subproc else DummyVecEnv)(fns)

    @property
    def network(self) -> torch.nn.Module:
        return self.model.policy.network

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        return self.model.policy.optimizer

    @property
    def logger(self):
        return self.model.logger

    @property
    def num_timesteps(self) -> int:
        return self.model.num_timesteps

    @num_timesteps.setter
    def num_timesteps(self, value: int) -> None:
        self.model.num_timesteps = value

    @property
    def n_updates(self) -> int:
        return self.model._n_updates

    @n_updates.setter
    def n_updates(self, value: int) -> None:
        self.model._n_updates = value

    def learn(self, steps: int) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self

        class Callback(BaseCallback):
            def _on_training_start(self) -> None:
                self.stats: dict[str, list[float]] = {"pegging_per_deal": [], "hand_per_deal": [],
                                                      "crib_per_deal": []}
                self.rollout_started = time.time()

            def _on_step(self) -> bool:
                for info in self.locals.get("infos", ()):
                    stats = info.get("deal_stats")
                    if stats:
                        for key in self.stats:
                            self.stats[key].append(stats[key])
                if trainer.stopping:
                    trainer.rollout_cut = True
                    return False
                return not trainer.out_of_time()

            def _on_rollout_start(self) -> None:
                # The previous rollout's update is done here, so the weights saved and evaluated
                # are those of every step counted so far.
                if hasattr(self, "rollout_ended"):
                    trainer.timings["update"] += time.time() - self.rollout_ended
                trainer.between_updates()
                self.rollout_started = time.time()

            def _on_rollout_end(self) -> None:
                self.rollout_ended = time.time()
                trainer.timings["env"] += self.rollout_ended - self.rollout_started
                trainer.log_speed()
                for key, values in self.stats.items():
                    if values:
                        self.logger.record(f"game/{key}", float(np.mean(values)))
                    values.clear()

        self.model.learn(total_timesteps=steps, callback=Callback(), reset_num_timesteps=False,
                         progress_bar=self.cfg.train.progress_bar, log_interval=1)

    def close(self) -> None:
        self.env.close()


class DMCTrainer(Trainer):
    """Deep Monte-Carlo on the fast vector env (``training.dmc``)."""

    def build(self) -> None:
        from crib_env.vector import CribbageVectorEnv

        cfg = self.cfg
        torch.set_num_threads(cfg.train.torch_threads)
        self.network = initial_network(cfg)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=cfg.dmc.learning_rate)
        self.num_timesteps = 0
        self.n_updates = 0
        self.env = CribbageVectorEnv(cfg.train.n_envs, opponent=self.fast_opponents(),
                                     seat=cfg.env.seat, reward="points", episode=cfg.env.episode,
                                     target_score=cfg.env.target_score)
        self.start_weights()
        self.logger = self.tensorboard()

    def learn(self, steps: int) -> None:
        from agents.learned import network_input_batch

        from .dmc import DealBuffer, SampleStore, choose, q_update

        cfg = self.cfg
        d = cfg.dmc
        env = self.env
        features = cfg.policy.features
        rng = np.random.default_rng([cfg.seed, self.num_timesteps])
        obs, info = env.reset(seed=self.env_seed())
        masks = info["action_mask"]
        width = network_input_batch(obs[:1], masks[:1], features).shape[1]
        deals = DealBuffer.empty(env.num_envs, width)
        store = SampleStore(width, d.samples_per_update)
        end = self.num_timesteps + steps
        margins: deque[float] = deque(maxlen=100)  # final margins of the latest training games
        games = 0
        progress = _progress(self.cfg.train.progress_bar, steps)
        while self.num_timesteps < end and not self.out_of_time():
            self.between_updates()
            while not store.full() and self.num_timesteps < end and not self.stopping:
                t0 = time.time()
                inputs = network_input_batch(obs, masks, features) if features else obs
                with torch.inference_mode():
                    self.network.eval()
                    q = self.network(torch.from_numpy(inputs))[:, :N_CARDS].numpy()
                t1 = time.time()
                actions = choose(q, masks, d.epsilon, rng)
                deals.record(inputs, masks, actions)
                seats = env.seats.copy()  # a finished game's row is restarted with a new seat
                obs, rewards, done, _, info = env.step(actions)
                masks = info["action_mask"]
                deals.reward(rewards)
                ended = np.flatnonzero(info["_deal_points"])
                if ended.size:
                    store.add(*deals.close(ended, info["deal_points"][ended], seats[ended],
                                           d.controllable_return))
                for own, opp in info["final_scores"][done]:
                    margins.append(float(own - opp))
                    games += 1
                self.num_timesteps += env.num_envs
                progress.update(env.num_envs)
                self.timings["forward"] += t1 - t0
                self.timings["env"] += time.time() - t1
            if self.stopping:
                self.rollout_cut = True
                break  # train() saves at the last update's step count
            if store.size < d.batch_size:
                break  # the budget ended before a full minibatch: nothing more to learn from
            t0 = time.time()
            stats = q_update(self.network, self.optimizer, store, d.batch_size, d.passes,
                             d.max_grad_norm, rng)
            self.timings["update"] += time.time() - t0
            store.clear()
            self.n_updates += 1
            for key, value in stats.items():
                self.logger.record(f"train/{key}", value)
            self.logger.record("train/epsilon", d.epsilon)
            self.logger.record("train/n_updates", self.n_updates)
            if margins:
                self.logger.record("rollout/ep_rew_mean", float(np.mean(margins)))
                self.logger.record("rollout/games", games)
            self.log_speed()
            self.logger.dump(self.num_timesteps)
        progress.close()


class DistillTrainer(Trainer):
    """Policy distillation (``training.distill``): record the teacher, then fit the network to
    its choices. A step is one recorded decision learned from; the minibatches walk a fixed
    permutation of the training decisions per epoch, so a resumed run continues exactly."""

    def build(self) -> None:
        from agents.learned import network_input_batch

        from .distill import load_recording, record, recorded_without_margins, rotation

        cfg = self.cfg
        d = cfg.distill
        torch.set_num_threads(cfg.train.torch_threads)
        self.network = initial_network(cfg)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=d.learning_rate)
        self.num_timesteps = 0
        self.n_updates = 0
        self.recording = Path(d.recording) if d.recording else self.run_dir / "recording"
        opponents = rotation([(o.agent, o.weight) for o in cfg.opponents])
        if d.soft > 0 and self.recording.exists():
            old = recorded_without_margins(self.recording)
            if old:
                raise ValueError(f"distill.soft: {len(old)} chunks of {self.recording} (the "
                                 f"first: {old[0].name}) hold the teacher's cards without its "
                                 f"values; record into a new distill.recording or set "
                                 f"distill.soft: 0")
        missing = record(self.recording, d.teacher, opponents, d.chunks, cfg.seed,
                         workers=d.workers, progress=cfg.train.progress_bar,
                         should_stop=lambda: self.stopping, games=d.chunk_games, ray=d.ray)
        self.start_weights()
        self.logger = self.tensorboard()
        if missing:  # stopped while recording: train() saves step 0 and the run resumes here
            self.data = None
            return
        self.data, held, self.recording_seconds = load_recording(self.recording, d.chunks)
        self.held = (torch.from_numpy(network_input_batch(held.obs, held.masks,
                                                          cfg.policy.features)),
                     torch.from_numpy(held.masks), torch.from_numpy(held.cards.astype(np.int64)))
        if d.soft == 0:
            self.data.margins = None  # the cards alone: no need to keep the values in memory
        print(f"distill: {len(self.data):,} decisions to learn from, {len(held):,} held out, "
              f"recorded in {self.recording}", flush=True)

    def extra_info(self) -> dict[str, Any]:
        if self.data is None:
            return {}
        return {"distill": {"recording": str(self.recording), "decisions": len(self.data),
                            "held_out": len(self.held[2]),
                            "recording_seconds": round(self.recording_seconds, 1)}}

    def periodic(self) -> None:
        from .distill import agreement

        if self.data is not None and len(self.held[2]):
            loss, agree = agreement(self.network, *self.held)
            self.logger.record("train/held_out_loss", loss)
            self.logger.record("train/held_out_agreement", agree)
        super().periodic()

    def learn(self, steps: int) -> None:
        from agents.learned import network_input_batch

        from .distill import cosine_rate, imitation_step, minibatch, teacher_targets

        if self.data is None:
            return
        cfg = self.cfg
        d = cfg.distill
        data = self.data
        end = self.num_timesteps + steps
        losses: list[float] = []
        progress = _progress(cfg.train.progress_bar, steps)
        self.network.train()
        while self.num_timesteps < end and not self.out_of_time() and not self.stopping:
            if self.num_timesteps >= min(self.next_eval, self.next_save):
                if losses:
                    self.logger.record("train/loss", float(np.mean(losses)))
                    losses.clear()
                self.log_speed()
                self.between_updates()
                self.network.train()
            rows = minibatch(cfg.seed, len(data), self.num_timesteps, d.batch_size, end)
            t0 = time.time()
            inputs = network_input_batch(data.obs[rows], data.masks[rows], cfg.policy.features)
            t1 = time.time()
            for group in self.optimizer.param_groups:
                group["lr"] = cosine_rate(d.learning_rate, self.num_timesteps,
                                          cfg.train.total_timesteps)
            masks = torch.from_numpy(data.masks[rows])
            targets = teacher_targets(
                torch.from_numpy(data.cards[rows].astype(np.int64)), masks,
                None if data.margins is None else torch.from_numpy(data.margins[rows]),
                d.soft, d.temperature)
            losses.append(imitation_step(self.network, self.optimizer, torch.from_numpy(inputs),
                                         masks, targets))
            self.timings["forward"] += t1 - t0
            self.timings["update"] += time.time() - t1
            self.num_timesteps += len(rows)
            self.n_updates += 1
            progress.update(len(rows))
        if losses:
            self.logger.record("train/loss", float(np.mean(losses)))
        self.logger.record("train/learning_rate", self.optimizer.param_groups[0]["lr"])
        self.logger.record("distill/recording_seconds", self.recording_seconds)
        progress.close()


def _next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` above ``steps``."""
    return (steps // every + 1) * every


def _progress(enabled: bool, total: int):
    from tqdm import tqdm

    return tqdm(total=total, unit="step", unit_scale=True, disable=not enabled, leave=False,
                dynamic_ncols=True)


TRAINERS = {"ppo": PPOTrainer, "dmc": DMCTrainer, "distill": DistillTrainer}


def final_evaluations(cfg: RunConfig, run_dir: Path) -> list[dict[str, Any]]:
    """The run's best checkpoint against each of ``eval.opponents`` (``eval.final_games`` games,
    ``eval.seed``): each report's JSON, in the config's order, for ``summary.json["final"]``
    (``crib_cli.train`` prints them as a table)."""
    from .evaluate import evaluate

    best = resolve_checkpoint(run_dir)
    net, meta = load_network(best)
    agent = LearnedAgent(net, bool(meta["arch_kwargs"].get("features")), name=best.name)
    return [evaluate(agent, opponent, games=cfg.eval.final_games, seed=cfg.eval.seed,
                     progress=True).to_dict()
            for opponent in cfg.eval.opponents]


def check_named_agents(cfg: RunConfig) -> None:
    """Load, once, every agent the config names (training opponents, the self-play fallback, the
    evaluation opponents) before anything of the run is written, so that a missing or corrupt
    checkpoint is one line naming its field instead of worker tracebacks or a failure at the
    first evaluation."""
    from agents.registry import make_agent

    named = [(f"opponents[{i}].agent", o.agent) for i, o in enumerate(cfg.opponents)
             if o.agent != SELF]
    named.append(("selfplay.fallback", cfg.selfplay.fallback))
    named += [(f"eval.opponents[{i}]", name) for i, name in enumerate(cfg.eval.opponents)]
    if cfg.algo == "distill":
        named.append(("distill.teacher", cfg.distill.teacher))
    batch = cfg.train.engine == "fast"
    for field, spec in named:
        try:
            agent = make_agent(spec, seed=0)
        except Exception as err:  # a bad checkpoint raises many types; all are this field's fault
            detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ValueError(f"{field}: {detail}") from err
        if batch and not field.startswith("eval.") and (
                spec in STATEFUL_OPPONENTS or not hasattr(agent, "act_batch")):
            raise ValueError(f"{field}: {spec!r} cannot act for many games in one batch; use "
                             f"train.engine: python for it")


def _resume_point(run_dir: Path, arch: str, arch_kwargs: dict[str, Any]) -> int | None:
    """The step ``--resume`` continues ``run_dir`` from (its ``latest/``, checked), or None when
    the run was killed before its first save."""
    from .checkpoint import check_resume

    recover_run(run_dir)
    latest = run_dir / "latest"
    if not latest.exists():
        return None
    check_resume(latest, arch, arch_kwargs)
    return int(json.loads((latest / "meta.json").read_text(encoding="utf-8"))["num_timesteps"])


def _expert_iteration_run(cfg: RunConfig, output_dir: Path, resume: bool) -> Path:
    """``algo: exit``: generations of distillation runs in one run folder (``training.exit``)."""
    from .exit import expert_iteration

    run_dir = find_run_to_resume(output_dir, cfg.name) if resume else output_dir / run_name(cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.yaml", dump_config(cfg))
    expert_iteration(cfg, run_dir, train)
    return run_dir


def train(cfg: RunConfig, output_dir: Path | None = None, resume: bool = False,
          on_eval: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Run (or resume) training for ``cfg``; returns the run folder. ``on_eval`` is called after
    each periodic evaluation (``Trainer.on_eval``). Raises ``TrainingInterrupted`` after saving
    when SIGINT or SIGTERM stopped the run."""
    from .checkpoint import check_init_from

    output_dir = check_output_folder(output_dir if output_dir is not None else DEFAULT_OUTPUT,
                                     "--output-dir")
    if cfg.algo == "exit":
        return _expert_iteration_run(cfg, output_dir, resume)
    arch, arch_kwargs = cfg.policy.arch, cfg.policy.arch_kwargs()
    check_named_agents(cfg)
    # the checkpoint to start from is checked before anything of the run is written
    run_dir = find_run_to_resume(output_dir, cfg.name) if resume else None
    start = _resume_point(run_dir, arch, arch_kwargs) if run_dir is not None else None
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
