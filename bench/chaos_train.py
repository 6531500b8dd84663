"""Chaos soak for crash-safe training (issue 16): SIGKILL ``crib train`` at random moments, resume,
and check that nothing is lost.

A small training runs as a real ``crib train`` process; it is killed with SIGKILL at a random
moment, then continued with ``crib train --resume``, again and again until ``--kills`` kills have
been made (a run that finishes its budget first is checked and a new one started; the last run is
resumed until it finishes). Every finished run is checked:

* it finished its budget: ``latest/`` holds the step count of an uninterrupted reference run;
* every checkpoint loads (``latest/`` with its resume state, ``best/``, every pool snapshot);
* TensorBoard shows no step twice for any scalar, and the evaluation scalars at the same steps as
  the reference run (none lost);
* ``evals.jsonl`` holds exactly the reference run's evaluation steps, each once, every line whole;
* no staging folder or temporary file is left.

Most kills land while it trains (uniformly within ``--max-delay`` seconds of the moment the
session opens its TensorBoard file, i.e. after start-up: rollouts, updates, saves, snapshots and
evaluations alike); one in ten lands during start-up. After each kill the script notes whether it
caught a save half-way (a staging folder on disk) or came before the run's first save.

    python bench/chaos_train.py --kills 50 [--algo ppo|dmc] [--max-delay 6] [--seed 0] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from training.recovery import (  # noqa: E402
    evaluation_steps,
    leftovers,
    run_problems,
    tensorboard_steps,
)


def config(algo: str) -> dict:
    """A run of a few seconds of training with a save every rollout, snapshots, evaluations."""
    data = {
        "name": f"chaos{algo}", "seed": 0, "algo": algo,
        "opponents": [{"agent": "random"}, {"agent": "greedy"}, {"agent": "self"}],
        "selfplay": {"snapshot_every": 1024, "pool_size": 2, "fallback": "random"},
        "train": {"total_timesteps": 12288, "n_envs": 16, "progress_bar": False,
                  "save_every": 256},
        "eval": {"every": 3072, "games": 4, "opponents": ["random"]},
    }
    if algo == "ppo":
        data["policy"] = {"arch": "cards", "features": True, "hidden": 16, "context": 32,
                          "embed": 4}
        data["ppo"] = {"n_steps": 16, "batch_size": 128, "n_epochs": 1}
    else:
        data["policy"] = {"arch": "afterstate", "features": False, "hidden": 32, "layers": 1}
        data["dmc"] = {"samples_per_update": 256, "batch_size": 128}
        data["train"]["total_timesteps"] = 24576
    return data


def start(config_path: Path, out: Path, resume: bool) -> subprocess.Popen:
    command = [sys.executable, "-m", "crib_cli", "train", "--config", str(config_path),
               "--output-dir", str(out)] + (["--resume"] if resume else [])
    return subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def event_files(out: Path) -> set[Path]:
    return set(out.glob("*/tb/events.out.tfevents.*"))


def wait_training(proc: subprocess.Popen, out: Path, before: set[Path]) -> float | None:
    """Seconds until the session opened its TensorBoard file (training starts), or None if the
    process ended first."""
    started = time.time()
    while proc.poll() is None:
        if event_files(out) - before:
            return time.time() - started
        time.sleep(0.05)
    return None


def reference(config_path: Path, out: Path) -> dict:
    """An uninterrupted run: its final step count, evaluation steps, start-up and training time."""
    proc = start(config_path, out, resume=False)
    launched = time.time()
    startup = wait_training(proc, out, set())
    _, err = proc.communicate()
    if proc.returncode != 0 or startup is None:
        sys.exit(f"the reference run failed ({proc.returncode}):\n{err[-3000:]}")
    (run_dir,) = out.iterdir()
    meta = json.loads((run_dir / "latest" / "meta.json").read_text())
    return {"steps": meta["num_timesteps"], "evaluations": evaluation_steps(run_dir),
            "startup_seconds": startup, "train_seconds": time.time() - launched - startup,
            "problems": run_problems(run_dir)}


def audit(run_dir: Path, ref: dict) -> list[str]:
    problems = run_problems(run_dir)
    meta = json.loads((run_dir / "latest" / "meta.json").read_text())
    if meta["num_timesteps"] != ref["steps"]:
        problems.append(f"ended at {meta['num_timesteps']} steps, not {ref['steps']}")
    if not (run_dir / "summary.json").exists():
        problems.append("no summary.json")
    evals = evaluation_steps(run_dir)
    if evals != ref["evaluations"]:
        problems.append(f"evaluations at {evals}, not {ref['evaluations']}")
    shown = tensorboard_steps(run_dir / "tb").get("eval/win_rate/random", [])
    if shown != ref["evaluations"]:
        problems.append(f"TensorBoard evaluations at {shown}, not {ref['evaluations']}")
    return [f"{run_dir.name}: {p}" for p in problems]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50, help="SIGKILLs in all (N)")
    parser.add_argument("--algo", choices=["ppo", "dmc"], default="ppo")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill moments")
    parser.add_argument("--max-delay", type=float, default=6.0,
                        help="kill within this many seconds after start-up")
    parser.add_argument("--out", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.out or Path(tempfile.mkdtemp(prefix="chaos_"))
    work.mkdir(parents=True, exist_ok=True)
    config_path = work / "chaos.yaml"
    import yaml

    config_path.write_text(yaml.safe_dump(config(args.algo)))
    load_before = os.getloadavg()
    began = time.time()
    ref = reference(config_path, work / "reference")
    print(f"reference: {ref['steps']} steps, evaluations at {ref['evaluations']}, start-up "
          f"{ref['startup_seconds']:.1f} s, training {ref['train_seconds']:.1f} s", flush=True)
    problems = [f"reference: {p}" for p in ref["problems"]]
    kills = mid_save = before_first_save = sessions = runs = 0
    while kills < args.kills:
        runs += 1
        out = work / f"run_{runs:03d}"
        resume = False
        while True:
            sessions += 1
            before = event_files(out) if out.exists() else set()
            proc = start(config_path, out, resume)
            if kills < args.kills and rng.random() < 0.1:
                delay = rng.uniform(0, ref["startup_seconds"])  # during start-up
                time.sleep(delay)
            elif kills < args.kills:
                if wait_training(proc, out, before) is not None:
                    time.sleep(rng.uniform(0, args.max_delay))
            if kills < args.kills and proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                runs_here = list(out.iterdir()) if out.exists() else []
                if any(leftovers(r) for r in runs_here):
                    mid_save += 1
                if not any((r / "latest").exists() for r in runs_here):
                    before_first_save += 1
                resume = bool(runs_here)
                print(f"kill {kills:3d}/{args.kills} (run {runs}, session {sessions})",
                      flush=True)
                continue
            _, err = proc.communicate()
            if proc.returncode != 0:
                problems.append(f"run {runs}: a session exited {proc.returncode}: "
                                f"{err.strip().splitlines()[-1] if err.strip() else ''}")
                break
            (run_dir,) = out.iterdir()
            found = audit(run_dir, ref)
            problems += found
            print(f"run {runs} finished: {'ok' if not found else found}", flush=True)
            break
    result = {"algo": args.algo, "command": " ".join(sys.argv), "kills": kills, "kills_mid_save": mid_save,
              "kills_before_first_save": before_first_save, "runs": runs, "sessions": sessions,
              "wall_seconds": round(time.time() - began, 1), "reference": ref,
              "load_before": load_before, "load_after": os.getloadavg(),
              "cpu": _cpu(), "problems": problems, "passed": not problems}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(0 if not problems else 1)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{os.cpu_count()} cores"


if __name__ == "__main__":
    main()
