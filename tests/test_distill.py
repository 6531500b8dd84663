"""Policy distillation (training.algos.distill, ``algo: distill``): what is recorded, that a recording
is a function of its seed and resumes, and that a run learns the teacher's choices."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from same_weights import assert_same_weights

from agents.base import RandomAgent
from agents.expert import ExpertAgent
from agents.greedy import GreedyAgent
from agents.learned import load_learned_agent
from crib_env.game import Phase
from crib_env.observation import OBS_SIZE, SCORE_SCALE, SLICES, phase_column
from training.algos.distill import teacher_targets
from training.algos.distill_recording import (
    CHUNK_GAMES,
    RecordingAgent,
    load_recording,
    record,
    record_chunk,
    rotation,
)
from training.config_file import parse_config
from training.eval_plans import game_plan
from training.eval_play import Opening, play_game
from training.train import train


def test_recording_keeps_only_decisions_with_a_choice() -> None:
    recorder = RecordingAgent(RandomAgent(seed=0))
    forced = np.zeros(52, dtype=np.int8)
    forced[7] = 1
    assert recorder.act(np.zeros(10, dtype=np.float32), forced) == 7
    assert recorder.cards == []
    data = record_chunk("standard", "greedy", seed=3, number=0)
    assert len(data["cards"]) == len(data["obs"]) == len(data["masks"]) > 20 * CHUNK_GAMES
    assert (data["masks"].sum(axis=1) > 1).all()
    assert data["masks"][np.arange(len(data["cards"])), data["cards"]].all()  # every card legal


def test_a_stopped_recording_with_workers_keeps_its_whole_chunks_and_resumes(
        tmp_path: Path) -> None:
    """A stop request during a recording with worker processes writes the chunks the workers hold,
    drops the rest, and the resumed recording's chunks are those of one recorded without a stop."""
    stopped, whole = tmp_path / "stopped", tmp_path / "whole"
    args = ("standard", ["greedy"], 8)
    missing = record(stopped, *args, seed=5, workers=2, progress=False, games=2,
                     should_stop=lambda: any(stopped.glob("chunk_*.npz")))
    written = sorted(p.name for p in stopped.glob("chunk_*.npz"))
    assert 0 < missing < 8 and len(written) == 8 - missing
    assert list(stopped.glob("*.tmp")) == []
    assert record(stopped, *args, seed=5, workers=2, progress=False, games=2) == 0
    assert record(whole, *args, seed=5, progress=False, games=2) == 0
    for name in sorted(p.name for p in whole.glob("chunk_*.npz")):
        with np.load(stopped / name) as a, np.load(whole / name) as b:
            for key in ("obs", "masks", "cards", "margins"):  # not the time it took
                assert np.array_equal(a[key], b[key], equal_nan=True), (name, key)


def test_a_chunk_is_a_function_of_seed_and_number() -> None:
    first = record_chunk("standard", "greedy", seed=3, number=1)
    again = record_chunk("standard", "greedy", seed=3, number=1)
    other = record_chunk("standard", "greedy", seed=3, number=2)
    for key in ("obs", "masks", "cards"):
        assert np.array_equal(first[key], again[key])
    assert not np.array_equal(first["cards"][:50], other["cards"][:50])


def test_rotation_gives_whole_chunks_by_weight() -> None:
    assert rotation([("standard", 2), ("greedy", 1.0)]) == ["standard", "standard", "greedy"]
    with pytest.raises(ValueError, match="not a whole number"):
        rotation([("standard", 1.5)])


def test_record_resumes_and_refuses_another_recording(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    assert record(out, "standard", ["greedy"], 2, seed=1, progress=False) == 0
    written = {p.name: p.stat().st_mtime_ns for p in out.glob("chunk_*.npz")}
    assert sorted(written) == ["chunk_00000.npz", "chunk_00001.npz"]
    assert record(out, "standard", ["greedy"], 2, seed=1, progress=False) == 0
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("chunk_*.npz")} == written
    with pytest.raises(ValueError, match="holds a recording of"):
        record(out, "standard", ["greedy"], 2, seed=2, progress=False)
    stopped = record(out, "standard", ["greedy"], 4, seed=1, progress=False,
                     should_stop=lambda: True)
    assert stopped == 2
    with pytest.raises(ValueError, match="unfinished"):
        load_recording(out, 4)


