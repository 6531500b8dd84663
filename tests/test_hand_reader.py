"""The hand reader: its recording keeps the opponent's real held cards beside the seat's own
observation, it is fitted and saved, and a policy network reading it starts as the network it
was widened from."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.networks import build_network, network_input_batch, widen_into, with_reader
from agents.reader import (
    HandReader,
    load_reader_state,
    log_loss,
    uniform_probabilities,
    unseen_cards,
)
from crib_env.cards import VALUE
from crib_env.game import Phase
from crib_env.observation import COUNT_SCALE, SEEN_SETS, SLICES, phase_column
from training.hand_reader import main as hand_reader_main
from training.hand_reader import record_chunk


@pytest.fixture(scope="module")
def chunk():
    return record_chunk("random", "greedy", seed=3, number=0, games=6)


def test_the_recording_keeps_the_opponents_real_held_cards(chunk):
    obs, held = chunk["obs"], chunk["held"]
    assert len(obs) == len(held) > 50
    seen = sum(obs[:, SLICES[name]] for name in SEEN_SETS)
    assert not (held * seen).any()  # never a card the seat has seen
    opp_left = np.round(obs[:, SLICES["opp_cards_left"]][:, 0] * 6)
    assert (held.sum(axis=1) == opp_left).all() and (opp_left >= 1).all()
    assert (obs[:, phase_column(Phase.PLAY)] == 1).all()  # the play only
    again = record_chunk("random", "greedy", seed=3, number=0, games=6)
    assert np.array_equal(again["held"], held) and np.array_equal(again["obs"], obs)


def test_the_recording_keeps_the_seats_legal_cards(chunk):
    obs, masks = chunk["obs"], chunk["masks"].astype(bool)
    hand = obs[:, SLICES["hand"]] > 0.5
    assert masks.shape == hand.shape and masks.any(axis=1).all()
    assert not (masks & ~hand).any()  # only cards the seat holds
    # a held card is legal exactly when it keeps the count at 31 or under
    count = np.round(obs[:, SLICES["count"]][:, 0] * COUNT_SCALE)
    fits = np.array(VALUE)[None, :] <= (31 - count)[:, None]
    assert np.array_equal(masks, hand & fits)


def test_probabilities_cover_only_unseen_cards_and_uniform_is_the_ratio(chunk):
    obs = torch.from_numpy(chunk["obs"])
    unseen = unseen_cards(obs)
    probs = HandReader()(obs).sigmoid()
    assert (HandReader().probabilities(obs)[unseen == 0] == 0).all()
    uniform = uniform_probabilities(obs)
    opp_left = torch.round(obs[:, SLICES["opp_cards_left"].start] * 6)
    assert torch.allclose(uniform.sum(1), opp_left)
    assert probs.shape == uniform.shape == (len(obs), 52)
    held = torch.from_numpy(chunk["held"]).float()
    assert 0 < float(log_loss(uniform, held, unseen)) < 1


def test_a_fitted_reader_beats_the_uniform_one_and_loads(tmp_path):
    """A reader fitted on greedy's hands (it keeps its best four and lays its best card) reads
    them better than the uniform reader on held-out chunks (it starts as the uniform reader:
    a fit that learned nothing, or the wrong cards, would not); the folder loads, and a folder
    without a reader is refused by name."""
    recording = tmp_path / "recording"
    assert hand_reader_main(["record", str(recording), "--agent", "random", "--opponent", "greedy",
                             "--chunks", "0:11", "--games", "40", "--seed", "5"]) == 0
    assert hand_reader_main(["fit", str(recording), str(tmp_path / "reader"),
                             "--epochs", "4"]) == 0
    meta = json.loads((tmp_path / "reader" / "meta.json").read_text())
    scores = meta["held_out"]
    assert scores["reader"]["log_loss"] < scores["uniform"]["log_loss"]
    state = load_reader_state(tmp_path / "reader")
    HandReader().load_state_dict(state)
    with pytest.raises(ValueError, match="not a hand reader"):
        load_reader_state(tmp_path / "recording")
    with pytest.raises(SystemExit, match="not empty"):
        hand_reader_main(["fit", str(recording), str(tmp_path / "reader")])
    with pytest.raises(SystemExit, match="was recorded with"):
        hand_reader_main(["record", str(recording), "--agent", "greedy", "--chunks", "0:1"])
    with pytest.raises(ValueError, match="nobody"):
        hand_reader_main(["record", str(tmp_path / "other"), "--agent", "nobody"])
    assert not (tmp_path / "other").exists()


def test_a_network_widened_by_a_reader_computes_what_it_did(chunk):
    """``reader`` adds the expected ranks of the opponent's hand to the context: zero weights for
    them after ``widen_into``, so the same logits; the reader's weights are frozen."""
    kwargs = {"features": True, "hidden": 16, "context": 16, "embed": 4, "attention": 1}
    torch.manual_seed(0)
    narrow = build_network("cards", **kwargs).eval()
    wide = build_network("cards", reader=True, **kwargs).eval()
    reader = HandReader().state_dict()
    widen_into(wide, with_reader(narrow.state_dict(), reader))
    masks = np.zeros((len(chunk["obs"]), 52), dtype=np.int8)
    masks[:, :] = (chunk["obs"][:, SLICES["hand"]] > 0.5)
    x = torch.from_numpy(network_input_batch(chunk["obs"], masks, True))
    with torch.no_grad():
        assert torch.allclose(wide(x), narrow(x), atol=1e-5)
    assert not any(p.requires_grad for p in wide.reader.parameters())
    assert all(torch.equal(wide.reader.state_dict()[k], v) for k, v in reader.items())
    assert wide.context[0].in_features == narrow.context[0].in_features + 13


