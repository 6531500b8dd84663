"""Issue 16: a training killed at any moment resumes (items 1, 2 and the kill-injection test),
SIGINT / SIGTERM save and say how to resume (3), every agent a config names is loaded before the
run starts (5), and output paths are checked before any work and written atomically (7)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from typer.testing import CliRunner

from agents import files
from agents.checkpoint import load_network, rng_state, save_checkpoint
from agents.networks import build_network
from crib_cli.main import app
from training.algos.distill_recording import SPEC_FILE
from training.config_file import parse_config
from training.recovery import (
    evaluation_steps,
    recover_run,
    rewind_run,
    run_problems,
    tensorboard_steps,
    wait_for_later_event_file,
)
from training.train import train

ROOT = Path(__file__).resolve().parent.parent
MLP = {"features": False, "hidden": 16, "layers": 1}
runner = CliRunner()


def tiny(name: str = "crash", **changes) -> dict:
    """A run of a few seconds: 3 rollouts of 16 steps, a save and a snapshot after each, an
    evaluation at 32 and at the end; the pool keeps one snapshot (so one is dropped each time)."""
    data = {
        "name": name, "seed": 0,
        "opponents": [{"agent": "random"}, {"agent": "self"}],
        "selfplay": {"snapshot_every": 16, "pool_size": 1, "fallback": "random"},
        "policy": {"arch": "mlp", **MLP},
        "ppo": {"n_steps": 8, "batch_size": 16, "n_epochs": 1},
        "train": {"total_timesteps": 48, "n_envs": 2, "progress_bar": False, "save_every": 16},
        "eval": {"every": 32, "games": 2, "opponents": ["random"]},
    }
    for section, values in changes.items():
        if isinstance(values, dict):
            data.setdefault(section, {}).update(values)
        else:
            data[section] = values
    return data


def dmc(name: str = "crashdmc", **changes) -> dict:
    """DMC: an update (and the saves and snapshots due) every 64 finished decisions."""
    data = tiny(name, **{"train": {"total_timesteps": 256, "n_envs": 8}, "eval": {"every": 128},
                         **changes})
    data.update(algo="dmc", policy={"arch": "afterstate", "features": False, "hidden": 16,
                                    "layers": 1},
                dmc={"samples_per_update": 64, "batch_size": 32})
    data.pop("ppo")
    return data


def distill(name: str = "crashdistill") -> dict:
    """Distillation: the recording (two chunks, each its own file operation) and then a step of
    32 decisions at a time, with the saves and evaluations of the other runs."""
    data = tiny(name, train={"total_timesteps": 256, "engine": "python"}, eval={"every": 128})
    data.update(algo="distill", opponents=[{"agent": "random"}],
                policy={"arch": "cards", "features": False, "hidden": 8, "context": 8,
                        "embed": 4},
                distill={"teacher": "greedy", "chunks": 2, "batch_size": 32})
    for key in ("ppo", "selfplay"):
        data.pop(key)
    return data


def write(tmp: Path, data: dict) -> Path:
    path = tmp / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# -- kills at every file operation ------------------------------------------------------------------


def python_engine() -> dict:
    # in-process envs: the kill test forks its runs, and a fork cannot reuse the parent's
    # forkserver for SubprocVecEnv (the Ctrl-C test below covers the subprocess envs)
    return tiny("crashpy", train={"engine": "python", "vec_env": "dummy"})


@pytest.mark.slow
@pytest.mark.parametrize(("make", "every"),
                         [(tiny, 1), (dmc, 1), (python_engine, 3), (distill, 2)],
                         ids=["ppo", "dmc", "python-engine-every-3rd", "distill-every-2nd"])
def test_a_kill_at_every_file_operation_resumes_to_the_same_run(tmp_path, make, every):
    """For every K, a run killed just before its K-th file operation (checkpoint, snapshot,
    best, evaluation line, summary) and resumed ends at the same step count with the same
    evaluations, every checkpoint loads and TensorBoard shows no step twice. (The python engine
    shares the trainer's saving code; every third operation keeps the test's time down.)"""
    config = write(tmp_path, make())
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "kill_every_file_op.py"),
                           str(config), str(tmp_path / "runs"), "--every", str(every)],
                          capture_output=True, text=True, env=env(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["file_ops"] >= 30  # saves, snapshots, best, evaluation lines, summary
    assert len(report["evaluations"]) >= 2
    assert report["problems"] == []


# -- item 1: leftovers of a kill between a snapshot and latest/ -------------------------------------


def test_resume_over_a_snapshot_of_a_later_step_and_old_staging_folders(tmp_path):
    """The original failure: a snapshot written, then the kill before latest/ of that step; the
    resumed run writes that step's snapshot again. Leftovers of earlier versions are cleared."""
    first = train(parse_config(tiny(train={"total_timesteps": 32})), output_dir=tmp_path)
    pool = first / "pool"
    (later,) = [p for p in pool.iterdir() if p.name == "step_0000000032"]
    ahead = pool / "step_0000000048"  # "written by the killed session"
    ahead.mkdir()
    for f in later.iterdir():
        (ahead / f.name).write_bytes(f.read_bytes())
    for stale in (pool / ".staging_0000000048", first / ".snapshot", first / ".latest.new"):
        stale.mkdir()
        (stale / "policy.safetensors").write_bytes(b"half")
    resumed = train(parse_config(tiny()), output_dir=tmp_path, resume=True)
    assert resumed == first
    meta = json.loads((first / "latest" / "meta.json").read_text())
    assert meta["num_timesteps"] == 48
    assert sorted(p.name for p in pool.iterdir()) == ["step_0000000048"]
    assert run_problems(first) == []


