"""Ray (issue 14): evaluations and tournaments as Ray tasks give the local report, a worker that
dies is retried, sweeps run on Ray Tune. The Ray tests share one local Ray with 2 CPUs; those that
start it are in the slow tier (make test-slow, which CI runs), the rest in the quick suite."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agents.registry import CHAMPION_PATH, SEARCH_NETWORK_PATH
from crib_cli.main import _bare_option, app
from training.config_file import load_config
from training.evaluate import evaluate
from training.ray_backend import RayPool, RayUnavailableError, checkpoint_files, materialize
from training.sweep import SweepSpace, apply, check_space, load_space

ROOT = Path(__file__).resolve().parent.parent
HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="Ray is not installed (pip install -e .[ray])")


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


# -- without Ray running --

def test_a_bare_ray_option_means_a_local_ray():
    assert _bare_option(["evaluate", "--ray"], "--ray", "local") == ["evaluate", "--ray", "local"]
    assert _bare_option(["evaluate", "--ray", "--games", "4"], "--ray", "local") == \
        ["evaluate", "--ray", "local", "--games", "4"]
    assert _bare_option(["evaluate", "--ray", "auto"], "--ray", "local") == \
        ["evaluate", "--ray", "auto"]


def test_ray_asked_for_without_ray_installed_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(RayUnavailableError, match=r"pip install -e '\.\[ray\]'"):
        RayPool("local")
    result = CliRunner().invoke(app, ["evaluate", "--agent", "random", "--games", "2",
                                      "--ray", "local"])
    assert result.exit_code == 2
    assert "Ray, which is not installed: pip install -e '.[ray]'" in result.output
    result = CliRunner().invoke(app, ["sweep", "--config", str(ROOT / "configs" / "smoke.yaml"),
                                      "--space", str(ROOT / "sweeps" / "example.yaml")])
    assert result.exit_code == 2 and "pip install -e '.[ray]'" in result.output
    # and without --ray nothing needs Ray
    assert CliRunner().invoke(app, ["evaluate", "--agent", "random", "--games", "2"]).exit_code == 0


def test_a_cluster_address_that_does_not_answer_is_refused_at_once():
    import socket

    from training.ray_backend import check_reachable

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ValueError, match=f"--ray 127.0.0.1:{port}: nothing answers there"):
        check_reachable(f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(ValueError, match="expected 'auto', HOST:PORT"):
        check_reachable("headnode")
    with socket.socket() as s:  # and a listening port passes
        s.bind(("127.0.0.1", 0))
        s.listen()
        check_reachable(f"127.0.0.1:{s.getsockname()[1]}")


def test_a_shipped_checkpoint_is_rebuilt_from_its_bytes_once_per_content(tmp_path):
    files = checkpoint_files("champion")
    assert set(files) == {"meta.json", "policy.safetensors"}
    assert checkpoint_files("standard") is None  # scripted agents travel by name
    folder = materialize(files)
    assert materialize(files) == folder
    for name, data in files.items():
        assert (Path(folder) / name).read_bytes() == data
    copy = tmp_path / "copy"
    shutil.copytree(CHAMPION_PATH, copy)
    assert materialize(checkpoint_files(str(copy))) == folder  # same bytes, same cache entry
    # the copy plays exactly like the original
    a = evaluate(folder, "standard", games=10, seed=5, progress=False, regret=False)
    b = evaluate("champion", "standard", games=10, seed=5, progress=False, regret=False)
    assert a.to_dict(volatile=False) | {"agent": "x"} == b.to_dict(volatile=False) | {"agent": "x"}


def test_a_ray_task_plays_the_shipped_copy_not_the_path_it_was_given(tmp_path):
    from training.eval_play import Block
    from training.ray_backend import _run_shipped

    gone = tmp_path / "on-the-driver-only"  # a path the worker's node does not have
    block = Block(0, 0, 20, str(gone), "standard", 1, False, 121, False, "fast")
    seen = _run_shipped(lambda b: (b.agent, b.opponent), block, checkpoint_files("champion"),
                        None)
    assert seen == (materialize(checkpoint_files("champion")), "standard")


def test_a_sweep_space_is_checked_against_the_config_schema(tmp_path):
    base = load_config(ROOT / "configs" / "smoke.yaml")
    space = load_space(ROOT / "sweeps" / "example.yaml")
    assert check_space(base, space)["train"]["total_timesteps"] == 32768
    assert apply({"ppo": {"ent_coef": 0.0}}, {"ppo.ent_coef": 0.1}) == {"ppo": {"ent_coef": 0.1}}
    bad_key = SweepSpace(name="x", params={"ppo.learnin_rate": {"choice": [0.1]}})
    with pytest.raises(ValueError, match="no field 'learnin_rate'"):
        check_space(base, bad_key)
    bad_value = SweepSpace(name="x", params={"policy.hidden": {"choice": [16, 4]}})
    with pytest.raises(ValueError, match="policy.hidden"):
        check_space(base, bad_value)
    bad_metric = SweepSpace(name="x", metric="win_rate/greedy",
                            params={"ppo.ent_coef": {"choice": [0.0]}})
    with pytest.raises(ValueError, match="allowed: score, win_rate/random"):
        check_space(base, bad_metric)  # smoke.yaml evaluates against random only
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "params": {"ppo.ent_coef": {"normal": [0, 1]}}}))
    with pytest.raises(ValueError, match="give one of choice, grid"):
        load_space(path)
    path.write_text(yaml.safe_dump({"name": "x",
                                    "params": {"ppo.learning_rate": {"loguniform": ["3e-4", 1]}}}))
    with pytest.raises(ValueError, match=r"\[low, high\]"):
        load_space(path)


# -- on a local Ray with 2 CPUs --

def _quick_expert():
    from agents.expert import ExpertAgent

    return ExpertAgent(sims=4, discard_sims=4)


@needs_ray
@pytest.mark.slow  # starts a local Ray (10-30 s each on 2 busy cores)
@pytest.mark.parametrize("make_agent", [lambda: "champion", _quick_expert],
                         ids=["checkpoint", "per-row-expert"])
def test_a_ray_evaluation_gives_the_local_report(local_ray, make_agent):
    # champion (a checkpoint, shipped through the object store) or an expert (memory: one copy
    # per game) vs standard, three blocks
    local = evaluate(make_agent(), "standard", games=40, seed=7, progress=False)
    pool = RayPool("local", num_cpus=2)
    try:
        on_ray = evaluate(make_agent(), "standard", games=40, seed=7, progress=False, pool=pool)
        assert pool.workers == 2
    finally:
        pool.shutdown()
    assert local_ray.is_initialized()  # the pool joined the running Ray and left it running
    assert on_ray.to_dict(volatile=False) == local.to_dict(volatile=False)
    assert on_ray.margins == local.margins


@needs_ray
@pytest.mark.slow  # starts a local Ray (10-30 s each on 2 busy cores)
def test_a_ray_tournament_gives_the_local_result(local_ray):
    from training.tournament import tournament

    specs = ["random", "greedy", "champion"]
    local = tournament(specs, games=20, seed=3, progress=False)
    on_ray = tournament(specs, games=20, seed=3, progress=False, ray="local")
    assert [r.to_dict(volatile=False) for r in on_ray.reports] == \
        [r.to_dict(volatile=False) for r in local.reports]
    assert on_ray.to_dict()["ratings"] == local.to_dict()["ratings"]
    assert on_ray.reports[0].workers == 2  # the local Ray's CPUs


@needs_ray
@pytest.mark.slow  # starts a local Ray (10-30 s each on 2 busy cores)
def test_a_worker_that_dies_mid_block_is_retried_and_the_report_is_unchanged(local_ray, tmp_path):
    from agents.greedy import GreedyAgent

    marker = tmp_path / "died-once"

    class DiesOnce(GreedyAgent):  # defined here, so Ray ships the class itself to the workers
        """Greedy, except that the first process to play a batch dies on the spot."""

        def act_batch(self, observations, action_masks):
            if not os.path.exists(self.marker):
                open(self.marker, "w").close()
                os._exit(1)  # the whole worker process, as a kill or an OOM would
            return super().act_batch(observations, action_masks)

    agent = DiesOnce(seed=0)
    agent.marker = str(marker)
    agent.name = "dies-once"
    pool = RayPool("local", num_cpus=2, retries=2)
    try:
        on_ray = evaluate(agent, "standard", games=60, seed=11, progress=False, regret=False,
                          pool=pool)
    finally:
        pool.shutdown()
    assert marker.exists()  # a worker did die
    local = evaluate(agent, "standard", games=60, seed=11, progress=False, regret=False)
    assert on_ray.to_dict(volatile=False) == local.to_dict(volatile=False)


@needs_ray
@pytest.mark.slow
def test_a_two_trial_sweep_runs_to_the_end_and_ranks_its_trials(local_ray, tmp_path):
    from training.sweep import sweep

    space = {"name": "tiny", "samples": 1, "seed": 0,
             "overrides": {"train.total_timesteps": 8192, "train.n_envs": 128, "ppo.n_steps": 32,
                           "ppo.batch_size": 1024, "eval.every": 4096, "eval.games": 10,
                           "eval.at_start": True, "eval.final_games": 0},
             "params": {"ppo.learning_rate": {"grid": [0.0003, 0.003]}}}
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(space))
    sweep_dir, ranking = sweep(ROOT / "configs" / "smoke.yaml", path, output_dir=tmp_path / "out")
    assert len(ranking) == 2
    assert {r["params"]["ppo.learning_rate"] for r in ranking} == {0.0003, 0.003}
    assert ranking[0]["best"] >= ranking[1]["best"]
    for row in ranking:
        assert row["error"] is None and row["steps"] == 8192 and not row["stopped_early"]
        run = Path(row["run_dir"])
        assert run.parent.parent == sweep_dir / "runs"  # a normal crib train run per trial
        assert (run / "best" / "policy.safetensors").exists() and any((run / "tb").iterdir())
        evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
        assert [e["step"] for e in evals] == [0, 4096, 8192]
        assert row["best"] == max(e["score"] for e in evals)
    saved = json.loads((sweep_dir / "sweep.json").read_text())
    assert [t["trial"] for t in saved["trials"]] == [r["trial"] for r in ranking]
    # resuming a finished sweep runs nothing again and ranks the same trials
    again_dir, again = sweep(ROOT / "configs" / "smoke.yaml", path, output_dir=tmp_path / "out",
                             resume=True)
    assert again_dir == sweep_dir
    assert [(r["trial"], r["best"]) for r in again] == [(r["trial"], r["best"]) for r in ranking]


@needs_ray
@pytest.mark.slow
def test_a_search_recording_on_ray_equals_the_local_one(local_ray, tmp_path):
    from training.algos.distill_recording import record

    teacher = f"champion-search:sims=4,net={CHAMPION_PATH}"
    for where, ray in (("local", None), ("ray", "local")):
        assert record(tmp_path / where, teacher, ["greedy", "standard"], 3, seed=4,
                      progress=False, games=1, ray=ray) == 0
    assert_same_decisions(tmp_path / "local", tmp_path / "ray", chunks=3, at_least=11,
                          values=True)


def assert_same_decisions(local: Path, on_ray: Path, chunks: int, at_least: int,
                          values: bool = False) -> None:
    """Chunks ``0..chunks-1`` of two recordings hold the same decisions, ``at_least`` in each;
    with ``values``, the teacher's values of every card equal up to float32 rounding (torch's
    sums over its threads)."""
    import numpy as np

    from training.algos.distill_recording import CHUNK_PATTERN

    for k in range(chunks):
        with np.load(local / CHUNK_PATTERN.format(k)) as a, \
                np.load(on_ray / CHUNK_PATTERN.format(k)) as b:
            assert len(a["cards"]) >= at_least
            for key in ("obs", "masks", "cards"):
                np.testing.assert_array_equal(a[key], b[key])
            if values:
                np.testing.assert_allclose(a["margins"], b["margins"], rtol=1e-5, atol=1e-6)


@needs_ray
@pytest.mark.slow
def test_a_recording_with_an_opening_on_ray_equals_the_local_one(local_ray, tmp_path):
    """The opening's checkpoint travels to the workers like the opponent's: the same chunks."""
    from training.algos.distill_recording import record

    for where, ray in (("local", None), ("ray", "local")):
        assert record(tmp_path / where, "standard", ["greedy"], 2, seed=4, progress=False,
                      games=2, ray=ray, opening=(str(CHAMPION_PATH), 30)) == 0
    assert_same_decisions(tmp_path / "local", tmp_path / "ray", chunks=2, at_least=1)


@needs_ray
@pytest.mark.slow
def test_a_recording_with_a_player_on_ray_equals_the_local_one(local_ray, tmp_path):
    """The player's checkpoint travels to the workers like the teacher's: the same chunks."""
    from training.algos.distill_recording import record

    for where, ray in (("local", None), ("ray", "local")):
        assert record(tmp_path / where, "standard", ["greedy"], 2, seed=4, progress=False,
                      games=2, ray=ray, player=str(CHAMPION_PATH)) == 0
    assert_same_decisions(tmp_path / "local", tmp_path / "ray", chunks=2, at_least=11)


def test_search_specs_ship_their_network(tmp_path):
    from training.ray_record import _search_network, _with_network, shipped_files

    assert _search_network("champion-search:sims=8,net=/x/y") == ("champion-search:sims=8",
                                                                  "/x/y")
    assert _search_network("champion-search") == ("champion-search", str(SEARCH_NETWORK_PATH))
    assert _search_network("expert") is None
    assert _with_network("champion-search:sims=8,net=/x/y", "/cache/z") == \
        "champion-search:sims=8,net=/cache/z"
    assert _with_network("champion-search", "/cache/z") == "champion-search:net=/cache/z"
    files = shipped_files("champion-search:sims=2")
    assert set(files) == {"meta.json", "policy.safetensors"}
    assert shipped_files("greedy") is None
