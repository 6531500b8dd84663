"""Kill a tiny training at each file operation in turn, resume it, and check the run is whole.

Run as a script (``python tests/kill_every_file_op.py CONFIG OUT [--every N]``; tests/
test_crash_safety.py does): the reference run goes in this process, which loads everything once;
each killed run and each resume is a fork of it, so one kill point costs a fraction of a second
instead of a fresh interpreter. A child is killed by ``CRIB_CRASH_AT_FILE_OP`` (``os._exit(137)``
just before its K-th file operation: no clean-up runs, as with SIGKILL). Prints one JSON object:
the number of file operations of the reference run and the problems found (none when all is well).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

import torch

torch.set_num_threads(1)  # forking after a multi-threaded torch call can hang the child

from agents import files  # noqa: E402
from training.config_file import load_config  # noqa: E402
from training.recovery import evaluation_steps, run_problems  # noqa: E402
from training.train import train  # noqa: E402


def latest_steps(out: Path) -> int:
    (run_dir,) = out.iterdir()
    return json.loads((run_dir / "latest" / "meta.json").read_text())["num_timesteps"]


def in_child(out: Path, resume: bool, crash_at: int | None, cfg) -> int:
    """Exit status of a forked ``train`` (137 when killed)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            if crash_at:
                os.environ[files.CRASH_ENV] = str(crash_at)
            files._file_ops = 0
            train(cfg, output_dir=out, resume=resume)
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--every", type=int, default=1, help="kill at every N-th operation")
    args = parser.parse_args()
    cfg = load_config(args.config)
    reference = args.out / "reference"
    before = files.file_ops()
    train(cfg, output_dir=reference)
    ops = files.file_ops() - before
    steps = latest_steps(reference)
    (ref_run,) = reference.iterdir()
    eval_steps = evaluation_steps(ref_run)
    problems = [f"reference: {p}" for p in run_problems(ref_run)]
    for k in range(1, ops + 1, args.every):
        out = args.out / f"kill_{k}"
        code = in_child(out, False, k, cfg)
        if code != 137:
            problems.append(f"op {k}: the killed run exited {code}, not 137")
            continue
        if not out.exists() or not any(out.iterdir()):
            continue  # killed before the run folder existed: nothing to resume
        code = in_child(out, True, None, cfg)
        if code != 0:
            problems.append(f"op {k}: --resume exited {code}")
            continue
        (run_dir,) = out.iterdir()
        if latest_steps(out) != steps:
            problems.append(f"op {k}: resumed run ended at {latest_steps(out)} steps, not {steps}")
        if evaluation_steps(run_dir) != eval_steps:
            problems.append(f"op {k}: evaluations at {evaluation_steps(run_dir)}, "
                            f"not {eval_steps}")
        problems += [f"op {k}: {p}" for p in run_problems(run_dir)]
    print(json.dumps({"file_ops": ops, "steps": steps, "evaluations": eval_steps,
                      "problems": problems}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