def distill_config(tmp: Path, **distill) -> dict:
    return {"name": "tinydistill", "seed": 2, "algo": "distill",
            "opponents": [{"agent": "greedy", "weight": 1}],
            "policy": {"arch": "cards", "features": True, "hidden": 32, "context": 32,
                       "embed": 8},
            "distill": {"teacher": "standard", "chunks": 11, "learning_rate": 3e-3,
                        "batch_size": 256, "recording": str(tmp / "rec"), **distill},
            "train": {"engine": "python", "total_timesteps": 30_000, "save_every": 10_000,
                      "progress_bar": False},
            "eval": {"every": 15_000, "games": 20, "opponents": ["greedy"], "at_start": True}}


def test_a_distill_run_learns_the_teachers_choices(tmp_path: Path) -> None:
    """Standard's choices (deterministic expected values) are learnable: a small network agrees
    with them on most held-out decisions, and the run's checkpoint plays them."""
    cfg = parse_config(distill_config(tmp_path))
    run = train(cfg, output_dir=tmp_path / "runs")
    train_set, held, _ = load_recording(tmp_path / "rec", 11)
    assert len(held) > 0 and len(train_set) > 8 * len(held)
    # held in memory packed (a byte an entry), unpacked to the recorded vectors exactly
    with np.load(tmp_path / "rec" / "chunk_00001.npz") as first_trained:
        recorded = first_trained["obs"]
    assert train_set.codes.dtype == np.uint8
    assert np.array_equal(train_set.observations(slice(0, len(recorded))), recorded)
    meta = json.loads((run / "latest" / "meta.json").read_text())
    assert meta["algo"] == "distill" and meta["num_timesteps"] == 30_000
    assert meta["distill"]["decisions"] == len(train_set)
    student = load_learned_agent(run / "latest")
    agree = float(np.mean(student.act_batch(held.obs, held.masks) == held.cards))
    assert agree > 0.8
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    steps = [line["step"] for line in evals]
    assert steps[0] == 0 and steps[-1] == 30_000 and 15_000 <= steps[1] < 15_000 + 256
    assert evals[-1]["results"]["greedy"]["win_rate"] > evals[0]["results"]["greedy"]["win_rate"]


def test_a_run_learns_from_earlier_recordings_too(tmp_path: Path) -> None:
    """``distill.also_from``: the decisions of earlier recordings join the run's own, held out
    with held out; a folder that holds no finished recording is refused with the config."""
    earlier = tmp_path / "earlier"
    assert record(earlier, "greedy", ["standard"], 2, seed=5, progress=False) == 0
    cfg = distill_config(tmp_path, chunks=2, also_from=[str(earlier)])
    cfg["train"].update(total_timesteps=512, save_every=512)
    cfg["eval"] = {"every": 512, "games": 2, "opponents": ["greedy"], "final_games": 0}
    run = train(parse_config(cfg), output_dir=tmp_path / "runs")
    own, own_held, _ = load_recording(tmp_path / "rec", 2)
    other, other_held, _ = load_recording(earlier, 2)
    meta = json.loads((run / "latest" / "meta.json").read_text())
    assert meta["distill"]["decisions"] == len(own) + len(other)
    assert meta["distill"]["held_out"] == len(own_held) + len(other_held) > 0
    assert meta["distill"]["also_from"] == [str(earlier)]

    (earlier / "chunk_00000.npz").unlink()  # chunk 1 without chunk 0: unfinished
    fresh = distill_config(tmp_path / "b", chunks=2, also_from=[str(earlier)])
    with pytest.raises(ValueError, match="lacks chunk 0: the recording is unfinished"):
        parse_config(fresh)
    fresh["distill"]["also_from"] = [str(tmp_path / "nowhere")]
    with pytest.raises(ValueError, match="nowhere holds no recording"):
        parse_config(fresh)