def test_rewind_drops_what_came_after_latest_and_rebuilds_best(tmp_path):
    run = train(parse_config(tiny()), output_dir=tmp_path)
    lines = (run / "evals.jsonl").read_text()
    (run / "evals.jsonl").write_text(lines + lines.splitlines()[-1][:40])  # a cut line
    meta = json.loads((run / "latest" / "meta.json").read_text())
    files.remove_folder(run / "best")  # the kill came between latest/ and best/
    rewind_run(run, 32, best_step=32)
    assert evaluation_steps(run) == [32]
    assert [p.name for p in (run / "pool").iterdir()] == []  # the snapshot of 48 is gone
    assert (run / "best" / "meta.json").exists()
    assert meta["num_timesteps"] == 48


def test_a_session_resumed_within_the_killed_ones_second_still_hides_the_purged_steps(tmp_path):
    """TensorBoard reads event files in name order (second, host, pid as text): the killed
    session's file (pid 9999) and a resumed one opened in the same second (pid 10000) would be read
    new-first, and the purge would miss the old steps. The resumed writer waits for a later second."""
    from unittest import mock

    from torch.utils.tensorboard import SummaryWriter

    future = time.time() + 1  # the killed session's second has not even ended
    with mock.patch("time.time", return_value=future), mock.patch("os.getpid", return_value=9999):
        killed = SummaryWriter(str(tmp_path))
    for step in (64, 128, 192):
        killed.add_scalar("loss", 1.0, step)
    killed.close()
    wait_for_later_event_file(tmp_path)
    with mock.patch("os.getpid", return_value=10000):
        resumed = SummaryWriter(str(tmp_path), purge_step=129)  # resuming from step 128
    for step in (192, 256):
        resumed.add_scalar("loss", 2.0, step)
    resumed.close()
    assert tensorboard_steps(tmp_path) == {"loss": [64, 128, 192, 256]}


# -- item 2: folders replaced whole ------------------------------------------------------------------


def _net_checkpoint(folder: Path, steps: int) -> Path:
    net = build_network("mlp", **MLP)
    optimizer = torch.optim.Adam(net.parameters())
    return save_checkpoint(folder, net, "mlp", MLP,
                           {"num_timesteps": steps,
                            "training": {"num_timesteps": steps, "n_updates": 1}},
                           optimizer=optimizer.state_dict(), rng=rng_state())


