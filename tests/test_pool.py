"""A pool of networks (agents.networks.LogitPool, training.pool): its logits are the weighted mean of
its members', its checkpoint loads like any other, and bad members or weights are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.checkpoint import load_network, save_checkpoint
from agents.learned import legal_argmax, load_learned_agent
from agents.networks import build_network, network_input_batch
from crib_env.game import Game, Phase
from crib_env.observation import SLICES, encode, phase_column
from training.pool import main, parse_member, pool_checkpoint

KWARGS = {"features": True, "hidden": 16, "context": 16, "embed": 4, "attention": 1}


def _network(folder, seed, **kwargs):
    torch.manual_seed(seed)
    kwargs = {**KWARGS, **kwargs}
    save_checkpoint(folder, build_network("cards", **kwargs), "cards", kwargs,
                    {"name": folder.name})
    return folder


def _decisions(rows=64, seed=0):
    """Observations and masks of the decisions of a game played at random: discards and play."""
    rng, game, observations, masks = np.random.default_rng(seed), Game(seed=seed), [], []
    while not game.is_over and len(observations) < rows:
        observations.append(encode(game, game.to_move))
        masks.append(game.legal_mask())
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    return np.stack(observations), np.stack(masks)


@pytest.fixture
def members(tmp_path):
    return [_network(tmp_path / f"m{i}", seed=i) for i in range(3)]


def test_pool_logits_are_the_weighted_mean_of_its_members(tmp_path, members):
    obs, masks = _decisions()
    weights = [1.0, 2.0, 5.0]
    pool = load_learned_agent(pool_checkpoint(tmp_path / "pool", list(zip(members, weights, strict=True))))
    parts = [load_learned_agent(m).logits_batch(obs, masks).astype(np.float64) for m in members]
    expected = sum(w * p for w, p in zip(weights, parts, strict=True)) / sum(weights)
    got = pool.logits_batch(obs, masks)
    legal = masks > 0
    assert np.allclose(got[legal], expected[legal], rtol=1e-5, atol=1e-5)
    assert np.array_equal(pool.act_batch(obs, masks), legal_argmax(expected, masks))
    # one row at a time, the same cards
    assert [pool.act(o, m) for o, m in zip(obs, masks, strict=True)] == list(legal_argmax(expected, masks))


def test_a_pool_of_one_network_twice_plays_as_that_network(tmp_path, members):
    obs, masks = _decisions(seed=3)
    pool = load_learned_agent(pool_checkpoint(tmp_path / "pool", [(members[0], 1.0)] * 2))
    assert np.array_equal(pool.act_batch(obs, masks),
                          load_learned_agent(members[0]).act_batch(obs, masks))


def test_pool_meta_names_its_members_and_weights(tmp_path, members):
    folder = pool_checkpoint(tmp_path / "pool", [(members[0], 1.0), (members[1], 3.0)],
                             name="pooled")
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["arch"] == "pool" and meta["name"] == "pooled"
    assert [m["weight"] for m in meta["pool"]] == [1.0, 3.0]
    assert [m["name"] for m in meta["pool"]] == ["m0", "m1"]
    member_meta = json.loads((members[1] / "meta.json").read_text())
    assert meta["pool"][1]["policy_sha256"] == member_meta["sha256"]["policy.safetensors"]


def test_pool_input_row_is_its_members_row(tmp_path, members):
    obs, masks = _decisions(rows=4)
    pool = load_learned_agent(pool_checkpoint(tmp_path / "pool", [(m, 1.0) for m in members]))
    assert pool.features is True
    assert network_input_batch(obs, masks, True).shape[1] > obs.shape[1]


@pytest.mark.parametrize(("members", "weights", "problem"), [
    ([{"arch": "cards", "arch_kwargs": KWARGS}], [1.0], "members must be a list of 2"),
    ([{"arch": "cards", "arch_kwargs": KWARGS}] * 2, [1.0], "one positive number per member"),
    ([{"arch": "cards", "arch_kwargs": KWARGS}] * 2, [1.0, 0.0], "one positive number"),
    ([{"arch": "cards", "arch_kwargs": KWARGS}] * 2, [1.0, True], "one positive number"),
    ([{"arch": "pool", "arch_kwargs": {}}] * 2, [1.0, 1.0], "a pool member must be"),
    ([{"arch": "cards", "arch_kwargs": {**KWARGS, "features": False}}] * 2, [1.0, 1.0],
     "must read the same input row"),
    ([{"arch": "cards", "arch_kwargs": {**KWARGS, "hidden": 10**6}}] * 2, [1.0, 1.0],
     "hidden must be a whole number"),
])
def test_bad_pools_are_refused_naming_the_problem(members, weights, problem):
    with pytest.raises(ValueError, match=problem):
        build_network("pool", features=True, members=members, weights=weights)


def test_members_reading_different_rows_are_refused(tmp_path, members):
    plain = _network(tmp_path / "plain", seed=9, features=False)
    with pytest.raises(ValueError, match="different input rows"):
        pool_checkpoint(tmp_path / "pool", [(members[0], 1.0), (plain, 1.0)])
    assert not (tmp_path / "pool").exists()


def test_member_text_and_command_line_errors(tmp_path, members, capsys):
    assert parse_member(f"{members[0]}=2.5") == (members[0], 2.5, None)
    assert parse_member(str(members[0])) == (members[0], 1.0, None)
    assert parse_member(f"{members[0]}=1:0") == (members[0], 1.0, 0.0)
    assert parse_member(f"{members[0]}=1:0:2") == (members[0], 1.0, 0.0, 2.0)
    for text, problem in ((f"{members[0]}=x", "is not a number"),
                          (f"{members[0]}=-1", "must be positive"),
                          (f"{members[0]}=0", "must be positive"),
                          (f"{members[0]}=1:y", "'y' is not a number"),
                          (f"{members[0]}=1:-2", "must be positive"),
                          (f"{members[0]}=1:1:1:1", "at most three weights")):
        with pytest.raises(ValueError, match=problem):
            parse_member(text)
    with pytest.raises(SystemExit):
        main([str(tmp_path / "pool"), str(members[0])])
    with pytest.raises(SystemExit):
        main([str(tmp_path / "pool"), str(members[0]), str(tmp_path / "missing")])
    assert "missing" in capsys.readouterr().err
    assert not (tmp_path / "pool").exists()
    main([str(tmp_path / "pool"), str(members[0]), f"{members[1]}=2"])
    assert load_learned_agent(tmp_path / "pool").act_batch(*_decisions(rows=8)).shape == (8,)


def test_a_pool_with_discard_weights_throws_as_one_network_and_plays_as_another(tmp_path,
                                                                              members):
    obs, masks = _decisions(rows=80, seed=7)
    discarding = obs[:, phase_column(Phase.DISCARD)] == 1
    assert discarding.any() and (~discarding).any()
    split = load_learned_agent(pool_checkpoint(
        tmp_path / "split", [(members[0], 1.0, 0.0), (members[1], 0.0, 1.0), (members[2], 1.0, 3.0)]))
    parts = [load_learned_agent(m).logits_batch(obs, masks).astype(np.float64) for m in members]
    legal = masks > 0
    got = split.logits_batch(obs, masks)
    play = (parts[0] + parts[2]) / 2
    throw = (parts[1] + 3 * parts[2]) / 4
    expected = np.where(discarding[:, None], throw, play)
    assert np.allclose(got[legal], expected[legal], rtol=1e-5, atol=1e-5)
    # nested: the split pool's shares carry into an outer pool, apart for the discards
    outer = pool_checkpoint(tmp_path / "outer", [(tmp_path / "split", 2.0, 1.0), (members[0], 1.0)])
    meta = json.loads((outer / "meta.json").read_text())
    assert [m["weight"] for m in meta["pool"]] == [1.0, 0.0, 1.0, 1.0]
    assert [m["discard_weight"] for m in meta["pool"]] == [0.0, 0.25, 0.75, 1.0]
    nested = load_learned_agent(outer).logits_batch(obs, masks)
    expected = np.where(discarding[:, None], (throw + parts[0]) / 2, (2 * play + parts[0]) / 3)
    assert np.allclose(nested[legal], expected[legal], rtol=1e-5, atol=1e-5)
    # the same weights on both make no discard_weights at all
    same = pool_checkpoint(tmp_path / "same", [(members[0], 1.0, 1.0), (members[1], 2.0)])
    assert "discard_weights" not in json.loads((same / "meta.json").read_text())["arch_kwargs"]


def _with_scores(obs, scores):
    """The rows ``obs`` with each row's (own, opponent's) score set to ``scores``."""
    obs = obs.copy()
    obs[:, SLICES["scores"]] = np.asarray(scores, dtype=np.float32) / 121.0
    return obs


def test_a_pool_with_endgame_weights_hands_the_end_of_the_game_to_other_networks(tmp_path,
                                                                                 members):
    obs, masks = _decisions(rows=80, seed=7)
    discarding = obs[:, phase_column(Phase.DISCARD)] == 1
    # the board per row: far from the end, exactly 30 short (the end), 31 short (not yet)
    rng = np.random.default_rng(0)
    scores = rng.choice([(10, 40), (91, 20), (60, 90), (20, 111)], size=len(obs))
    near = scores.max(axis=1) >= 91
    obs = _with_scores(obs, scores)
    assert near.any() and (~near).any() and (discarding & ~near).any()
    pool = load_learned_agent(pool_checkpoint(
        tmp_path / "ends", [(members[0], 1.0, 3.0, 0.0), (members[1], 1.0, 1.0, 0.0),
                            (members[2], 0.0, 0.0, 1.0)]))
    parts = [load_learned_agent(m).logits_batch(obs, masks).astype(np.float64) for m in members]
    legal = masks > 0
    expected = np.where(near[:, None], parts[2],
                        np.where(discarding[:, None], (3 * parts[0] + parts[1]) / 4,
                                 (parts[0] + parts[1]) / 2))
    got = pool.logits_batch(obs, masks)
    assert np.allclose(got[legal], expected[legal], rtol=1e-5, atol=1e-5)
    # a plain pool nested in it keeps its shares near the end too
    pool_checkpoint(tmp_path / "plain", [(members[0], 1.0), (members[1], 3.0)])
    outer = pool_checkpoint(tmp_path / "outer", [(tmp_path / "plain", 1.0, 1.0, 1.0),
                                                  (members[2], 0.0, 0.0, 1.0)], endgame_need=10)
    meta = json.loads((outer / "meta.json").read_text())
    assert meta["arch_kwargs"]["endgame_need"] == 10
    assert [m["endgame_weight"] for m in meta["pool"]] == [0.25, 0.75, 1.0]
    nested = load_learned_agent(outer).logits_batch(obs, masks)
    within_10 = scores.max(axis=1) >= 111
    plain = (parts[0] + 3 * parts[1]) / 4
    expected = np.where(within_10[:, None], (plain + parts[2]) / 2, plain)
    assert np.allclose(nested[legal], expected[legal], rtol=1e-5, atol=1e-5)


def test_bad_endgame_weights_are_refused(tmp_path, members):
    with pytest.raises(ValueError, match="for every member or for none"):
        pool_checkpoint(tmp_path / "p", [(members[0], 1.0, None, 1.0), (members[1], 1.0)])
    with pytest.raises(ValueError, match="weight 0 in every one of"):
        pool_checkpoint(tmp_path / "p", [(members[0], 1.0, 1.0, 1.0), (members[1], 0.0, 0.0, 0.0)])
    with pytest.raises(ValueError, match="endgame_need must be a positive whole number"):
        pool_checkpoint(tmp_path / "p", [(members[0], 1.0, 1.0, 1.0), (members[1], 1.0, 1.0, 0.0)],
                        endgame_need=0)
    pool_checkpoint(tmp_path / "ends", [(members[0], 1.0, 1.0, 0.0), (members[1], 0.0, 0.0, 1.0)])
    with pytest.raises(ValueError, match="pool it with endgame weights for every member"):
        pool_checkpoint(tmp_path / "p", [(tmp_path / "ends", 1.0), (members[2], 1.0)])
    pool_checkpoint(tmp_path / "split", [(members[0], 1.0, 0.0), (members[1], 0.0, 1.0)])
    with pytest.raises(ValueError, match="no one share to pool apart"):
        pool_checkpoint(tmp_path / "p", [(tmp_path / "split", 1.0, 1.0, 1.0),
                                         (members[2], 1.0, 1.0, 1.0)])
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(("weights", "discard", "problem"), [
    ([1.0, 0.0], None, "weights must be one positive number"),
    ([1.0, 0.0], [0.0, 0.0], "discard_weights must not all be 0"),
    ([1.0, 0.0], [1.0, 0.0], "weight 0 in every one of weights"),
    ([1.0, 1.0], [1.0], "discard_weights must be one number of 0 or more"),
    ([1.0, 1.0], [1.0, -1.0], "discard_weights must be one number of 0 or more"),
])
def test_bad_discard_weights_are_refused(weights, discard, problem):
    with pytest.raises(ValueError, match=problem):
        build_network("pool", features=True, members=[{"arch": "cards", "arch_kwargs": KWARGS}] * 2,
                      weights=weights, discard_weights=discard)


def test_a_pool_member_that_is_a_pool_brings_its_members(tmp_path, members):
    obs, masks = _decisions(seed=5)
    inner = pool_checkpoint(tmp_path / "inner", [(members[0], 1.0), (members[1], 3.0)])
    outer = pool_checkpoint(tmp_path / "outer", [(inner, 2.0), (members[2], 1.0)])
    flat = pool_checkpoint(tmp_path / "flat", [(members[0], 0.5), (members[1], 1.5),
                                               (members[2], 1.0)])
    meta = json.loads((outer / "meta.json").read_text())
    assert [m["weight"] for m in meta["pool"]] == [0.5, 1.5, 1.0]
    assert [m["name"] for m in meta["pool"]] == ["m0", "m1", "m2"]
    assert np.allclose(load_learned_agent(outer).logits_batch(obs, masks),
                       load_learned_agent(flat).logits_batch(obs, masks), atol=1e-5)


def test_a_pool_cannot_be_the_start_of_a_fit(tmp_path, members):
    """A pool's weights fit no one network: ``init_from`` and ``exit.start`` naming one are
    refused before anything is recorded or written."""
    from agents.checkpoint import CheckpointError, check_init_from
    from training.config import RunConfig
    from training.train import train

    pool = pool_checkpoint(tmp_path / "pool", [(members[0], 1.0), (members[1], 1.0)])
    with pytest.raises(CheckpointError, match=r"init_from: .* is a pool of networks"):
        check_init_from(pool, "cards", KWARGS)
    cfg = RunConfig.model_validate({
        "name": "poolstart", "algo": "exit", "policy": {"arch": "cards", **KWARGS},
        "exit": {"generations": 1, "search": "rollouts", "start": str(pool)},
        "distill": {"chunks": 1, "chunk_games": 1}, "train": {"engine": "python"}})
    with pytest.raises(CheckpointError, match=r"exit.start: .* is a pool of networks"):
        train(cfg, output_dir=tmp_path / "runs")
    assert not list((tmp_path / "runs").glob("*"))


def test_exit_pools_that_would_outgrow_the_limit_are_refused_up_front():
    from agents.networks import MAX_MEMBERS
    from training.config import ExitConfig

    assert ExitConfig(generations=5, fits=3, pool_previous=1.0)  # 16 networks in generation 5
    with pytest.raises(ValueError, match=f"pool 19 networks .* at most {MAX_MEMBERS}"):
        ExitConfig(generations=6, fits=3, pool_previous=1.0)
    assert ExitConfig(generations=50, fits=3)  # without the previous network pools stay at 3


def test_symmetric_pools_make_every_member_the_mean_over_the_suit_renamings(tmp_path, members):
    obs, masks = _decisions()
    legal = masks > 0
    with pytest.raises(SystemExit):  # one member is a pool only when made symmetric
        main([str(tmp_path / "one"), str(members[0])])
    main([str(tmp_path / "one"), str(members[0]), "--symmetric"])
    meta = json.loads((tmp_path / "one" / "meta.json").read_text())
    assert meta["arch"] == "cards" and meta["arch_kwargs"]["symmetric"] is True
    assert meta["symmetric_of"]["path"] == str(members[0])
    torch.manual_seed(0)
    by_hand = build_network("cards", **KWARGS, symmetric=True)
    by_hand.load_state_dict(load_network(members[0])[0].state_dict())
    with torch.no_grad():
        expected = by_hand(torch.from_numpy(network_input_batch(obs, masks, True))).numpy()
    got = load_learned_agent(tmp_path / "one").logits_batch(obs, masks)
    assert np.allclose(got[legal], expected[:, :52][legal], atol=1e-5)
    # a pool of pools keeps its weights; every member is made symmetric
    pair = pool_checkpoint(tmp_path / "pair", [(members[0], 1.0), (members[1], 3.0)])
    both = pool_checkpoint(tmp_path / "both", [(pair, 1.0)], symmetric=True)
    meta = json.loads((both / "meta.json").read_text())
    assert meta["arch_kwargs"]["weights"] == [0.25, 0.75]
    assert all(m["arch_kwargs"]["symmetric"] for m in meta["arch_kwargs"]["members"])
    mlp_kwargs = {"features": True, "hidden": 8, "layers": 1}
    mlp = save_checkpoint(tmp_path / "mlp", build_network("mlp", **mlp_kwargs), "mlp", mlp_kwargs,
                          {"name": "mlp"})
    with pytest.raises(ValueError, match="only 'cards' networks can be made symmetric"):
        pool_checkpoint(tmp_path / "no", [(mlp, 1.0)], symmetric=True)
    assert not (tmp_path / "no").exists()