def test_departures_weigh_where_the_teacher_left_the_start_network(tmp_path: Path) -> None:
    """``distill.departure_weight``: the decisions where the teacher's card is not the start
    network's count that many times in the loss; the departures come from the start checkpoint."""
    from agents.registry import CHAMPION_PATH
    from training.algos.distill import departures, imitation_step

    assert record(tmp_path / "rec", "standard", ["greedy"], 1, seed=3, progress=False) == 0
    _, data, _ = load_recording(tmp_path / "rec", 1)  # chunk 0 is a held-out chunk
    start = load_learned_agent(CHAMPION_PATH)
    away = departures(start, data)
    assert away.shape == (len(data),) and 0 < away.sum() < len(data)
    assert (away == (start.act_batch(data.obs, data.masks) != data.cards)).all()

    torch.manual_seed(0)
    net = torch.nn.Linear(4, 52)
    inputs, masks = torch.randn(3, 4), torch.ones(3, 52, dtype=torch.int8)
    cards = torch.tensor([1, 2, 3])
    per_row = torch.nn.functional.cross_entropy(net(inputs), cards, reduction="none").detach()
    weights = torch.tensor([1.0, 4.0, 1.0])
    loss = imitation_step(net, torch.optim.SGD(net.parameters(), lr=0.0), inputs, masks, cards,
                          weights).loss
    assert loss == pytest.approx(float((weights * per_row).sum() / 6.0), rel=1e-6)
    with pytest.raises(ValueError, match="departure_weight: the departures are from the network"):
        parse_config(distill_config(tmp_path, departure_weight=4.0))
    weighted = {**distill_config(tmp_path, departure_weight=4.0), "init_from": str(CHAMPION_PATH)}
    assert parse_config(weighted).distill.departure_weight == 4.0


def test_distill_config_errors() -> None:
    base = distill_config(Path("/tmp"))
    with pytest.raises(ValueError, match="train.engine: python"):
        parse_config({**base, "train": {"engine": "fast"}})
    with pytest.raises(ValueError, match="whole weights"):
        parse_config({**base, "opponents": [{"agent": "greedy", "weight": 0.5}]})
    with pytest.raises(ValueError, match="'self' is not one"):
        parse_config({**base, "opponents": [{"agent": "self"}]})
    with pytest.raises(ValueError, match="only the expert, champion-search and rollouts teachers record"):
        parse_config({**base, "distill": {**base["distill"], "soft": 0.5}})
    with pytest.raises(ValueError, match="distill.regret: only the expert, champion-search and rollouts"):
        parse_config({**base, "distill": {**base["distill"], "regret": 1.0}})
    assert parse_config(base).distill.teacher == "standard"  # the base itself is valid


def test_the_expert_records_its_value_of_every_legal_card() -> None:
    """Outside the end game, each play with a choice keeps the expert's simulated margin of every
    legal card, and its card is within its tolerance of the best; discards keep no values."""
    expert = ExpertAgent(seed=4, sims=30, discard_sims=30)
    recorder = RecordingAgent(expert)
    play_game(recorder, GreedyAgent(seed=5), game_plan(7, 0))
    margins = np.asarray(recorder.margins)
    masks = np.asarray(recorder.masks) > 0
    valued = ~np.isnan(margins).all(axis=1)
    assert valued.sum() > 10 and (~valued).sum() > 10
    assert (~np.isnan(margins[valued]) == masks[valued]).all()  # exactly the legal cards
    discard_phase = np.asarray(recorder.obs)[:, phase_column(Phase.DISCARD)] > 0.5
    assert not valued[discard_phase].any()
    for row, card in zip(margins[valued], np.asarray(recorder.cards)[valued], strict=True):
        assert row[card] >= np.nanmax(row) - expert.tolerance - 1e-6


