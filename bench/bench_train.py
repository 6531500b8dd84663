"""End-to-end training speed of ``crib train`` (MaskablePPO) on both engines, side by side.

Runs the same config for ``--steps`` learner decisions on each engine (``train.engine: fast`` and
``python``) through ``training.algos.ppo.PPOTrainer`` itself: rollouts and PPO updates, with no
evaluation (the run's ``eval`` is replaced by one that never falls due). Prints one row per engine:
steps per second end to end, and where each step's time went, in microseconds per learner decision:

* ``env + opp``: ``VecEnv.step`` - the game, the opponents' moves, the observation and the network
  input (card features), in subprocesses for the python engine, in process for the fast one;
* ``masks``: ``get_action_masks(env)`` (MaskablePPO asks the env for the legal cards every step);
* ``forward``: the policy's forward pass in the rollout (``policy.forward`` and the last
  ``predict_values``), action sampling and masking included;
* ``sb3``: the rest of ``collect_rollouts`` (rollout buffer, the trainer's callbacks, episode
  bookkeeping, the advantage computation at the end of each rollout);
* ``update``: ``MaskablePPO.train`` (the epochs of minibatch gradient steps).

The figures are measured by wrapping those calls on the trainer's objects (nothing in the trainer
changes). Also prints the CPU model and the load average before and after, since on a shared
machine the figures move with the load.

    .venv/bin/python bench/bench_train.py --config configs/ppo_vs_standard.yaml --steps 20000
    .venv/bin/python bench/bench_train.py --config configs/ppo_vs_standard.yaml --engines fast \\
        --set policy.arch=mlp policy.features=false policy.prior=false policy.hidden=256 \\
        --set train.n_envs=256 ppo.n_steps=32 ppo.batch_size=4096 --steps 200000

``--set KEY=VALUE`` (dotted keys, YAML values) changes the config for every engine; ``--fast-set``
and ``--python-set`` for one engine only (e.g. more rows on the fast engine than the two
subprocesses of the python one).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from training.algos.ppo import PPOTrainer
from training.config_file import parse_config

PARTS = ("env", "masks", "forward", "sb3", "update")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def set_key(data: dict[str, Any], assignment: str) -> None:
    """Apply ``a.b.c=VALUE`` (VALUE parsed as YAML) to a nested config mapping."""
    if "=" not in assignment:
        raise SystemExit(f"--set: expected KEY=VALUE, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    *path, last = key.split(".")
    node = data
    for part in path:
        node = node.setdefault(part, {})
    node[last] = yaml.safe_load(raw)


def bench_config(base: dict[str, Any], engine: str, steps: int, sets: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(base)
    data.setdefault("train", {}).update(engine=engine, total_timesteps=steps, progress_bar=False,
                                        torch_threads=1)
    for assignment in sets:
        set_key(data, assignment)
    evaluation = data.setdefault("eval", {})
    evaluation.update(every=10 * steps + 10**9, final_games=0, at_start=False)
    data["train"]["save_every"] = 10 * steps + 10**9  # time training only, no checkpoint saves
    return data


def timed(method, bucket: dict[str, float], part: str):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            bucket[part] += time.perf_counter() - t0
    return wrapper


def warm_up(env, steps: int = 64) -> None:
    """A few random legal moves before the clock starts, so numba's first-call compilation (the
    card features, the batch opponents; in every subprocess on the python engine) is not timed."""
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(steps):
        masks = np.stack(env.env_method("action_masks"))
        env.step(np.argmax(np.where(masks, rng.random(masks.shape), -1.0), axis=1))


def run_engine(data: dict[str, Any], source: str, profile: Path | None = None) -> dict[str, Any]:
    cfg = parse_config(data, source)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        trainer = PPOTrainer(cfg, run_dir, resume=False)
        trainer.build()
        model, env, policy = trainer.model, trainer.env, trainer.model.policy
        warm_up(env)
        env.seed(trainer.env_seed())
        t: dict[str, float] = dict.fromkeys((*PARTS, "rollout"), 0.0)
        env.step = timed(env.step, t, "env")
        env.env_method = timed(env.env_method, t, "masks")
        policy.forward = timed(policy.forward, t, "forward")
        policy.predict_values = timed(policy.predict_values, t, "forward")
        model.collect_rollouts = timed(model.collect_rollouts, t, "rollout")
        model.train = timed(model.train, t, "update")
        trainer.started = time.time()
        trainer.eval_seconds = 0.0
        trainer.steps_at_start = 0
        trainer.schedule_from(0)
        load_before = load_average()
        profiler = None
        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.002)
            profiler.start()
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        trainer.learn(cfg.train.total_timesteps)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        if profiler is not None:
            profiler.stop()
            profile.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
        steps = trainer.num_timesteps
        logged = dict(model.logger.name_to_value)
        trainer.close()
    # The advantage computation and callbacks run inside collect_rollouts but are not a step.
    t["sb3"] = max(0.0, t["rollout"] - t["env"] - t["masks"] - t["forward"])
    per_step = {part: 1e6 * t[part] / steps for part in PARTS}
    return {"engine": cfg.train.engine, "n_envs": cfg.train.n_envs, "n_steps": cfg.ppo.n_steps,
            "batch_size": cfg.ppo.batch_size, "n_epochs": cfg.ppo.n_epochs,
            "arch": cfg.policy.arch, "features": cfg.policy.features,
            "opponents": [o.agent for o in cfg.opponents], "steps": steps,
            "wall_seconds": round(wall, 2), "main_cpu_seconds": round(cpu, 2),
            "steps_per_second": round(steps / wall, 1),
            "us_per_step": {k: round(v, 1) for k, v in per_step.items()},
            "seconds": {k: round(v, 2) for k, v in t.items()},
            "approx_kl": float(logged.get("train/approx_kl", "nan")),
            "load_before": load_before, "load_after": load_average()}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| engine | n_envs x n_steps | batch x epochs | steps | wall s | steps/s | speed-up | "
            "env + opp | masks | forward | sb3 | update | load (1/5/15 min) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    slowest = min(r["steps_per_second"] for r in rows)
    for r in rows:
        us = r["us_per_step"]
        lines.append(
            f"| {r['engine']} | {r['n_envs']} x {r['n_steps']} | {r['batch_size']} x "
            f"{r['n_epochs']} | {r['steps']:,} | {r['wall_seconds']:.1f} | "
            f"{r['steps_per_second']:,.0f} | {r['steps_per_second'] / slowest:.1f}x | "
            + " | ".join(f"{us[p]:.0f}" for p in PARTS) + f" | {r['load_after']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/ppo_vs_standard.yaml"))
    parser.add_argument("--steps", type=int, default=20_000, help="learner decisions per engine")
    parser.add_argument("--engines", default="fast,python", help="comma-separated, in run order")
    parser.add_argument("--set", nargs="*", default=[], action="extend", dest="sets",
                        metavar="KEY=VALUE", help="config change for every engine")
    parser.add_argument("--fast-set", nargs="*", default=[], action="extend", metavar="KEY=VALUE")
    parser.add_argument("--python-set", nargs="*", default=[], action="extend",
                        metavar="KEY=VALUE")
    parser.add_argument("--profile", type=Path, help="write a pyinstrument profile of each engine "
                                                     "to PROFILE.<engine>.txt")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    torch.set_num_threads(1)
    base = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    print(f"config {args.config}, {args.steps:,} steps per engine; CPU: {cpu_model()} "
          f"({os.cpu_count()} logical); load average before: {load_average()}", flush=True)
    rows = []
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        sets = [*args.sets, *(args.fast_set if engine == "fast" else args.python_set)]
        data = bench_config(base, engine, args.steps, sets)
        profile = None if args.profile is None else \
            args.profile.with_name(f"{args.profile.name}.{engine}.txt")
        row = run_engine(data, f"{args.config} ({engine})", profile)
        rows.append(row)
        print(f"  {engine}: {row['steps_per_second']:,.0f} steps/s ({row['steps']:,} steps in "
              f"{row['wall_seconds']:.1f} s; load {row['load_after']})", flush=True)
    print("\nmicroseconds per learner decision:\n" + table(rows))
    print(f"\nCPU: {cpu_model()}; load average after: {load_average()}; torch threads 1")
    if args.json:
        args.json.write_text(json.dumps({"config": str(args.config), "cpu": cpu_model(),
                                         "rows": rows}, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
