"""Bringing a run folder killed at any moment back to its last complete checkpoint (``--resume``).

``latest/`` is the commit point of a run: everything a session writes for a step (the pool
snapshot, the TensorBoard scalars, the ``evals.jsonl`` line) is written before ``latest/`` of that
step, and ``best/`` right after it. So after a kill, ``latest/`` at step L says what to keep:

* ``recover_run``: finishes or undoes folder swaps the kill interrupted (``latest/``, ``best/``,
  pool snapshots) and deletes staging folders and temporary files, those of older versions of
  this tool (``pool/.staging_*``, ``.snapshot/``) included. It only completes what was already
  committed, so it is safe before ``--resume`` is checked.
* ``rewind_run``: drops what the killed session did after L (pool snapshots of later steps,
  evaluation lines of later steps and a line cut by the kill) and writes ``best/`` again when the
  kill fell between ``latest/`` and ``best/`` of the same step. TensorBoard scalars after L are
  hidden by the resumed session's ``purge_step`` (``training.trainer``), once
  ``wait_for_later_event_file`` has made sure its event file is read after the killed session's.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from agents.checkpoint import META_FILE, POLICY_FILE
from agents.files import NEW_SUFFIX, OLD_SUFFIX, atomic_write_text, recover_folder, remove_folder

from .selfplay import SNAPSHOT_PREFIX, pool_snapshots, snapshot_step

CHECKPOINT_FOLDERS = ("latest", "best")
EVALS_FILE = "evals.jsonl"


def recover_run(run_dir: Path) -> None:
    """Complete or undo interrupted folder swaps and remove staging leftovers (see the module
    docstring)."""
    run_dir = Path(run_dir)
    for name in CHECKPOINT_FOLDERS:
        recover_folder(run_dir / name)
    pool = run_dir / "pool"
    if pool.is_dir():
        for entry in list(pool.iterdir()):
            name = entry.name
            if name.startswith(f".{SNAPSHOT_PREFIX}"):  # .step_N.new / .old / .trash
                stem = name[1:].split(".")[0]
                recover_folder(pool / stem)
            elif name.startswith(".staging_"):  # staging folders of earlier versions
                shutil.rmtree(entry, ignore_errors=True)
    shutil.rmtree(run_dir / ".snapshot", ignore_errors=True)  # an earlier version's staging
    for folder in (run_dir, pool):
        if folder.is_dir():
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink(missing_ok=True)


def rewind_run(run_dir: Path, step: int, best_step: int | None) -> None:
    """Drop what a killed session wrote after its last checkpoint at ``step`` (see the module
    docstring)."""
    run_dir = Path(run_dir)
    for snapshot in pool_snapshots(run_dir / "pool"):
        if snapshot_step(snapshot) > step:
            remove_folder(snapshot)
    _rewind_evals(run_dir / EVALS_FILE, step)
    best = run_dir / "best"
    if best_step == step and _step_of(best) != step:
        from agents.checkpoint import copy_checkpoint

        copy_checkpoint(run_dir / "latest", best, names=(POLICY_FILE,))


def _step_of(folder: Path) -> int | None:
    try:
        return json.loads((folder / META_FILE).read_text(encoding="utf-8")).get("num_timesteps")
    except (OSError, ValueError):
        return None


def _rewind_evals(path: Path, step: int) -> None:
    """Keep the complete evaluation lines up to ``step``, one per step, in order."""
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    kept: dict[int, str] = {}
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue  # cut by the kill
        if isinstance(line, dict) and isinstance(line.get("step"), int) and line["step"] <= step:
            kept.setdefault(line["step"], raw)
    new = "".join(kept[s] + "\n" for s in sorted(kept))
    if new != text:
        atomic_write_text(path, new)


def leftovers(run_dir: Path) -> list[Path]:
    """Staging folders and temporary files under ``run_dir`` (none after a clean save)."""
    found = []
    for path in Path(run_dir).rglob(".*"):
        if path.name.endswith((NEW_SUFFIX, OLD_SUFFIX, ".trash", ".tmp")) \
                or path.name.startswith(".staging_") or path.name == ".snapshot":
            found.append(path)
    return found


def run_problems(run_dir: Path) -> list[str]:
    """What is wrong with a run folder after a (resumed) run: checkpoints that do not load,
    scalars TensorBoard shows twice for a step, evaluation lines cut, unreadable or repeated,
    staging leftovers. Empty for a whole run. (Used by the crash tests and bench/chaos_train.py.)"""
    from agents.checkpoint import load_network, load_training_state

    run_dir = Path(run_dir)
    problems = []
    folders = [run_dir / name for name in CHECKPOINT_FOLDERS if (run_dir / name).exists()]
    for folder in [*folders, *pool_snapshots(run_dir / "pool")]:
        try:
            load_network(folder)
            if folder.name == "latest":
                load_training_state(folder)
        except Exception as err:  # any failure to load is the finding
            problems.append(f"{folder.relative_to(run_dir)} does not load: {err}")
    for tag, steps in tensorboard_steps(run_dir / "tb").items():
        if len(set(steps)) != len(steps):
            twice = sorted({s for s in steps if steps.count(s) > 1})
            problems.append(f"tensorboard {tag}: steps shown twice: {twice[:5]}")
    steps = []
    evals = run_dir / EVALS_FILE
    if evals.exists():
        for number, raw in enumerate(evals.read_text(encoding="utf-8").splitlines(), 1):
            try:
                steps.append(json.loads(raw)["step"])
            except (json.JSONDecodeError, KeyError, TypeError):
                problems.append(f"{EVALS_FILE} line {number} is not a whole evaluation")
    if steps != sorted(set(steps)):
        problems.append(f"{EVALS_FILE}: steps repeated or out of order: {steps}")
    problems += [f"leftover {p.relative_to(run_dir)}" for p in leftovers(run_dir)]
    return problems


def evaluation_steps(run_dir: Path) -> list[int]:
    path = Path(run_dir) / EVALS_FILE
    return [json.loads(raw)["step"] for raw in path.read_text(encoding="utf-8").splitlines()]


def wait_for_later_event_file(tb_dir: Path) -> None:
    """Sleep until the clock is past the second of the newest event file in ``tb_dir``.

    TensorBoard reads a folder's event files in name order, and a purge hides only the steps read
    before it. A writer's file is named ``events.out.tfevents.<second>.<host>.<pid>.<n>``, so a
    session resumed within the second of the killed one would sort by pid as text (``10000`` before
    ``9999``) and show the purged steps again. A file opened in a later second always sorts after.
    A file named further ahead (another machine's clock) is not waited for beyond two seconds.
    """
    newest = max((int(part) for path in Path(tb_dir).glob("events.out.tfevents.*")
                  if (part := path.name.split(".")[3]).isdigit()), default=None)
    give_up = time.time() + 2
    while newest is not None and int(time.time()) <= newest and time.time() < give_up:
        time.sleep(0.05)


def tensorboard_steps(tb_dir: Path) -> dict[str, list[int]]:
    """The steps of each scalar as TensorBoard shows them (purged steps left out)."""
    import logging

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    # it reports each purge it applies (a resumed run's purge_step) as a warning
    logging.getLogger("tensorboard").setLevel(logging.ERROR)
    acc = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [e.step for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