def test_teacher_targets_mix_the_card_with_the_values() -> None:
    cards = torch.tensor([3, 10])
    masks = torch.zeros(2, 52, dtype=torch.int8)
    masks[0, [3, 4, 5]] = 1
    masks[1, [10, 11]] = 1
    margins = torch.full((2, 52), float("nan"))
    margins[0, [3, 4, 5]] = torch.tensor([1.0, 2.0, -1.0])
    assert teacher_targets(cards, masks, margins, 0.0, 0.5) is cards  # soft 0: the cards alone
    assert teacher_targets(cards, masks, None, 0.5, 0.5) is cards
    target = teacher_targets(cards, masks, margins, 0.5, 0.5)
    assert torch.allclose(target.sum(1), torch.ones(2))
    assert target[1, 10] == 1.0  # a row without values keeps the teacher's card
    assert target[0, masks[0] == 0].abs().sum() == 0  # nothing on illegal cards
    values = torch.softmax(torch.tensor([1.0, 2.0, -1.0]) / 0.5, 0)
    assert torch.allclose(target[0, [3, 4, 5]], 0.5 * torch.tensor([1.0, 0, 0]) + 0.5 * values)
    assert target[0, 4] > target[0, 5]  # the better card by value gets more


def test_regret_costs_are_how_far_each_card_is_below_the_teachers_best() -> None:
    from training.algos.distill import regret_costs

    masks = torch.zeros(2, 52, dtype=torch.int8)
    masks[0, [3, 4, 5]] = 1
    masks[1, [10, 11]] = 1
    margins = torch.full((2, 52), float("nan"))
    margins[0, [3, 4, 5, 6]] = torch.tensor([0.50, 0.52, 0.47, 0.9])  # card 6 is not legal
    costs = regret_costs(masks, margins, 0.01)
    assert torch.allclose(costs[0, [3, 4, 5]], torch.tensor([2.0, 0.0, 5.0]))
    assert costs[0, masks[0] == 0].abs().sum() == 0  # an illegal card's value is ignored
    assert costs[1].abs().sum() == 0  # a row without values costs nothing
    assert regret_costs(masks, None, 0.01) is None
    assert regret_costs(masks, torch.full((2, 52), float("nan")), 0.01) is None


#: the legal cards of the one-row fits below (the teacher lays the first)
FIT_CARDS = [3, 4, 5]


def last_cards_probability(steps: int, **terms) -> float:
    """A linear network's probability of card 5 after ``steps`` of ``imitation_step`` on one row
    whose legal cards are ``FIT_CARDS`` and whose teacher lays card 3, with the loss's other
    ``terms``."""
    from training.algos.distill import imitation_step, legal_logits

    masks = torch.zeros(1, 52, dtype=torch.int8)
    masks[0, FIT_CARDS] = 1
    torch.manual_seed(0)
    inputs, net = torch.randn(1, 8), torch.nn.Linear(8, 52)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    for _ in range(steps):
        imitation_step(net, optimizer, inputs, masks, torch.tensor([3]), **terms)
    return torch.softmax(legal_logits(net, inputs, masks), 1)[0, 5].item()


def test_the_regret_term_moves_the_network_toward_the_cheaper_cards() -> None:
    """With the teacher's card fixed, the expected-regret term lowers the probability of the
    costliest legal card more than cross-entropy alone does."""
    from training.algos.distill import regret_costs

    masks = torch.zeros(1, 52, dtype=torch.int8)
    masks[0, FIT_CARDS] = 1
    margins = torch.full((1, 52), float("nan"))
    margins[0, FIT_CARDS] = torch.tensor([0.52, 0.51, 0.30])
    costs = regret_costs(masks, margins, 0.01)
    assert last_cards_probability(5, costs=costs, regret=1.0) < last_cards_probability(5)


