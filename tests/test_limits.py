"""Limits and checks for hostile or careless input (issue 27): games per evaluation, network sizes
in a checkpoint's meta.json, finite weights, seeds, and action checks that hold under python -O."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest
from typer.testing import CliRunner

import crib_env
from agents.checkpoint import CheckpointError, load_network, save_checkpoint, sha256_file
from agents.networks import MAX_SIZES, build_network
from agents.registry import CHAMPION_PATH
from crib_cli.main import app
from crib_env.single import SingleAgentCribbageEnv
from crib_env.vector import CribbageVectorEnv
from training.evaluate import evaluate
from training.limits import MAX_GAMES

runner = CliRunner()


# -- games per evaluation --


@pytest.mark.parametrize("command", [
    ["evaluate", "--agent", "random", "--opponent", "random"],
    ["tournament", "--agents", "random,greedy"],
])
def test_a_huge_game_count_is_refused_at_once_naming_games(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    tracemalloc.start()
    started = time.perf_counter()
    result = runner.invoke(app, [*command, "--games", str(10**12)])
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.exit_code == 2
    assert result.output == ("error: --games must be at most 1,000,000 (training.limits: every "
                             "game's result is kept for the report), got 1,000,000,000,000\n")
    assert seconds < 10 and peak < 50e6  # nothing was planned or played


def test_the_library_refuses_more_games_than_the_limit():
    with pytest.raises(ValueError, match="games must be at most 1,000,000"):
        evaluate("random", "random", games=MAX_GAMES + 1, progress=False)


def test_the_games_limit_bounds_the_kept_results():
    """What MAX_GAMES bounds: the results kept per game (training.limits states ~2 KB)."""
    evaluate("random", "random", games=20, progress=False, regret=False)  # warm up
    tracemalloc.start()
    report = evaluate("random", "random", games=200, progress=False, regret=False)
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert report.games == 200
    assert kept / 200 < 4_000  # bytes per game still held with the report


# -- network sizes and weights in a checkpoint --


def _checkpoint(tmp_path, arch="mlp", **kwargs):
    net = build_network(arch, **kwargs)
    return save_checkpoint(tmp_path / "ckpt", net, arch, kwargs, {})


def _edit_meta(folder, **kwargs):
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["arch_kwargs"].update(kwargs)
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize(("arch", "field", "value"), [
    ("mlp", "hidden", 1_000_000), ("mlp", "layers", 10**9), ("cards", "context", 10**7),
    ("cards", "embed", 10**8), ("cards", "attention", 500), ("mlp", "hidden", 0),
    ("mlp", "hidden", 64.5), ("mlp", "hidden", "64"), ("cards", "prior", "yes"),
])
def test_a_network_size_over_the_limit_is_refused_before_allocation(tmp_path, arch, field, value):
    kwargs = {"hidden": 8, "layers": 1} if arch == "mlp" else {"hidden": 8, "context": 8,
                                                                 "embed": 4}
    folder = _checkpoint(tmp_path, arch, **kwargs)
    _edit_meta(folder, **{field: value})
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(CheckpointError, match=f"bad architecture in meta.json \\({field} must be"):
        load_network(folder)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.perf_counter() - started < 2 and peak < 20e6


def test_the_stated_network_limits_admit_every_shipped_config():
    from agents.registry import SHIPPED_CHECKPOINTS

    assert MAX_SIZES == {"hidden": 4096, "context": 4096, "embed": 1024, "layers": 16,
                         "attention": 16, "need": 121}
    shipped = sorted(p for p in SHIPPED_CHECKPOINTS.iterdir() if (p / "meta.json").is_file())
    assert {p.name for p in shipped} >= {"champion", "distilled", "scratch"}
    for folder in shipped:
        net, _ = load_network(folder)  # every size checked against the limits first
        assert net is not None
    _, meta = load_network(CHAMPION_PATH)
    members = meta["arch_kwargs"]["members"] if meta["arch"] == "pool" else [meta]
    assert [m["arch_kwargs"]["attention"] for m in members] == [2] * len(members)


def test_arch_kwargs_that_are_not_an_object_are_named(tmp_path):
    folder = _checkpoint(tmp_path, hidden=8, layers=1)
    meta = json.loads((folder / "meta.json").read_text())
    meta["arch_kwargs"] = [1, 2]
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="arch_kwargs in meta.json must be an object"):
        load_network(folder)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_weights_with_nan_or_inf_are_refused_naming_the_tensor(tmp_path, bad):
    from safetensors.torch import load_file, save_file

    folder = _checkpoint(tmp_path, hidden=8, layers=1)
    policy = folder / "policy.safetensors"
    state = load_file(str(policy))
    state["body.0.weight"][3, 2] = bad
    save_file(state, str(policy))
    meta = json.loads((folder / "meta.json").read_text())
    meta["sha256"]["policy.safetensors"] = sha256_file(policy)  # a recomputed hash
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="tensor 'body.0.weight' holds NaN or infinite"):
        load_network(folder)


# -- seeds --


@pytest.mark.parametrize("args", [["play", "--seed", "-1"], ["play", "--seed", "x"],
                                  ["evaluate", "--agent", "random", "--seed", "-1"],
                                  ["tournament", "--agents", "random,greedy", "--seed", "-5"],
                                  ["odds", "build", "--seed", "-1"]])
def test_a_bad_seed_on_the_command_line_names_the_option(args):
    result = runner.invoke(app, args, input="q\n")
    assert result.exit_code == 2
    assert "Invalid value for '--seed'" in result.output
    assert "Traceback" not in result.output


ENVS = {
    "aec": lambda: crib_env.env(),
    "raw": lambda: crib_env.raw_env(),
    "single": lambda: SingleAgentCribbageEnv(),
    "vector": lambda: CribbageVectorEnv(2),
}


def _state(env):
    if isinstance(env, CribbageVectorEnv):
        return env.state.copy() if isinstance(env.state, np.ndarray) else repr(env.state)
    game = env.unwrapped.game if not isinstance(env, SingleAgentCribbageEnv) else \
        env.game_env.game
    return repr(game), list(game.scores), list(game.hands[0]), list(game.hands[1])


@pytest.mark.parametrize("kind", sorted(ENVS))
@pytest.mark.parametrize("seed", ["x", 1.5, -1, True, [1], b"ab"])
def test_reset_refuses_a_bad_seed_by_name_and_changes_nothing(kind, seed):
    env = ENVS[kind]()
    env.reset(seed=3)
    before = _state(env)
    with pytest.raises(ValueError, match=r"seed must be a whole number >= 0 or None, got "):
        env.reset(seed=seed)
    after = _state(env)
    assert repr(before) == repr(after)


@pytest.mark.parametrize("kind", sorted(ENVS))
def test_numpy_integer_seeds_give_the_same_games_as_ints(kind):
    a, b = ENVS[kind](), ENVS[kind]()
    a.reset(seed=7)
    b.reset(seed=np.int64(7))
    assert repr(_state(a)) == repr(_state(b))


# -- action checks under python -O --


def test_an_out_of_range_action_raises_under_python_O():
    code = """
import crib_env
from crib_env.aec_wrapper import ActionOutOfBoundsError
env = crib_env.env()
env.reset(seed=0)
try:
    env.step(99)
except ActionOutOfBoundsError as err:
    print("refused:", err)
else:
    print("accepted")
"""
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.startswith("refused: action 99 is outside the action space Discrete(52) of "
                          "player_"), out


def test_the_out_of_bounds_error_is_both_an_assertion_and_a_value_error():
    env = crib_env.env()
    env.reset(seed=0)
    for error in (AssertionError, ValueError):
        with pytest.raises(error, match="outside the action space"):
            env.step(-1)
