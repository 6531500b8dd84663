"""Suit renaming (crib_env.symmetry): a game with its suits renamed is the same game, and the
renamed decisions the distillation learns from are the decisions of that renamed game."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.card_features_kernels import card_features_batch
from agents.networks import build_network, network_input_batch
from agents.renamed import SuitRenamedAgent
from agents.standard import StandardAgent
from crib_env.cards import N_CARDS, RANK, SUIT
from crib_env.game import Game, Phase
from crib_env.observation import OBS_SIZE, SLICES, encode
from crib_env.symmetry import CARD_MAP, CARD_SOURCE, N_RENAMINGS, SUIT_ORDERS, rename_suits
from training.algos.distill import minibatch_decisions
from training.algos.distill_recording import Decisions


def test_each_renaming_keeps_ranks_and_moves_suits_one_to_one():
    assert N_RENAMINGS == 24 and len({tuple(o) for o in SUIT_ORDERS}) == 24
    assert (CARD_MAP[0] == np.arange(N_CARDS)).all()  # renaming 0 is the identity
    for p in range(N_RENAMINGS):
        assert sorted(CARD_MAP[p]) == list(range(N_CARDS))
        assert (CARD_MAP[p, CARD_SOURCE[p]] == np.arange(N_CARDS)).all()
        for card in range(N_CARDS):
            assert RANK[CARD_MAP[p, card]] == RANK[card]
            assert SUIT[CARD_MAP[p, card]] == SUIT_ORDERS[p][SUIT[card]]


def _play_pair(seed: int, renaming: int):
    """One deal played twice, the second with every card renamed, the same (renamed) choices;
    yields (game, renamed game) before each choice and once at the deal's end."""
    rng = np.random.default_rng(seed)
    cards = rng.permutation(N_CARDS)[:13]
    deal = {"hands": [cards[:6].tolist(), cards[6:12].tolist()], "starter": int(cards[12])}
    renamed = {"hands": [CARD_MAP[renaming, h].tolist() for h in deal["hands"]],
               "starter": int(CARD_MAP[renaming, deal["starter"]])}
    a = Game(seed=seed, first_dealer=seed % 2, deals=[deal], single_deal=True)
    b = Game(seed=seed, first_dealer=seed % 2, deals=[renamed], single_deal=True)
    while a.phase < Phase.DEAL_OVER:
        yield a, b
        card = int(rng.choice(a.legal_actions()))
        a.step(card)
        b.step(int(CARD_MAP[renaming, card]))
    yield a, b


@pytest.mark.parametrize("seed", range(12))
def test_a_renamed_deal_scores_the_same_and_its_observations_are_the_renamed_ones(seed):
    renaming = 1 + seed % (N_RENAMINGS - 1)
    steps = 0
    for a, b in _play_pair(seed, renaming):
        assert b.scores == a.scores and b.phase == a.phase
        masks = a.legal_mask()[None].astype(np.float32)
        for player in (0, 1):
            obs_a, obs_b = encode(a, player), encode(b, player)
            got_obs, got_mask, _, _ = rename_suits(np.array([renaming]), obs_a[None], masks,
                                                   np.array([0]))
            assert (got_obs[0] == obs_b).all()
            assert (got_mask[0] == b.legal_mask()).all()
        steps += 1
    assert steps > 8  # four discards and at least four cards laid were compared
    assert sum(a.scores) > 0  # the show scored, so flushes, nobs and runs were compared too


def test_renamed_card_features_are_the_features_of_the_renamed_cards():
    # the network's inputs are equivariant: no feature depends on which suit a card has
    rows = []
    for seed in range(6):
        for a, _ in _play_pair(seed, 0):
            if a.phase < Phase.DEAL_OVER:
                rows.append((encode(a, a.to_move), a.legal_mask()))
    obs = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows]).astype(np.float32)
    renamings = np.arange(len(rows)) % N_RENAMINGS
    new_obs, new_masks, _, _ = rename_suits(renamings, obs, masks, np.zeros(len(rows)))
    before, after = card_features_batch(obs, masks), card_features_batch(new_obs, new_masks)
    for k, p in enumerate(renamings):
        np.testing.assert_array_equal(after[k], before[k][CARD_SOURCE[p]])


def test_renaming_moves_cards_and_values_and_rejects_bad_indices():
    rng = np.random.default_rng(0)
    obs = rng.random((5, OBS_SIZE)).astype(np.float32)
    masks = (rng.random((5, N_CARDS)) < 0.3).astype(np.float32)
    values = rng.random((5, N_CARDS)).astype(np.float32)
    cards = np.array([0, 12, 13, 40, 51])
    renamings = np.array([0, 5, 11, 17, 23])
    new_obs, new_masks, new_cards, new_values = rename_suits(renamings, obs, masks, cards, values)
    for k, p in enumerate(renamings):
        assert new_cards[k] == CARD_MAP[p, cards[k]]
        assert new_values[k, new_cards[k]] == values[k, cards[k]]
        assert (new_masks[k, CARD_MAP[p]] == masks[k]).all()
    scalars = slice(SLICES["count"].start, OBS_SIZE)
    assert (new_obs[:, scalars] == obs[:, scalars]).all()
    for bad in (np.array([0, 1, 2, 3, 24]), np.array([-1, 0, 0, 0, 0]), np.array([0, 1])):
        with pytest.raises(ValueError, match="renamings"):
            rename_suits(bad, obs, masks, cards)