def test_soft_targets_refuse_a_recording_without_values(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    rec.mkdir()
    np.savez(rec / "chunk_00000.npz", obs=np.zeros((1, 10), np.float32),
             masks=np.ones((1, 52), np.int8), cards=np.zeros(1, np.int16))
    cfg = distill_config(tmp_path, teacher="expert", soft=0.5)
    with pytest.raises(ValueError, match="without its values"):
        train(parse_config(cfg), output_dir=tmp_path / "runs")
    assert sorted(p.name for p in rec.iterdir()) == ["chunk_00000.npz"]  # nothing recorded


@pytest.mark.slow
def test_a_soft_distill_run_learns_the_experts_choices(tmp_path: Path) -> None:
    """With half the target on the expert's values, the student still learns its cards."""
    cfg = distill_config(tmp_path, teacher="expert", soft=0.5, chunks=3)
    cfg["train"]["total_timesteps"] = 20_000
    cfg["eval"] = {"every": 20_000, "games": 20, "opponents": ["greedy"], "at_start": False}
    run = train(parse_config(cfg), output_dir=tmp_path / "runs")
    train_set, held, _ = load_recording(tmp_path / "rec", 3)
    assert train_set.margins is not None and (~np.isnan(train_set.margins)).any()
    student = load_learned_agent(run / "latest")
    assert float(np.mean(student.act_batch(held.obs, held.masks) == held.cards)) > 0.7


def test_a_recording_too_large_for_memory_is_refused_before_loading(tmp_path: Path,
                                                                    monkeypatch) -> None:
    from training.algos import distill_recording

    rec = tmp_path / "rec"
    rec.mkdir()
    np.savez(rec / "chunk_00000.npz", obs=np.zeros((3, OBS_SIZE), np.float32),
             masks=np.ones((3, 52), np.int8), cards=np.zeros(3, np.int16))
    _, held, _ = distill_recording.load_recordings([(rec, 1)])  # a few decisions fit
    assert len(held) == 3 and held.margins is None
    monkeypatch.setattr(distill_recording, "available_memory", lambda: 1000)
    with pytest.raises(ValueError, match="3 decisions, about .* GiB to load"):  # before loading
        distill_recording.load_recordings([(rec, 1)])


def _points_to_go(obs: np.ndarray) -> np.ndarray:
    """The leader's points to go in each recorded observation."""
    scores = obs[:, SLICES["scores"]] * SCORE_SCALE
    return np.rint(obs[:, SLICES["target"].start] * SCORE_SCALE - scores.max(axis=1))


def test_an_opening_hands_over_at_the_first_deal_within_its_need() -> None:
    """With an opening, greedy plays both seats until a deal starts with a player within 30
    points of the target: every recorded decision is within 30 points, the first of each game
    at a deal's start (six cards in hand), and the game goes on to its end."""
    whole = record_chunk("standard", "greedy", seed=3, number=0, games=4)
    assert _points_to_go(whole["obs"]).max() > 100
    end = record_chunk("standard", "greedy", seed=3, number=0, games=4, opening=("greedy", 30))
    to_go = _points_to_go(end["obs"])
    assert to_go.max() <= 30 and 0 < len(end["cards"]) < len(whole["cards"]) / 2
    recorder = RecordingAgent(GreedyAgent())
    game = play_game(recorder, RandomAgent(seed=1), game_plan(5, 0),
                     opening=Opening(GreedyAgent(), 30))
    assert game.is_over and len(game.records) > 3  # the opening played the first deals
    first = np.asarray(recorder.obs[:1])
    assert first[0, SLICES["hand"]].sum() == 6 and _points_to_go(first)[0] <= 30
    again = record_chunk("standard", "greedy", seed=3, number=0, games=4, opening=("greedy", 30))
    assert np.array_equal(end["cards"], again["cards"])


def test_a_recording_with_an_opening_is_another_recording(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    assert record(out, "standard", ["greedy"], 1, seed=1, progress=False, games=2,
                  opening=("greedy", 20)) == 0
    spec = json.loads((out / "recording.json").read_text())
    assert spec["opening"] == {"agent": "greedy", "need": 20}
    with pytest.raises(ValueError, match="holds a recording of"):
        record(out, "standard", ["greedy"], 1, seed=1, progress=False, games=2)
    with pytest.raises(ValueError, match="holds a recording of"):
        record(out, "standard", ["greedy"], 1, seed=1, progress=False, games=2,
               opening=("greedy", 30))
    with pytest.raises(ValueError, match="the rollouts teacher records whole games"):
        record_chunk("rollouts", "greedy", seed=1, number=0, games=1, opening=("greedy", 30))


def test_a_player_lays_the_cards_and_the_teacher_labels_its_positions(tmp_path: Path) -> None:
    """DAgger (``distill.player``): the recorded positions are those of the player's own games,
    the recorded cards the teacher's choice at each of them."""
    from agents.registry import SEARCH_NETWORK_PATH
    from agents.standard import StandardAgent

    player = str(SEARCH_NETWORK_PATH)  # a network: its cards do not depend on a seed
    own = record_chunk(player, "greedy", seed=3, number=0, games=2)
    labelled = record_chunk("standard", "greedy", seed=3, number=0, games=2, player=player)
    for key in ("obs", "masks"):  # the network's games, position by position
        np.testing.assert_array_equal(labelled[key], own[key])
    standard = StandardAgent()  # stateless: its card follows from the position alone
    assert labelled["cards"].tolist() == [standard.act(o, m) for o, m in
                                          zip(labelled["obs"], labelled["masks"], strict=True)]
    assert (labelled["cards"] != own["cards"]).any()
    # a recording folder keeps to its player
    assert record(tmp_path / "rec", "standard", ["greedy"], 1, seed=3, progress=False, games=1,
                  player=player) == 0
    assert json.loads((tmp_path / "rec" / "recording.json").read_text())["player"] == player
    with pytest.raises(ValueError, match="holds a recording of"):
        record(tmp_path / "rec", "standard", ["greedy"], 1, seed=3, progress=False, games=1)
    with pytest.raises(ValueError, match="distill.player: the rollouts teacher"):
        record_chunk("rollouts", "greedy", seed=1, number=0, games=1, player=player)


@pytest.mark.parametrize("field, refusal", [
    ("opening", "the rollouts teacher records whole"),
    ("player", "the rollouts teacher's network plays"),
])
def test_a_bad_opening_or_player_is_refused_before_anything_is_recorded(
        tmp_path: Path, field: str, refusal: str) -> None:
    """Both name an agent beside the teacher: one that does not load, or any with the rollouts
    teacher, is refused before a chunk or a run folder is written."""
    base = distill_config(tmp_path)
    bad = parse_config({**base, "distill": {**base["distill"], field: "nosuchagent"}})
    with pytest.raises(ValueError, match=f"distill.{field}: .*nosuchagent"):
        train(bad, output_dir=tmp_path / "runs")
    rollouts = parse_config({**base, "distill": {**base["distill"], field: "greedy",
                                                "teacher": "rollouts"}})
    with pytest.raises(ValueError, match=f"distill.{field}: {refusal}"):
        train(rollouts, output_dir=tmp_path / "runs")
    assert not (tmp_path / "rec").exists() and not list((tmp_path / "runs").glob("*"))


def test_an_opening_need_below_one_is_refused(tmp_path: Path) -> None:
    base = distill_config(tmp_path)
    with pytest.raises(ValueError, match="opening_need"):
        parse_config({**base, "distill": {**base["distill"], "opening": "greedy",
                                          "opening_need": 0}})


def test_the_anchor_term_is_the_kl_divergence_from_the_anchor() -> None:
    """``anchor_divergences``: 0 where the network's legal logits equal the anchor's up to a
    shift, else the KL divergence summed over the legal cards alone; the step adds it, weighted."""
    from training.algos.distill import anchor_divergences, imitation_step, legal_logits

    masks = torch.zeros(2, 52, dtype=torch.int8)
    masks[:, FIT_CARDS] = 1
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 52)
    inputs = torch.randn(2, 8)
    logits = legal_logits(net, inputs, masks).detach()
    assert anchor_divergences(logits, logits + 2.0).tolist() == pytest.approx([0.0, 0.0], abs=1e-6)
    anchor = legal_logits(torch.nn.Linear(8, 52), inputs, masks).detach()
    p, q = (torch.softmax(x[:, FIT_CARDS], 1) for x in (anchor, logits))
    by_hand = (p * (p.log() - q.log())).sum(1)
    assert anchor_divergences(logits, anchor) == pytest.approx(by_hand, rel=1e-5)
    assert (by_hand > 0).all()
    cards = torch.tensor([3, 4])
    plain = torch.nn.functional.cross_entropy(logits, cards)
    frozen = torch.optim.SGD(net.parameters(), lr=0.0)
    step = imitation_step(net, frozen, inputs, masks, cards, anchor_logits=anchor, anchor=2.5)
    assert step.loss == pytest.approx(float(plain + 2.5 * by_hand.mean()), rel=1e-5)
    assert step.anchor_kl == pytest.approx(float(by_hand.mean()), rel=1e-5)
    q_all = torch.softmax(logits[:, FIT_CARDS], 1)
    assert step.entropy == pytest.approx(float(-(q_all * q_all.log()).sum(1).mean()), rel=1e-5)


def test_held_out_measures_are_the_same_taken_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The held-out logits are taken in blocks (a wide network's activations over a whole held-out
    set do not fit in memory), the same as in one pass with a last block shorter than the others;
    ``held_out_measures`` gives from them the mean loss, the share agreed, the entropy and, against
    a start network's logits, the KL divergence from it and the share of cards changed."""
    from training.algos import distill

    torch.manual_seed(1)
    net, start = torch.nn.Linear(8, 52), torch.nn.Linear(8, 52)
    inputs = torch.randn(23, 8)
    masks = torch.zeros(23, 52, dtype=torch.int8)
    masks[:, FIT_CARDS] = 1
    cards = torch.tensor(FIT_CARDS)[torch.randint(0, len(FIT_CARDS), (23,))]
    logits, before = (distill.legal_logits(n, inputs, masks).detach() for n in (net, start))
    q, p = (torch.softmax(x[:, FIT_CARDS], 1) for x in (logits, before))
    whole = {"loss": float(torch.nn.functional.cross_entropy(logits, cards)),
             "agreement": float((logits.argmax(1) == cards).float().mean()),
             "entropy": float(-(q * q.log()).sum(1).mean()),
             "kl_from_start": float((p * (p.log() - q.log())).sum(1).mean()),
             "changed": float((logits.argmax(1) != before.argmax(1)).float().mean())}
    monkeypatch.setattr(distill, "AGREEMENT_BLOCK", 5)
    in_blocks, before_in_blocks = (distill.legal_logits_in_blocks(n, inputs, masks)
                                   for n in (net, start))
    assert torch.allclose(in_blocks, logits) and torch.allclose(before_in_blocks, before)
    blocked = distill.held_out_measures(in_blocks, cards, before_in_blocks)
    assert blocked == pytest.approx(whole, rel=1e-5)
    assert 0.0 < blocked["agreement"] < 1.0 and 0.0 < blocked["changed"] < 1.0
    assert blocked["kl_from_start"] > 0.0
    alone = distill.held_out_measures(in_blocks, cards)
    assert set(alone) == {"loss", "agreement", "entropy"}
    assert distill.held_out_measures(in_blocks, cards, in_blocks)["kl_from_start"] == \
        pytest.approx(0.0, abs=1e-6)


def test_the_anchor_holds_the_fit_near_the_anchors_cards() -> None:
    """With the teacher's card fixed, an anchor that prefers another card keeps more of that
    card's probability than cross-entropy alone does."""
    anchor = torch.full((1, 52), -1e9)
    anchor[0, FIT_CARDS] = torch.tensor([0.0, 0.0, 3.0])
    held = last_cards_probability(20, anchor_logits=anchor, anchor=1.0)
    assert held > last_cards_probability(20) + 0.05


def test_an_anchored_run_fits_toward_its_anchor(tmp_path: Path) -> None:
    """``distill.anchor``: a fit of greedy's cards held near the champion agrees with the
    champion on more held-out decisions than the same fit without it."""
    from agents.registry import CHAMPION_PATH

    assert record(tmp_path / "rec", "greedy", ["standard"], 4, seed=7, progress=False) == 0
    _, held, _ = load_recording(tmp_path / "rec", 4)
    champion = load_learned_agent(CHAMPION_PATH).act_batch(held.obs, held.masks)
    agreement = []
    for name, extra in (("plain", {}), ("anchored", {"anchor": "champion", "anchor_weight": 4.0})):
        cfg = distill_config(tmp_path, teacher="greedy", chunks=4, **extra)
        cfg["opponents"] = [{"agent": "standard", "weight": 1}]
        cfg["seed"] = 7
        cfg["train"].update(total_timesteps=12_000, save_every=12_000)
        cfg["eval"] = {"every": 12_000, "games": 2, "opponents": ["greedy"], "final_games": 0}
        run = train(parse_config({**cfg, "name": name}), output_dir=tmp_path / "runs")
        student = load_learned_agent(run / "latest").act_batch(held.obs, held.masks)
        agreement.append(float(np.mean(student == champion)))
    assert agreement[1] > agreement[0] + 0.03


def test_a_fit_logs_how_sure_it_is_and_how_far_it_moved(tmp_path: Path) -> None:
    """A distill run's log: the entropy of its softmax over the legal cards, the divergence from
    its anchor, and on the held-out decisions how far it has moved from the network it started
    from (``init_from``): nothing at step 0, something once it has fitted a teacher that plays
    otherwise."""
    from tests.test_training import tb_scalars

    def tiny(name: str, teacher: str, **extra) -> dict:
        cfg = distill_config(tmp_path, teacher=teacher, chunks=4,
                             recording=str(tmp_path / f"rec_{teacher}"))
        cfg["train"].update(total_timesteps=6_000, save_every=6_000)
        cfg["eval"] = {"every": 6_000, "games": 2, "opponents": ["greedy"], "at_start": True,
                       "final_games": 0}
        return {**cfg, "name": name, **extra}

    start = train(parse_config(tiny("start", "standard")), output_dir=tmp_path / "runs")
    cfg = tiny("moved", "greedy", init_from=str(start / "latest"))
    cfg["distill"].update(anchor="champion", anchor_weight=1.0)
    scalars = tb_scalars(train(parse_config(cfg), output_dir=tmp_path / "runs"))
    moved = dict(scalars["train/held_out_kl_from_start"])
    changed = dict(scalars["train/held_out_changed"])
    assert moved[0] == pytest.approx(0.0, abs=1e-6) and changed[0] == 0.0
    assert moved[6_000] > 0.01 and 0.0 < changed[6_000] < 1.0
    assert all(v > 0.0 for _, v in scalars["train/entropy"] + scalars["train/anchor_kl"])
    assert all(v > 0.0 for _, v in scalars["train/held_out_entropy"])
    assert "train/held_out_kl_from_start" not in tb_scalars(start)


def test_a_bad_anchor_is_refused_before_anything_is_recorded(tmp_path: Path) -> None:
    base = distill_config(tmp_path)
    with_anchor = {**base, "distill": {**base["distill"], "anchor": "champion"}}
    with pytest.raises(ValueError, match="distill.anchor and distill.anchor_weight: set both"):
        parse_config(with_anchor)
    with pytest.raises(ValueError, match="distill.anchor and distill.anchor_weight: set both"):
        parse_config({**base, "distill": {**base["distill"], "anchor_weight": 1.0}})
    missing = parse_config({**base, "distill": {**base["distill"], "anchor": str(tmp_path / "x"),
                                                "anchor_weight": 1.0}})
    with pytest.raises(ValueError, match="distill.anchor: .*x"):
        train(missing, output_dir=tmp_path / "runs")
    plain_rows = {**base, "policy": {**base["policy"], "features": False},
                  "distill": {**base["distill"], "anchor": "champion", "anchor_weight": 1.0}}
    with pytest.raises(ValueError, match="distill.anchor: .* features: True, the fitted policy "
                                         "with features: False"):
        train(parse_config(plain_rows), output_dir=tmp_path / "runs")
    assert not (tmp_path / "rec").exists() and not list((tmp_path / "runs").glob("*"))


def test_a_seed_fixes_a_fit_on_two_torch_threads(tmp_path: Path) -> None:
    """The shipped configs fit on two threads, where the card network's embedding and indexing
    backward would add in the order the threads finish: the same recording and seed must give
    the same weights."""
    cfg = distill_config(tmp_path, chunks=4)
    cfg["train"].update(total_timesteps=6_000, save_every=6_000, torch_threads=2)
    cfg["eval"] = {"every": 6_000, "games": 2, "opponents": ["greedy"], "final_games": 0}
    assert_same_weights(*(train(parse_config(cfg), output_dir=tmp_path / name)
                          for name in ("a", "b")))
