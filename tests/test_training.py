"""crib train end to end with a tiny budget: checkpoints, TensorBoard, resume, loading and its
errors, plots. One short real run (module fixture) serves most tests."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from agents.checkpoint import CheckpointError, load_network, load_training_state
from agents.learned import load_learned_agent
from agents.networks import ACTION_N, network_input
from agents.registry import make_agent
from crib_cli.main import app
from crib_env.game import Game
from crib_env.observation import OBS_SIZE, OBSERVATION_VERSION, encode
from training.config_file import load_config, parse_config

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def tiny_config(tmp: Path, total: int, name: str = "tiny", final_games: int = 0) -> Path:
    """configs/smoke.yaml with a budget small enough for a unit test."""
    data = yaml.safe_load((ROOT / "configs" / "smoke.yaml").read_text())
    data["name"] = name
    data["train"].update(total_timesteps=total, progress_bar=False, n_envs=2)
    data["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    data["eval"].update(every=128, games=4, final_games=final_games, at_start=False)
    data["selfplay"]["snapshot_every"] = 128
    path = tmp / f"{name}_{total}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def tb_scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("train")
    out = tmp / "runs"
    first = runner.invoke(app, ["train", "--config", str(tiny_config(tmp, 256)),
                                "--output-dir", str(out)])
    assert first.exit_code == 0, first.output
    (run_dir,) = out.iterdir()
    meta_before = json.loads((run_dir / "latest" / "meta.json").read_text())
    # the same file, carried on longer and with final games from the command line
    resumed = runner.invoke(app, ["train", "--config", str(tiny_config(tmp, 256)),
                                  "--output-dir", str(out), "--resume",
                                  "--set", "train.total_timesteps=512",
                                  "--set", "eval.final_games=4"])
    assert resumed.exit_code == 0, resumed.output
    return {"tmp": tmp, "out": out, "run": run_dir, "meta_before": meta_before,
            "output": first.output, "resumed_output": resumed.output}


def test_run_name_says_env_config_seed_and_time(run):
    assert re.fullmatch(rf"crib_v{OBSERVATION_VERSION}-points-deal__tiny__0__\d{{8}}-\d{{6}}",
                        run["run"].name)


def test_resolved_config_is_saved_with_the_run(run):
    saved = load_config(run["run"] / "config.yaml")
    # the resumed config, the file's with the command line's --set applied
    assert saved.name == "tiny" and saved.train.total_timesteps == 512
    assert saved.eval.final_games == 4 and saved.eval.games == 4
    assert saved.ppo.gae_lambda == 0.95  # defaults are filled in
    # the resume command it prints carries the same changes
    assert re.search(r"--resume --set train.total_timesteps=512 --set eval.final_games=4\)",
                     run["resumed_output"]), run["resumed_output"]


def test_set_changes_single_fields_of_a_config_file(tmp_path):
    path = tiny_config(tmp_path, 64)
    text = path.read_text()
    cfg = load_config(path, ["seed=3", "ppo.learning_rate=1e-4", "opponents.0.agent=greedy",
                             "opponents.1={agent: standard, weight: 2}", "train.progress_bar=true",
                             "eval.opponents=[greedy, standard]"])
    assert cfg.seed == 3 and cfg.ppo.learning_rate == 1e-4 and cfg.train.progress_bar is True
    assert [(o.agent, o.weight) for o in cfg.opponents][:2] == [("greedy", 1.0), ("standard", 2)]
    assert cfg.eval.opponents == ["greedy", "standard"]
    assert path.read_text() == text  # the file is not touched
    # a section the file leaves out is created; the last --set of a field wins
    path.write_text("name: x\n")
    cfg = load_config(path, ["dmc.learning_rate=0.002", "seed=1", "seed=2"])
    assert cfg.dmc.learning_rate == 0.002 and cfg.seed == 2


@pytest.mark.parametrize("item, message", [
    ("train.totl=5", r"with --set train.totl=5: invalid config\n  train.totl: unknown field 'totl'; "
                     r"allowed: total_timesteps"),
    ("train.total_timesteps=lots", r"with --set train.total_timesteps=lots: invalid config\n  "
                                   r"train.total_timesteps: got 'lots'"),
    ("policy.arch=cnn", r"policy.arch: got 'cnn'; allowed: 'cards', 'mlp'"),
    ("seed", r"--set 'seed': give KEY=VALUE with KEY a dotted field path"),
    ("train..n_envs=2", r"--set 'train..n_envs=2': give KEY=VALUE"),
    ("seed.x=1", r"--set 'seed.x=1': seed is 0, not a section"),
    ("opponents.7.agent=greedy", r"opponents is a list of 2; give an index from 0 to 1"),
    ("opponents.first.agent=greedy", r"opponents is a list of 2; give an index from 0 to 1"),
    ("eval.opponents=[greedy", r"--set 'eval.opponents=\[greedy': the value is not valid YAML"),
])
def test_a_bad_set_is_refused_naming_it_before_any_run_starts(tmp_path, item, message):
    out = tmp_path / "runs"
    result = runner.invoke(app, ["train", "--config", str(tiny_config(tmp_path, 64)),
                                 "--output-dir", str(out), "--set", item])
    assert result.exit_code == 2, result.output
    assert re.search(message, result.output), result.output
    assert not out.exists()


def test_smoke_training_writes_checkpoint_and_tensorboard(run):
    run_dir = run["run"]
    for sub in ("latest", "best"):
        assert (run_dir / sub / "policy.safetensors").exists()
        assert (run_dir / sub / "meta.json").exists()
    assert str(run_dir / "best") in run["output"]
    scalars = tb_scalars(run_dir)
    for tag in ("eval/win_rate/random", "eval/points_per_game/random", "charts/SPS",
                "game/pegging_per_deal", "game/hand_per_deal", "game/crib_per_deal",
                "train/loss"):
        assert tag in scalars, f"missing {tag}"
    assert all(0.0 <= v <= 1.0 for _, v in scalars["eval/win_rate/random"])
    assert list(run_dir.rglob("*.tmp")) == []  # atomic writes leave no temporary files


def test_resume_continues_step_count_and_updates(run):
    before = run["meta_before"]["training"]
    after = json.loads((run["run"] / "latest" / "meta.json").read_text())["training"]
    assert before["num_timesteps"] == 256
    assert after["num_timesteps"] == 512
    # one epoch per 128-step rollout: the saved weights include every rollout's update
    assert (before["n_updates"], after["n_updates"]) == (2, 4)
    steps = [json.loads(line)["step"] for line in
             (run["run"] / "evals.jsonl").read_text().splitlines()]
    assert steps == [128, 256, 384, 512]


def test_run_ends_with_an_evaluation_table_and_summary(run):
    assert "win rate" in run["resumed_output"] and "points/game" in run["resumed_output"]
    assert "learning curve of" in run["resumed_output"]  # crib train shows both tables ...
    assert "points/game" not in run["output"]  # ... only when the config asks for final games
    summary = json.loads((run["run"] / "summary.json").read_text())
    assert summary["num_timesteps"] == 512 and summary["steps_per_second"] > 0
    assert [row["opponent"] for row in summary["final"]] == ["random"]
    assert summary["final"][0]["games"] == 4


def test_resume_without_a_run_says_so(tmp_path):
    result = runner.invoke(app, ["train", "--config", str(tiny_config(tmp_path, 64)),
                                 "--output-dir", str(tmp_path / "empty"), "--resume"])
    assert result.exit_code == 2
    assert "no run of config 'tiny'" in result.output


def test_checkpoint_round_trips_and_plays(run):
    latest = run["run"] / "latest"
    net, meta = load_network(latest)
    assert meta["num_timesteps"] == 512
    # the commit that trained it (this checkout's), for reproducing a shipped checkpoint
    assert re.fullmatch(r"[0-9a-f]{40}", meta["code"]["commit"])
    assert isinstance(meta["code"]["dirty"], bool)
    _, optimizer, rng = load_training_state(latest)
    assert optimizer["state"] and "torch" in rng
    agent = make_agent(str(latest), seed=0)  # the path crib evaluate --agent takes
    game = Game(seed=3)
    while not game.is_over:
        player = game.to_move
        mask = game.legal_mask()
        card = agent.act(encode(game, player), mask) if player == 0 else \
            int(np.flatnonzero(mask)[0])
        assert mask[card] == 1
        game.step(card)
    # a run folder resolves to its best, and the reloaded network gives the saved one's numbers
    again = load_learned_agent(run["run"], seed=0)
    saved, _ = load_network(run["run"] / "best")
    games = [Game(seed=s) for s in range(8)]
    observations = [encode(g, g.to_move) for g in games]
    masks = [g.legal_mask() for g in games]
    rows = torch.from_numpy(np.stack([network_input(obs, mask, again.features)
                                      for obs, mask in zip(observations, masks, strict=True)]))
    with torch.no_grad():
        logits = saved(rows)[:, :ACTION_N]
        assert torch.equal(again.net(rows), saved(rows))
    for obs, mask, game_logits in zip(observations, masks, logits, strict=True):
        legal = np.flatnonzero(mask)
        assert again.act(obs, mask) == legal[int(torch.argmax(game_logits[legal]))]


def test_evaluate_command_plays_a_checkpoint(run, tmp_path):
    report = tmp_path / "r.json"
    result = runner.invoke(app, ["evaluate", "--agent", str(run["run"] / "best"),
                                 "--opponent", "random", "--games", "4", "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["games"] == 4


def test_config_with_a_bad_field_names_field_and_allowed_values(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\npolicy: {arch: transformer}\nenv: {reward: score}\nppo: {lr: 1}\n")
    result = runner.invoke(app, ["train", "--config", str(bad)])
    assert result.exit_code == 2
    assert "policy.arch: got 'transformer'; allowed: 'cards', 'mlp' or 'afterstate'" in result.output
    assert "env.reward: got 'score'; allowed: 'win', 'points' or 'winprob'" in result.output
    assert "ppo.lr: unknown field 'lr'; allowed: learning_rate" in result.output


def test_config_batch_larger_than_rollout_is_refused():
    with pytest.raises(ValueError, match=r"ppo.batch_size: got 999; allowed: at most"):
        parse_config({"name": "x", "ppo": {"n_steps": 64, "batch_size": 999},
                      "train": {"n_envs": 2}})


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_checkpoint_of_another_layout_version_is_refused(run, tmp_path):
    ckpt = _copy(run["run"] / "latest", tmp_path / "old")
    meta = json.loads((ckpt / "meta.json").read_text())
    meta.update(observation_version=OBSERVATION_VERSION + 7, obs_size=OBS_SIZE - 3, action_n=60)
    (ckpt / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError) as err:
        load_learned_agent(ckpt)
    text = str(err.value)
    assert f"observation layout version {OBSERVATION_VERSION + 7}, this build uses " \
           f"{OBSERVATION_VERSION}" in text
    assert f"observation size {OBS_SIZE - 3}" in text
    assert "action space Discrete(60), this build uses Discrete(52)" in text


def test_corrupted_files_give_clear_errors(run, tmp_path):
    ckpt = _copy(run["run"] / "latest", tmp_path / "bad")
    weights = bytearray((ckpt / "policy.safetensors").read_bytes())
    weights[len(weights) // 2] ^= 0xFF
    (ckpt / "policy.safetensors").write_bytes(bytes(weights))
    with pytest.raises(CheckpointError, match="policy.safetensors does not match the SHA-256"):
        load_learned_agent(ckpt)
    (ckpt / "policy.safetensors").write_bytes(b"not a safetensors file")
    meta = json.loads((ckpt / "meta.json").read_text())
    import hashlib

    meta["sha256"]["policy.safetensors"] = hashlib.sha256(b"not a safetensors file").hexdigest()
    (ckpt / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="policy.safetensors is corrupt"):
        load_learned_agent(ckpt)
    (ckpt / "meta.json").write_text("{ truncated")
    with pytest.raises(CheckpointError, match="meta.json is corrupt"):
        load_learned_agent(ckpt)
    result = runner.invoke(app, ["evaluate", "--agent", str(ckpt), "--games", "2",
                                 "--opponent", "random"])
    assert result.exit_code == 2 and "meta.json is corrupt" in result.output


class _Boom:
    def __reduce__(self):
        return (Path.touch, (Path(_Boom.target),))


def test_resume_state_is_never_unpickled(run, tmp_path):
    ckpt = _copy(run["run"] / "latest", tmp_path / "evil")
    _Boom.target = str(tmp_path / "pwned")
    (ckpt / "optimizer.pt").write_bytes(pickle.dumps({"state": _Boom()}))
    meta = json.loads((ckpt / "meta.json").read_text())
    import hashlib

    meta["sha256"]["optimizer.pt"] = hashlib.sha256((ckpt / "optimizer.pt").read_bytes()).hexdigest()
    (ckpt / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="optimizer.pt is corrupt"):
        load_training_state(ckpt)
    assert not (tmp_path / "pwned").exists()


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        load_learned_agent(tmp_path / "nothing")


def test_plot_draws_a_png(run, tmp_path):
    out = tmp_path / "curves.png"
    result = runner.invoke(app, ["plot", str(run["run"]), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_of_a_folder_without_evaluations_says_so(tmp_path):
    result = runner.invoke(app, ["plot", str(tmp_path)])
    assert result.exit_code == 2 and "has no evals.jsonl" in result.output


def test_self_play_pool_holds_frozen_snapshots(run):
    pool = sorted(p.name for p in (run["run"] / "pool").iterdir())
    assert len(pool) == 3  # pool_size of smoke.yaml: the newest three of 128 .. 512
    assert pool[-1] == "step_0000000512"