def test_a_config_names_a_reader_that_must_be_one(tmp_path):
    from training.config import PolicyConfig

    with pytest.raises(ValueError, match="not a hand reader"):
        PolicyConfig(attention=1, hidden=16, reader=str(tmp_path))
    with pytest.raises(ValueError, match="only arch 'cards' reads a hand reader"):
        PolicyConfig(arch="mlp", reader=str(tmp_path))


def test_each_legal_card_is_told_the_opponents_expected_answers(chunk):
    """``CardNet(reader=True)`` tells each legal card of the play how many of the opponent's cards
    (by the reader's chances) pair it, make fifteen after it and make 31 after it: the same sums
    as counting the unseen cards one by one by the rules."""
    from crib_env.cards import RANK, VALUE
    from crib_env.rules import COUNT_LIMIT, FIFTEEN_COUNT, card_fits

    torch.manual_seed(1)
    net = build_network("cards", features=True, hidden=16, context=16, embed=4, reader=True)
    with torch.no_grad():
        for p in net.reader.parameters():
            p.normal_(0, 0.05)  # a reader that is not the uniform one
    obs = chunk["obs"]
    count = np.round(obs[:, SLICES["count"]][:, 0] * COUNT_LIMIT).astype(int)
    masks = np.zeros((len(obs), 52), dtype=np.int8)
    for i in range(len(obs)):
        hand = np.flatnonzero(obs[i, SLICES["hand"]])
        legal = [c for c in hand if card_fits(int(c), int(count[i]))]
        masks[i, legal or hand[:1]] = 1
    x = torch.from_numpy(network_input_batch(obs, masks, True))
    seen = {}
    read = net._read_replies

    def spy(obs, feats, slot, by_rank, by_value):
        seen["slot"], seen["replies"] = slot, read(obs, feats, slot, by_rank, by_value)
        return seen["replies"]

    net._read_replies = spy
    with torch.no_grad():
        net(x)
    slot, replies = seen["slot"], seen["replies"]
    probs = net.reader.probabilities(torch.from_numpy(obs)).detach().numpy()
    checked = 0
    for i in range(len(obs)):
        for k, c in enumerate(slot[i].tolist()):
            if not masks[i, c] or not card_fits(c, int(count[i])):
                assert replies[i, k].abs().sum() == 0
                continue
            after = count[i] + VALUE[c]
            expect = np.zeros(3)
            if after < COUNT_LIMIT:
                for u in np.flatnonzero(probs[i]):
                    expect += probs[i, u] * np.array([
                        RANK[u] == RANK[c] and after + VALUE[u] <= COUNT_LIMIT,
                        after + VALUE[u] == FIFTEEN_COUNT, after + VALUE[u] == COUNT_LIMIT])
            assert np.allclose(replies[i, k].numpy(), expect, atol=1e-5), (i, c)
            checked += 1
    assert checked > 100