def test_the_fit_renames_suits_only_when_asked_and_the_same_way_on_a_resumed_fit():
    rng = np.random.default_rng(1)
    data = Decisions(codes=rng.integers(0, 2, (64, OBS_SIZE), dtype=np.uint8),
                     masks=(rng.random((64, N_CARDS)) < 0.5).astype(np.float32),
                     cards=rng.integers(0, N_CARDS, 64), margins=None)
    rows = np.arange(10, 42)
    plain = minibatch_decisions(data, rows, seed=3, step=512, renamed=False)
    assert (plain[0] == data.obs[rows]).all() and (plain[2] == data.cards[rows]).all()
    first = minibatch_decisions(data, rows, seed=3, step=512, renamed=True)
    again = minibatch_decisions(data, rows, seed=3, step=512, renamed=True)
    later = minibatch_decisions(data, rows, seed=3, step=1024, renamed=True)
    assert (first[0] == again[0]).all() and (first[2] == again[2]).all()
    assert not (first[0] == later[0]).all()
    assert (first[2] != data.cards[rows]).sum() > len(rows) // 2  # most rows were renamed
    assert first[3] is None


def _decision_rows(seeds=range(4)):
    """(observations, masks) of the decisions of a few random deals (discards and play, either
    seat)."""
    rows = [(encode(a, a.to_move), a.legal_mask()) for seed in seeds
            for a, _ in _play_pair(seed, 0) if a.phase < Phase.DEAL_OVER]
    obs = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows]).astype(np.float32)
    return obs, masks


def _outputs(net, obs, masks):
    with torch.no_grad():
        return net(torch.from_numpy(network_input_batch(obs, masks, True))).numpy()


def test_a_symmetric_network_is_the_mean_over_the_renamed_games_and_decides_the_same_in_each():
    torch.manual_seed(5)
    kwargs = {"features": True, "hidden": 16, "context": 16, "embed": 4, "attention": 1}
    plain = build_network("cards", **kwargs).eval()
    symmetric = build_network("cards", **kwargs, symmetric=True).eval()
    symmetric.load_state_dict(plain.state_dict())  # no weights of its own
    obs, masks = _decision_rows()
    legal = masks > 0
    # its outputs are the plain network's mean over the 24 renamed decisions, read back
    total = np.zeros((len(obs), N_CARDS + 1))
    for p in range(N_RENAMINGS):
        new_obs, new_masks, _, _ = rename_suits(np.full(len(obs), p), obs, masks,
                                                np.zeros(len(obs)))
        out = _outputs(plain, new_obs, new_masks)
        total[:, :N_CARDS] += out[:, :N_CARDS][:, CARD_MAP[p]]
        total[:, N_CARDS] += out[:, N_CARDS]
    mean = total / N_RENAMINGS
    got = _outputs(symmetric, obs, masks)
    np.testing.assert_allclose(got[:, :N_CARDS][legal], mean[:, :N_CARDS][legal], atol=1e-4)
    np.testing.assert_allclose(got[:, N_CARDS], mean[:, N_CARDS], atol=1e-4)
    # so every renaming of a decision gets the same logits, card for card; the plain one does not
    renamings = 1 + np.arange(len(obs)) % (N_RENAMINGS - 1)
    new_obs, new_masks, _, _ = rename_suits(renamings, obs, masks, np.zeros(len(obs)))
    moved = np.stack([CARD_MAP[p] for p in renamings])
    for net, same in ((symmetric, True), (plain, False)):
        before, after = _outputs(net, obs, masks), _outputs(net, new_obs, new_masks)
        after_by_card = np.take_along_axis(after[:, :N_CARDS], moved, axis=1)
        close = np.isclose(after_by_card[legal], before[:, :N_CARDS][legal], atol=1e-4)
        assert close.all() == same


def test_a_network_that_reads_the_suits_in_its_input_cannot_be_made_symmetric():
    with pytest.raises(ValueError, match="symmetric: the reader"):
        build_network("cards", features=True, hidden=8, context=8, embed=4, reader=True,
                      symmetric=True)
    with pytest.raises(ValueError, match="symmetric must be true or false"):
        build_network("cards", features=True, hidden=8, context=8, embed=4, symmetric=1)


def test_a_renamed_agent_lays_the_card_its_agent_lays_in_the_renamed_game():
    agent = SuitRenamedAgent(StandardAgent(seed=0))
    inner = StandardAgent(seed=0)
    differs = 0
    obs, masks = _decision_rows(range(12))
    for k in range(len(obs)):
        p = k % N_RENAMINGS
        agent.renaming = p
        card = agent.act(obs[k], masks[k])
        assert masks[k, card]
        new_obs, new_masks, _, _ = rename_suits(np.array([p]), obs[k:k + 1], masks[k:k + 1],
                                                np.zeros(1))
        assert CARD_MAP[p, card] == inner.act(new_obs[0], new_masks[0])
        differs += card != inner.act(obs[k], masks[k])
    # standard breaks ties by the card id, so under other names it lays other cards of a rank
    assert differs > 0