def test_a_save_that_fails_midway_leaves_the_old_checkpoint_whole(tmp_path, monkeypatch):
    folder = _net_checkpoint(tmp_path / "latest", 16)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def broken(obj, path):  # the disk fills up while the optimizer state is written
        Path(path).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(OSError):
        _net_checkpoint(tmp_path / "latest", 32)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    monkeypatch.undo()
    _net_checkpoint(tmp_path / "latest", 48)  # the leftover staging folder is no obstacle
    assert json.loads((folder / "meta.json").read_text())["num_timesteps"] == 48
    load_network(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


def test_recovery_between_the_two_renames_keeps_the_newest_complete_folder(tmp_path):
    """Where an atomic exchange is not available the swap is two renames; a kill between them
    leaves no latest/, the old one as .latest.old and the complete new one as .latest.new."""
    _net_checkpoint(tmp_path / "latest", 16).rename(tmp_path / ".latest.old")
    _net_checkpoint(tmp_path / "new", 32).rename(tmp_path / ".latest.new")
    recover_run(tmp_path)
    assert json.loads((tmp_path / "latest" / "meta.json").read_text())["num_timesteps"] == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


def test_a_half_filled_first_save_is_ignored(tmp_path):
    (tmp_path / ".latest.new").mkdir()
    (tmp_path / ".latest.new" / "policy.safetensors").write_bytes(b"half")
    recover_run(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_fallback_swap_gives_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_exchange", lambda a, b: False)
    _net_checkpoint(tmp_path / "latest", 16)
    _net_checkpoint(tmp_path / "latest", 32)
    assert json.loads((tmp_path / "latest" / "meta.json").read_text())["num_timesteps"] == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


# -- item 3: SIGINT and SIGTERM ----------------------------------------------------------------------


def _start_train(tmp_path: Path, data: dict, out: Path) -> subprocess.Popen:
    """``crib train`` on ``data`` into ``out``, in its own process group, output captured."""
    return subprocess.Popen([sys.executable, "-m", "crib_cli", "train", "--config",
                             str(write(tmp_path, data)), "--output-dir", str(out)], cwd=ROOT,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def _stop_with(tmp_path: Path, data: dict, signum: int, group: bool) -> tuple[int, str, Path]:
    """Start ``crib train``, send ``signum`` once it has saved a few times, return (exit status,
    output, run folder)."""
    out = tmp_path / "runs"
    proc = _start_train(tmp_path, data, out)
    deadline = time.time() + 240
    while time.time() < deadline:
        runs = list(out.glob("*/latest/meta.json")) if out.exists() else []
        if runs and json.loads(runs[0].read_text())["num_timesteps"] >= 64:
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the run saved nothing in 240 s")
    if group:  # Ctrl-C in a terminal reaches the whole process group, env workers included
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    output, _ = proc.communicate(timeout=120)
    (run_dir,) = out.iterdir()
    return proc.returncode, output, run_dir


def _ctrl_c_when(proc: subprocess.Popen, out: Path, pattern: str, delay: float) -> None:
    """Once ``out`` holds a path matching ``pattern`` (within 120 s), wait ``delay`` seconds and
    send SIGINT to the run's whole process group, as Ctrl-C in a terminal does."""
    deadline = time.time() + 120
    while not list(out.glob(pattern)) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGINT)


def _output_within(proc: subprocess.Popen, seconds: float, failure: str) -> str:
    """The run's output once it ends; killed and failed with ``failure`` after ``seconds``."""
    try:
        output, _ = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"{failure} {seconds:.0f} s after the last SIGINT")
    return output


def _check_stopped(code: int, output: str, run_dir: Path, expected: int, name: str) -> int:
    assert code == expected, output[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    meta = json.loads((run_dir / "latest" / "meta.json").read_text())
    assert summary["interrupted_by"] == name
    assert summary["num_timesteps"] == meta["num_timesteps"] >= 64
    assert f"stopped by {name} at step {meta['num_timesteps']:,}" in output
    assert "resume with: crib train --config" in output and "--resume" in output
    assert "Traceback" not in output
    return meta["num_timesteps"]


@pytest.mark.slow
def test_ctrl_c_saves_latest_and_summary_says_how_to_resume_and_exits_130(tmp_path):
    """Python engine with one process per env: the workers get the Ctrl-C too and must not die."""
    data = tiny("sigint", train={"total_timesteps": 10**7, "save_every": 32, "engine": "python",
                                 "vec_env": "subproc"}, eval={"every": 10**6})
    code, output, run_dir = _stop_with(tmp_path, data, signal.SIGINT, group=True)
    steps = _check_stopped(code, output, run_dir, 130, "SIGINT")
    assert steps % 16 == 0  # the weights saved are those of every step counted
    data["train"].update(total_timesteps=steps + 16, vec_env="dummy")
    resumed = train(parse_config(data), output_dir=tmp_path / "runs", resume=True)
    assert json.loads((resumed / "latest" / "meta.json").read_text())["num_timesteps"] \
        == steps + 16
    assert run_problems(resumed) == []


@pytest.mark.slow
def test_ctrl_c_while_the_env_workers_start_stops_a_ppo_run_cleanly(tmp_path):
    """A Ctrl-C in the seconds the env processes take to start (their imports) must not kill
    them before they can ignore it: the run stops at its first step, saved, and resumes."""
    data = tiny("sigstart", train={"total_timesteps": 10**7, "save_every": 32, "engine": "python",
                                   "vec_env": "subproc", "n_envs": 4}, eval={"every": 10**6})
    out = tmp_path / "runs"
    proc = _start_train(tmp_path, data, out)
    # config.yaml is written just before the trainer builds its envs
    _ctrl_c_when(proc, out, "*/config.yaml", delay=0.3)
    output = _output_within(proc, 120, "the run has not stopped")
    assert proc.returncode == 130, output[-3000:]
    assert "Traceback" not in output and "EOFError" not in output, output[-3000:]
    (run_dir,) = out.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted_by"] == "SIGINT"
    steps = summary["num_timesteps"]
    data["train"].update(total_timesteps=steps + 32, vec_env="dummy")
    resumed = train(parse_config(data), output_dir=out, resume=True)
    assert json.loads((resumed / "latest" / "meta.json").read_text())["num_timesteps"] \
        == steps + 32
    assert run_problems(resumed) == []


@pytest.mark.slow
def test_sigterm_stops_a_dmc_run_the_same_way_with_143(tmp_path):
    data = dmc("sigterm", train={"total_timesteps": 10**7, "save_every": 32},
               eval={"every": 10**6})
    code, output, run_dir = _stop_with(tmp_path, data, signal.SIGTERM, group=False)
    steps = _check_stopped(code, output, run_dir, 143, "SIGTERM")
    data["train"]["total_timesteps"] = steps + 64
    resumed = train(parse_config(data), output_dir=tmp_path / "runs", resume=True)
    assert json.loads((resumed / "latest" / "meta.json").read_text())["num_timesteps"] \
        >= steps + 64
    assert run_problems(resumed) == []


@pytest.mark.slow
def test_a_second_ctrl_c_stops_a_recording_with_worker_processes_at_once(tmp_path):
    """The first Ctrl-C, even while the workers start, lets the chunks being recorded finish
    (minutes here: 400 expert games each) and says so; the second drops them and exits at once,
    leaving no chunk half written."""
    data = distill("sigrecord")
    data["distill"].update(teacher="expert", chunks=4, workers=2, chunk_games=400)
    out = tmp_path / "runs"
    proc = _start_train(tmp_path, data, out)
    # the two workers are still starting (seconds of imports): the Ctrl-C to the whole group
    # must not kill them before they can ignore it
    _ctrl_c_when(proc, out, f"*/recording/{SPEC_FILE}", delay=0.5)
    time.sleep(3)  # the recording answers the first within a second
    os.killpg(proc.pid, signal.SIGINT)
    output = _output_within(proc, 30, "the run still records")
    assert proc.returncode == 130, output[-3000:]
    # the chunks not yet handed to a worker are dropped at once; those a worker holds are awaited
    assert re.search(r"recording: waiting for the [1-4] chunks being recorded", output), output
    assert "SIGINT again: stopping now" in output
    (recording,) = out.glob("*/recording")
    assert [p.name for p in recording.iterdir()] == [SPEC_FILE]


# -- item 5: every agent the config names, loaded before the run starts ------------------------------


def _broken_checkpoint(tmp_path: Path) -> Path:
    folder = _net_checkpoint(tmp_path / "broken", 16)
    policy = folder / "policy.safetensors"
    policy.write_bytes(policy.read_bytes()[:-8] + b"\0" * 8)  # hash no longer matches
    return folder


@pytest.mark.parametrize("engine", ["fast", "python"])
@pytest.mark.parametrize("field", ["opponents[1].agent", "eval.opponents[0]",
                                   "selfplay.fallback"])
@pytest.mark.parametrize("problem", ["missing", "corrupt"])
def test_a_bad_checkpoint_the_config_names_stops_the_run_before_it_starts(tmp_path, engine,
                                                                         field, problem):
    path = str(tmp_path / "nowhere") if problem == "missing" else str(_broken_checkpoint(tmp_path))
    data = tiny(train={"engine": engine, "vec_env": "subproc"})
    if field == "opponents[1].agent":
        data["opponents"] = [{"agent": "random"}, {"agent": path}]
    elif field == "eval.opponents[0]":
        data["eval"]["opponents"] = [path]
        data["eval"]["best_by"] = "mean"
    else:
        data["selfplay"]["fallback"] = path
    result = runner.invoke(app, ["train", "--config", str(write(tmp_path, data)),
                                 "--output-dir", str(tmp_path / "runs")])
    assert result.exit_code == 2, result.output
    error = result.output.strip()
    assert "\n" not in error and error.startswith(f"error: {field}: "), error
    assert ("no checkpoint" in error) if problem == "missing" else ("corrupt" in error)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


# -- item 7: output paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("make_bad", ["folder", "under_a_file"])
def test_evaluate_json_path_is_checked_before_any_game(tmp_path, make_bad):
    (tmp_path / "file").write_text("x")
    bad = tmp_path if make_bad == "folder" else tmp_path / "file" / "report.json"
    started = time.time()
    result = runner.invoke(app, ["evaluate", "--agent", "random", "--opponent", "random",
                                 "--games", str(10**9), "--json", str(bad)])
    assert result.exit_code == 2
    assert result.output.startswith("error: --json: ") and result.output.count("\n") == 1
    assert time.time() - started < 30  # a billion games were not played first


def test_evaluate_json_is_written_atomically(tmp_path):
    target = tmp_path / "sub" / "report.json"
    result = runner.invoke(app, ["evaluate", "--agent", "random", "--opponent", "random",
                                 "--games", "4", "--json", str(target)])
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text())["games"] == 4
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_tournament_output_that_is_a_file_is_refused_before_any_game(tmp_path):
    (tmp_path / "taken").write_text("x")
    result = runner.invoke(app, ["tournament", "--agents", "random,random", "--games",
                                 str(10**9), "--output", str(tmp_path / "taken")])
    assert result.exit_code == 2
    assert result.output.startswith("error: --output: ") and "is a file" in result.output


def test_train_output_dir_and_config_paths_are_checked_first(tmp_path):
    (tmp_path / "taken").write_text("x")
    config = write(tmp_path, tiny())
    result = runner.invoke(app, ["train", "--config", str(config), "--output-dir",
                                 str(tmp_path / "taken")])
    assert result.exit_code == 2 and "error: --output-dir: " in result.output
    result = runner.invoke(app, ["train", "--config", str(tmp_path)])
    assert result.exit_code == 2 and "error: --config: " in result.output
    assert "is a folder" in result.output


def test_plot_output_that_is_a_folder_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    result = runner.invoke(app, ["plot", str(run), "--output", str(tmp_path)])
    assert result.exit_code == 2 and "error: --output: " in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_an_unwritable_folder_is_named(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="--json: cannot write .*locked.*Permission denied"):
            files.check_output_file(locked / "x.json", "--json")
    finally:
        locked.chmod(0o700)
