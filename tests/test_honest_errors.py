"""Issue 16: bad input gets one clear line that names the problem, before any work is done (no run
folder made, no card played), and a file cut by a crash costs only its cut line."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

import crib_env
from agents.checkpoint import CheckpointError, load_network, load_training_state, rng_state, save_checkpoint
from agents.networks import build_network
from crib_env.cards import parse_cards
from crib_env.single import SingleAgentCribbageEnv
from training.config_file import load_config, parse_config
from training.plots import merge_evals, plot_command, read_eval_file, read_evals
from training.train import train

MLP = {"features": False, "hidden": 16, "layers": 1}
SEED_MAX = 2**32 - 1


def _one_line_error(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


def _checkpoint(folder: Path, arch: str = "mlp", kwargs: dict | None = None) -> Path:
    """A checkpoint with resume state, written directly (no training)."""
    kwargs = dict(MLP if kwargs is None else kwargs)
    net = build_network(arch, **kwargs)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    info = {"training": {"num_timesteps": 64, "n_updates": 1, "wall_seconds": 1.0}}
    return save_checkpoint(folder, net, arch, kwargs, info, optimizer=optimizer.state_dict(),
                           rng=rng_state())


def _edit_meta(folder: Path, **changes) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    meta.update(changes)
    (folder / "meta.json").write_text(json.dumps(meta))


def _config(**fields):
    data = {"name": "honest", "train": {"total_timesteps": 64, "n_envs": 2, "progress_bar": False},
            "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
            "eval": {"every": 64, "games": 2}}
    data.update(fields)
    return parse_config(data)


# -- item 6: init_from, checkpoint files, config values --------------------------------------------


def test_init_from_of_another_architecture_is_one_line_naming_both(tmp_path):
    source = _checkpoint(tmp_path / "mlp_ckpt")
    out = tmp_path / "runs"
    with pytest.raises(ValueError) as err:
        train(_config(init_from=str(source)), output_dir=out)
    text = _one_line_error(err)
    assert "init_from" in text and "'mlp'" in text and "'cards'" in text
    assert not out.exists() or not any(out.iterdir())  # refused before the run folder is made


def test_init_from_whose_meta_has_no_hashes_names_the_file(tmp_path):
    source = _checkpoint(tmp_path / "nohash")
    _edit_meta(source, sha256=None)
    with pytest.raises(CheckpointError, match=r"meta.json") as err:
        load_network(source)
    assert str(source) in _one_line_error(err)
    out = tmp_path / "runs"
    cfg = _config(init_from=str(source), policy={"arch": "mlp", "features": False, "hidden": 16,
                                                 "layers": 1})
    with pytest.raises(CheckpointError, match=r"meta.json"):
        train(cfg, output_dir=out)
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("bad_rng", [
    [],
    {"python": 5, "numpy": {}, "torch": []},
    {"python": [3, [1, 2, 3], None], "numpy": {"name": "MT19937", "keys": [1], "pos": 0,
                                               "has_gauss": 0, "gauss": 0.0}, "torch": [1, 2]},
    "rng",
])
def test_rng_json_of_the_wrong_shape_is_a_checkpoint_error_naming_it(tmp_path, bad_rng):
    folder = _checkpoint(tmp_path / "ckpt")
    (folder / "rng.json").write_text(json.dumps(bad_rng))
    meta = json.loads((folder / "meta.json").read_text())
    meta["sha256"]["rng.json"] = hashlib.sha256((folder / "rng.json").read_bytes()).hexdigest()
    (folder / "meta.json").write_text(json.dumps(meta))
    before = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state().clone()  # noqa: NPY002
    with pytest.raises(CheckpointError, match=r"rng.json") as err:
        load_training_state(folder)
    assert str(folder) in _one_line_error(err)
    after = random.getstate(), np.random.get_state()[1], torch.get_rng_state()  # noqa: NPY002
    assert before[0] == after[0] and (before[1] == after[1]).all() and before[2].equal(after[2])


def test_a_good_rng_json_still_loads(tmp_path):
    folder = _checkpoint(tmp_path / "ckpt")
    _, _, rng = load_training_state(folder)
    assert set(rng) == {"python", "numpy", "torch"}


@pytest.mark.parametrize("section", ["ppo", "dmc"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_learning_rate_must_be_finite(section, value):
    with pytest.raises(ValueError, match=rf"{section}.learning_rate: got {value!r}.*finite"):
        parse_config({"name": "x", section: {"learning_rate": value}})


def test_learning_rate_inf_in_yaml_is_refused_by_field(tmp_path):
    path = tmp_path / "inf.yaml"
    path.write_text("name: x\nppo:\n  learning_rate: .inf\n")
    with pytest.raises(ValueError, match=r"ppo.learning_rate: got inf"):
        load_config(path)
    path.write_text("name: x\nopponents:\n  - {agent: greedy, weight: .nan}\n")
    with pytest.raises(ValueError, match=r"opponents.0.weight: got nan"):
        load_config(path)


@pytest.mark.parametrize("field", ["seed", "eval.seed"])
def test_seed_above_32_bits_is_refused_naming_the_field(field):
    def config(seed: int) -> dict:
        if field == "seed":
            return {"name": "x", "seed": seed}
        return {"name": "x", "eval": {"seed": seed}}

    with pytest.raises(ValueError, match=rf"(?m)^  {field}: got {2**32}; input should be less "
                                         rf"than or equal to {SEED_MAX}"):
        parse_config(config(2**32))
    parse_config(config(SEED_MAX))  # the largest seed NumPy takes is fine


def test_a_key_given_twice_in_yaml_is_refused_with_its_name_and_line(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("name: x\nppo:\n  learning_rate: 0.001\n  n_epochs: 2\n  learning_rate: 0.1\n")
    with pytest.raises(ValueError) as err:
        load_config(path)
    text = _one_line_error(err)
    assert "'learning_rate'" in text and "line 5" in text and "line 3" in text and str(path) in text
    path.write_text("name: x\nseed: 1\nname: y\n")
    with pytest.raises(ValueError, match=r"'name'.*line 3"):
        load_config(path)


def test_yaml_anchors_and_merge_keys_still_work(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("name: x\nppo:\n  <<: {n_steps: 64, batch_size: 64}\n  n_steps: 128\n")
    assert load_config(path).ppo.n_steps == 128
    path.write_text("name: x\nopponents:\n  - &g {agent: greedy, weight: 1}\n"
                    "  - {<<: *g, weight: 2}\n")
    assert [o.weight for o in load_config(path).opponents] == [1, 2]


# -- item 4: a refused --resume leaves the run as it was -------------------------------------------


def test_refused_resume_does_not_overwrite_the_runs_config(tmp_path):
    out = tmp_path / "runs"
    cfg = _config()  # the default network: arch 'cards'
    run_dir = out / f"{cfg.env_id}__honest__0__20240101-000000"
    _checkpoint(run_dir / "latest")  # this run trained an mlp
    (run_dir / "config.yaml").write_text("the run's own config\n")
    with pytest.raises(ValueError) as err:
        train(cfg, output_dir=out, resume=True)
    text = _one_line_error(err)
    assert "--resume" in text and "'mlp'" in text and "'cards'" in text
    assert (run_dir / "config.yaml").read_text() == "the run's own config\n"


# -- item 8: env actions and options ----------------------------------------------------------------

DEAL = {"hands": {"player_0": "5S 6S 7S 7H KC QC", "player_1": "8C 8D 9H 2D AC 3H"},
        "starter": "KD"}
QC = parse_cards("QC")[0]


def _raw_env():
    env = crib_env.raw_env()
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [DEAL]})
    return env


@pytest.mark.parametrize("action", [QC + 0.9, float(QC), str(QC), True, np.float32(QC),
                                    np.array([QC]), np.array(float(QC)), np.True_])
def test_raw_env_refuses_a_non_integer_action(action):
    env = _raw_env()
    with pytest.raises(ValueError, match=r"integer card id 0..51") as err:
        env.step(action)
    _one_line_error(err)
    assert QC in env.game.hands[0]
    assert not any(entry.cards == (QC,) for entry in env.game.log)
    assert env.agent_selection == "player_0"


@pytest.mark.parametrize("action", [QC, np.int64(QC), np.uint8(QC), np.array(QC)])
def test_raw_env_takes_ints_numpy_integers_and_0d_integer_arrays(action):
    env = _raw_env()
    env.step(action)
    assert env.game.log[-1].cards == (QC,)


def test_wrapped_env_takes_a_0d_integer_array_as_discrete_does():
    env = crib_env.env()
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [DEAL]})
    assert env.action_space("player_0").contains(np.array(QC))
    env.step(np.array(QC))
    assert env.unwrapped.game.log[-1].cards == (QC,)


def _single_env(**kwargs) -> tuple[SingleAgentCribbageEnv, int]:
    env = SingleAgentCribbageEnv(seat="player_0", **kwargs)
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [DEAL]})
    return env, QC


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("action", [QC + 0.9, str(QC), True, np.array([QC])])
def test_single_env_refuses_a_non_integer_action(illegal_action, action):
    env, _ = _single_env(illegal_action=illegal_action)
    with pytest.raises(ValueError, match=r"integer card id 0..51"):
        env.step(action)
    assert QC in env.game_env.game.hands[0] and not env.game_env.terminations["player_0"]
    env.step(np.int64(QC))  # the episode goes on
    assert any(entry.cards == (QC,) for entry in env.game_env.game.log)


def test_single_env_step_before_reset_says_reset():
    env = SingleAgentCribbageEnv()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.action_masks()


@pytest.mark.parametrize("make", [crib_env.raw_env, crib_env.env])
def test_last_after_the_game_ends_says_so(make):
    env = make(target_score=5)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        mask = observation["action_mask"]
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(mask))))
    assert not env.agents
    with pytest.raises(RuntimeError, match=r"game is over.*reset\(\)") as err:
        env.last()
    _one_line_error(err)


def test_raw_env_step_after_every_agent_left_says_so():
    env = crib_env.raw_env(target_score=5)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    while env.agents:
        agent = env.agent_selection
        done = env.terminations[agent]
        env.step(None if done else int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    with pytest.raises(RuntimeError, match=r"game is over.*reset\(\)"):
        env.step(0)


@pytest.mark.parametrize("options, name", [
    ({"deals": None}, "deals"),
    ({"deals": "5S 6S"}, "deals"),
    ({"deals": {"hands": {}, "starter": "KD"}}, "deals"),
    (["first_dealer"], "options"),
    ("player_0", "options"),
])
def test_bad_reset_options_are_value_errors_naming_the_option(options, name):
    env = crib_env.raw_env()
    with pytest.raises(ValueError, match=name) as err:
        env.reset(options=options)
    _one_line_error(err)
    single = SingleAgentCribbageEnv()
    with pytest.raises(ValueError, match=name):
        single.reset(options=options)


def test_unknown_key_in_a_scripted_deal_is_named():
    env = crib_env.raw_env()
    with pytest.raises(ValueError, match=r"scripted deal 0.*'stater'"):
        env.reset(options={"deals": [{**DEAL, "stater": "KD"}]})
    hands = {**DEAL["hands"], "player_2": "4C 4D 4H 4S 5C 5D"}
    with pytest.raises(ValueError, match=r"scripted deal 0.*'player_2'"):
        env.reset(options={"deals": [{"hands": hands, "starter": "KD"}]})
    env.reset(options={"deals": [{"hands": {0: DEAL["hands"]["player_0"],  # 0 / 1 keys still work
                                            1: DEAL["hands"]["player_1"]}, "starter": "KD"}]})


# -- item 9: crib plot reads what a crash left ------------------------------------------------------


def _eval_line(step: int) -> str:
    result = {"win_rate": 0.5, "win_rate_ci95": [0.4, 0.6], "points_per_game": 1.0,
              "points_per_game_ci95": [-1.0, 3.0]}
    return json.dumps({"step": step, "wall_seconds": step / 10, "score": 0.5, "best": False,
                       "results": {"greedy": result}})


def test_plot_skips_a_line_cut_by_a_crash_and_says_so(tmp_path, capsys):
    full = [_eval_line(128), _eval_line(256)]
    (tmp_path / "evals.jsonl").write_text("\n".join(full) + "\n" + _eval_line(384)[:40])
    assert [line["step"] for line in read_evals(tmp_path)] == [128, 256]
    assert "skipped 1 line" in capsys.readouterr().err
    out = tmp_path / "curves.png"
    plot_command(tmp_path, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    captured = capsys.readouterr()
    assert "skipped 1 line" in captured.err and "wrote" in captured.out


def test_plot_keeps_a_line_a_resumed_run_appended_to_a_cut_one(tmp_path, capsys):
    text = _eval_line(128) + "\n" + _eval_line(256)[:50] + _eval_line(256) + "\n" + _eval_line(384)
    (tmp_path / "evals.jsonl").write_text(text + "\n")
    assert [line["step"] for line in read_evals(tmp_path)] == [128, 256, 384]
    assert "skipped 1 line" in capsys.readouterr().err


def test_plot_draws_evaluations_measured_afterwards_with_the_run(tmp_path, capsys):
    (tmp_path / "evals.jsonl").write_text(_eval_line(128) + "\n" + _eval_line(256) + "\n")
    later = tmp_path / "expert_evals.jsonl"
    expert = json.loads(_eval_line(256).replace('"greedy"', '"expert"'))
    expert["wall_seconds"] = 999.0
    first = json.loads(_eval_line(0).replace('"greedy"', '"expert"'))
    later.write_text(json.dumps(first) + "\n" + json.dumps(expert) + "\n")
    merged = merge_evals(read_evals(tmp_path), read_eval_file(later))
    assert [line["step"] for line in merged] == [0, 128, 256]
    assert sorted(merged[2]["results"]) == ["expert", "greedy"]
    assert merged[2]["wall_seconds"] == 25.6  # the run's own clock, not the later measurement's
    out = tmp_path / "curves.png"
    plot_command(tmp_path, out, extra=[later])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(FileNotFoundError, match="no evaluation file at .*missing.jsonl"):
        plot_command(tmp_path, out, extra=[tmp_path / "missing.jsonl"])


def test_plot_refuses_a_file_with_no_readable_line(tmp_path):
    (tmp_path / "evals.jsonl").write_text(_eval_line(128)[:30])
    with pytest.raises(ValueError, match=r"evals.jsonl.*no (complete|readable)"):
        read_evals(tmp_path)
