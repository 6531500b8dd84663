"""The learned policy's parts: card features, networks, the opponent mixture, every shipped config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.card_features import FEATURE_NAMES, card_features, crib_table
from agents.learned import LearnedAgent
from agents.networks import OUTPUT_SIZE, build_network, input_size
from crib_env.cards import RANK, parse_cards
from crib_env.game import Game
from crib_env.observation import encode
from training.config_file import load_config
from training.selfplay import MixtureOpponent

COL = {name: i for i, name in enumerate(FEATURE_NAMES)}
ROOT = Path(__file__).resolve().parent.parent


def deal(hand0: str, hand1: str, starter: str, dealer: int = 1) -> Game:
    return Game(seed=0, first_dealer=dealer,
                deals=[{"hands": [parse_cards(hand0), parse_cards(hand1)], "starter": starter}])


def test_crib_table_values_match_the_known_ones():
    table = crib_table()
    five, ten, ace, king = 4, 9, 0, 12
    assert 8.0 < table[five, five] < 9.5  # two fives are the best crib discard
    assert table[five, ten] > table[ace, king]
    assert np.allclose(table, table.T)


def test_discard_features_mark_the_best_discard_in_hand():
    # Pone holds three fives: the best discard keeps them (5 5 5 + a ten card is 14 in hand).
    game = deal("5C 5D 5H JS KC QD", "AC 2C 3C 4C 6C 7C", "9H", dealer=1)
    assert game.to_move == 0
    f = card_features(encode(game, 0), game.legal_mask())
    best = [int(c) for c in np.flatnonzero(f[:, COL["is_best"]])]
    assert len(best) == 2 and not set(best) & set(parse_cards("5C 5D 5H"))
    for card in best:
        assert f[card, COL["total_regret"]] == 0.0
        assert f[card, COL["keep_ev"]] * 10 > 14
        assert f[card, COL["crib_ev"]] < 0  # pone gives points to the dealer's crib
    for card in parse_cards("5C 5D 5H"):
        assert f[card, COL["total_regret"]] < 0.0


def test_play_features_see_fifteen_and_the_danger_of_five():
    game = deal("TC 5D 9H 2S KC KD", "5C AD 3H 4S 6C 7C", "QH", dealer=1)
    for card in parse_cards("KC KD"):  # pone throws the kings ...
        game.step(card)
    for card in parse_cards("6C 7C"):
        game.step(card)
    game.step(parse_cards("5D")[0])  # ... and leads a 5 (count 5)
    f = card_features(encode(game, 1), game.legal_mask())
    five = parse_cards("5C")[0]
    assert f[five, COL["peg_points"]] * 4 == 2  # a pair
    ace = parse_cards("AD")[0]
    assert f[ace, COL["peg_points"]] == 0 and f[ace, COL["new_count"]] == pytest.approx(6 / 31)
    assert f[parse_cards("4S")[0], COL["is_best_peg"]] == 0.0
    assert f[five, COL["is_best_peg"]] == 1.0
    illegal = parse_cards("KS")[0]
    assert not f[illegal].any()


@pytest.mark.parametrize("arch,kwargs", [("cards", {"features": True, "hidden": 16, "context": 16,
                                                     "embed": 4}),
                                          ("cards", {"features": False, "hidden": 16}),
                                          ("mlp", {"features": False, "hidden": 32})])
def test_networks_map_an_input_row_to_logits_and_value(arch, kwargs):
    net = build_network(arch, **kwargs)
    out = net(torch.zeros(3, input_size(kwargs["features"])))
    assert out.shape == (3, OUTPUT_SIZE)
    agent = LearnedAgent(net, kwargs["features"])
    game = Game(seed=1)
    mask = game.legal_mask()
    assert mask[agent.act(encode(game, game.to_move), mask)] == 1


def test_unknown_architecture_or_argument_is_named():
    with pytest.raises(ValueError, match="unknown policy architecture 'rnn'"):
        build_network("rnn")
    with pytest.raises(ValueError, match="takes features, hidden, layers; got context"):
        build_network("mlp", context=3)
    with pytest.raises(ValueError, match="takes features, hidden, context, embed, prior, attention"):
        build_network("cards", layers=3)


class Fixed:
    def __init__(self, name: str) -> None:
        self.name = name
        self.resets = 0

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[0])

    def reset(self) -> None:
        self.resets += 1


def test_mixture_draws_members_by_weight_once_per_episode():
    a, b = Fixed("a"), Fixed("b")
    mix = MixtureOpponent([a, b], [3.0, 1.0], seed=0)
    for _ in range(4000):
        mix.reset()
    assert a.resets + b.resets == 4000
    assert 0.72 < a.resets / 4000 < 0.78
    with pytest.raises(ValueError, match="positive"):
        MixtureOpponent([a], [0.0])


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_is_valid(path):
    assert load_config(path).name == path.stem


@pytest.mark.parametrize(("arch", "kwargs"), [("cards", {"features": True}), ("mlp", {"features": False})])
def test_act_batch_chooses_what_act_chooses_row_by_row(arch, kwargs):
    torch.manual_seed(0)
    agent = LearnedAgent(build_network(arch, **kwargs), features=kwargs["features"])
    rng = np.random.default_rng(1)
    observations, masks = [], []
    game = Game(seed=5)
    while not game.is_over and len(observations) < 64:
        observations.append(encode(game, game.to_move))
        masks.append(game.legal_mask())
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    batch = agent.act_batch(np.stack(observations), np.stack(masks))
    single = [agent.act(o, m) for o, m in zip(observations, masks, strict=True)]
    assert batch.tolist() == single
    assert all(m[c] for m, c in zip(masks, batch, strict=True))


def _all_tokens_forward(net, x: torch.Tensor) -> torch.Tensor:
    """The card network computed over all 52 card tokens, unseen ones included: the reference
    for ``CardNet.forward``, which encodes only the cards the player has seen."""
    from agents.networks import SCALAR_SLICES
    from crib_env.observation import MAX_SEQUENCE, OBS_SIZE, SEEN_SETS, SLICES

    batch = x.shape[0]
    obs = x[:, :OBS_SIZE]
    sets = torch.stack([obs[:, SLICES[name]] for name in SEEN_SETS], dim=2)
    seq = obs[:, SLICES["sequence"]].reshape(batch, MAX_SEQUENCE, 52).transpose(1, 2)
    unseen = 1.0 - (sets.sum(2) + seq.sum(2)).clamp(max=1.0)
    ident = torch.cat([net.rank_embed(net.rank_id), net.suit_embed(net.suit_id),
                       net.value[:, None]], dim=1).expand(batch, -1, -1)
    parts = [sets, seq, unseen[..., None], ident]
    feats = x[:, OBS_SIZE:].reshape(batch, 52, -1) if net.features else None
    if feats is not None:
        parts.append(feats)
    tokens = net.token(torch.cat(parts, dim=2))

    def pool(weight):
        return (tokens * weight[..., None]).sum(1) / (weight.sum(1, keepdim=True) + 1.0)

    pools = [pool(sets[..., 0]), pool(seq.sum(2)), pool(sets[..., 3] + sets[..., 4]),
             pool(sets[..., 1] + sets[..., 2])]
    scalars = torch.cat([obs[:, SLICES[name]] for name in SCALAR_SLICES], dim=1)
    ctx = net.context(torch.cat([scalars, *pools], dim=1))
    logits = net.logit_out(torch.relu(net.logit_token(tokens)
                                      + net.logit_context(ctx)[:, None, :])).squeeze(2)
    if feats is not None:
        logits = logits + net.feature_logit(feats).squeeze(2)
    return torch.cat([logits, net.value_head(ctx)], dim=1)


def _random_play_rows(envs: int, seed: int, turns: int, features: bool = True,
                      rng_seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Input rows and legal masks of ``turns`` turns of ``envs`` games played at random (whole
    deals: discards, play, every count and sequence length)."""
    from agents.networks import network_input_batch
    from crib_env.vector import CribbageVectorEnv

    env = CribbageVectorEnv(envs, opponent="random")
    obs, info = env.reset(seed=seed)
    masks, rows, legal = info["action_mask"], [], []
    rng = np.random.default_rng(rng_seed)
    for _ in range(turns):
        rows.append(network_input_batch(obs, masks, features))
        legal.append(masks.astype(bool))
        obs, _, _, _, _ = env.step(np.argmax(np.where(masks > 0, rng.random(masks.shape), -1), 1))
        masks = env.action_masks()
    return torch.from_numpy(np.concatenate(rows)), torch.from_numpy(np.concatenate(legal))


@pytest.mark.parametrize("features", [True, False])
def test_card_network_over_known_cards_equals_all_52_tokens(features):
    x, legal = _random_play_rows(64, seed=11, turns=60, features=features)
    torch.manual_seed(0)
    net = build_network("cards", features=features, prior=features)
    with torch.no_grad():
        fast, reference = net(x), _all_tokens_forward(net, x)
    # legal logits agree (the prior's are in the hundreds, hence the tolerance) and so do values
    assert torch.allclose(fast[:, :52][legal], reference[:, :52][legal], rtol=1e-5, atol=1e-4)
    assert torch.allclose(fast[:, 52], reference[:, 52], rtol=1e-5, atol=1e-5)
    assert torch.equal(torch.where(legal, fast[:, :52], -torch.inf).argmax(1),
                       torch.where(legal, reference[:, :52], -torch.inf).argmax(1))
    # only cards the player has not seen carry the never-chosen logit (a row with fewer known
    # cards than the batch's most computes a few unseen ones too), and every seen card a real one
    from agents.networks import UNSEEN_LOGIT
    from crib_env.observation import decode

    for row, logits in zip(x[:200].numpy(), fast[:200, :52], strict=True):
        view = decode(row[:len(row) - (52 * 12 if features else 0)])
        unseen = torch.zeros(52, dtype=torch.bool)
        unseen[list(view.unseen)] = True
        assert not (logits == UNSEEN_LOGIT)[~unseen].any()
        assert (logits == UNSEEN_LOGIT).sum() >= 52 - 11


def test_attention_blocks_see_each_rows_known_cards_only():
    """With attention, a row's logits and value are the same alone and in a batch whose rows
    know more cards (their extra slots are padding the row must not attend to)."""
    x, _ = _random_play_rows(16, seed=3, turns=30)
    torch.manual_seed(0)
    net = build_network("cards", features=True, hidden=32, context=32, attention=2).eval()
    assert len(net.blocks) == 2
    with torch.no_grad():
        together = net(x)
        alone = torch.cat([net(x[i:i + 1]) for i in range(len(x))])
    known = alone > -1e8  # the row's own known cards and its value (a batch pads some more)
    assert torch.allclose(together[known], alone[known], rtol=1e-4, atol=1e-4)


def test_attention_config_errors():
    from training.config import PolicyConfig

    assert PolicyConfig(attention=2, hidden=64).arch_kwargs()["attention"] == 2
    assert "attention" not in PolicyConfig().arch_kwargs()  # older checkpoints' kwargs unchanged
    with pytest.raises(ValueError, match="only arch 'cards' has attention"):
        PolicyConfig(arch="mlp", attention=1)
    with pytest.raises(ValueError, match="multiple of the 4 attention heads"):
        PolicyConfig(attention=1, hidden=30)


def _inputs_of(module: torch.nn.Module, net: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What ``module`` (a layer of ``net``) is given when ``net`` reads ``x``."""
    seen = []
    handle = module.register_forward_hook(lambda _m, args, _out: seen.append(args[0]))
    with torch.no_grad():
        net(x)
    handle.remove()
    return seen[0]


def test_need_gives_the_points_to_go_as_steps_and_the_card_that_pegs_out():
    """With ``need`` the context reads each player's points to go as steps (within 1, 2, 3 ...
    points of the target) and each token whether its card pegs out now: here pone, 2 to go, can
    pair the dealer's 5 for 2 and win, while the 6 and 7 score nothing."""
    from agents.networks import network_input, points_to_go

    game = deal("TC 5D 9H 2S KC KD", "5C AD 3H 4S 6C 7C", "QH", dealer=1)
    for card in parse_cards("KC KD 6C 7C 5D"):  # both throw; pone leads the 5
        game.step(card)
    game.scores = [114, 119]  # player 1 (to play) needs 2, player 0 needs 7
    mask = game.legal_mask()
    x = torch.from_numpy(network_input(encode(game, 1), mask, True))[None]
    assert points_to_go(x).tolist() == [[2.0, 7.0]]
    net = build_network("cards", features=True, hidden=16, context=16, embed=4, need=3)
    steps = _inputs_of(net.context[0], net, x)[0, -6:]
    assert steps.tolist() == [0, 1, 1, 0, 0, 0]  # own: within 2 and 3; the opponent's 7: none
    tokens = _inputs_of(net.token[0], net, x)[0]
    pegs_out = tokens[:, -1]
    assert pegs_out.sum() == 1  # the 5 alone: 2 points for the pair, 2 to go
    game.scores = [114, 118]  # 3 to go: the pair no longer wins
    x = torch.from_numpy(network_input(encode(game, 1), mask, True))[None]
    assert _inputs_of(net.token[0], net, x)[0, :, -1].sum() == 0
    assert _inputs_of(net.context[0], net, x)[0, -6:].tolist() == [0, 0, 1, 0, 0, 0]


def test_show_gives_the_own_hand_the_crib_and_the_points_to_go_less_the_hand():
    """With ``show`` the context reads, in the play, the kept four's show with the starter, the
    dealer's expected crib by its discards' ranks and whether the hand leaves at most k to go:
    the pone keeps TC 5D 9H 2S (4 with the QH starter), the dealer 5C AD 3H 4S (7) and throws
    6C 7C."""
    from agents.networks import CRIB_SCALE, SHOW_SCALE, network_input
    from crib_env.scoring import score_hands

    game = deal("TC 5D 9H 2S KC KD", "5C AD 3H 4S 6C 7C", "QH", dealer=1)
    for card in parse_cards("KC KD 6C 7C 5D"):  # both throw; pone (player 0) leads the 5D
        game.step(card)
    game.scores = [110, 100]  # pone needs 11, the dealer 21
    net = build_network("cards", features=True, hidden=16, context=16, embed=4, need=12,
                        show=True)
    pone_hand = score_hands(np.array([parse_cards("TC 5D 9H 2S")]), np.array(parse_cards("QH")))
    dealer_hand = score_hands(np.array([parse_cards("5C AD 3H 4S")]), np.array(parse_cards("QH")))
    assert int(pone_hand[0]) == 4 and int(dealer_hand[0]) == 7  # TC-5D, QH-5D; 15s and a run

    def show_inputs(seat: int) -> list[float]:
        x = torch.from_numpy(network_input(encode(game, seat), game.legal_mask(), True))[None]
        return _inputs_of(net.context[0], net, x)[0, -15:].tolist()

    pone = show_inputs(0)
    assert pone[0] == pytest.approx(4 / SHOW_SCALE) and pone[1] == 0.0  # no crib as pone
    assert pone[2:] == [0.0] * 7 + [1.0] * 6  # 11 - 4 = 7 to go after the hand: steps 7..12
    dealer = show_inputs(1)
    six, seven = (RANK[c] for c in parse_cards("6C 7C"))
    expected_crib = crib_table()[six, seven]
    assert dealer[0] == pytest.approx(7 / SHOW_SCALE)
    assert dealer[1] == pytest.approx(expected_crib / CRIB_SCALE)
    assert dealer[2:] == [0.0] * 13  # 21 - 7 = 14 to go: beyond the 12 steps
    game.scores = [110, 114]
    assert show_inputs(1)[2:] == [1.0] * 13  # 7 to go, the hand counts 7: it counts out
    with pytest.raises(ValueError, match="give need > 0"):
        build_network("cards", features=True, hidden=16, context=16, embed=4, show=True)
    from training.config import PolicyConfig

    with pytest.raises(ValueError, match="policy.show: needs arch 'cards' and need > 0"):
        PolicyConfig(show=True)
    assert PolicyConfig(need=31, show=True).arch_kwargs()["show"] is True


def test_a_network_widened_by_show_computes_what_it_did():
    """A network with ``need`` widens into the same one with ``show`` by zero weights."""
    from agents.networks import widen_into

    x, _ = _random_play_rows(16, seed=6, turns=30, rng_seed=2)
    kwargs = {"features": True, "hidden": 16, "context": 16, "embed": 4, "attention": 1}
    torch.manual_seed(0)
    narrow = build_network("cards", **kwargs).eval()
    wide = build_network("cards", need=31, show=True, **kwargs).eval()
    widen_into(wide, narrow.state_dict())
    with torch.no_grad():
        assert torch.allclose(wide(x), narrow(x), atol=1e-5)


def test_a_network_widened_by_need_computes_what_it_did():
    """``widen_into`` puts a network's weights into the same network with ``need``: zero weights
    for the new inputs, so the same logits and value; weights that do not fit are refused by
    name."""
    from agents.networks import widen_into

    x, _ = _random_play_rows(16, seed=5, turns=30, rng_seed=1)
    kwargs = {"features": True, "hidden": 16, "context": 16, "embed": 4, "attention": 1}
    torch.manual_seed(0)
    narrow = build_network("cards", **kwargs).eval()
    wide = build_network("cards", need=31, **kwargs).eval()
    widen_into(wide, narrow.state_dict())
    with torch.no_grad():
        assert torch.allclose(wide(x), narrow(x), atol=1e-5)
    with pytest.raises(ValueError, match=r"token.0.weight: weights of shape \(16, 36\) do not "
                                         r"fit in \(16, 35\)"):
        widen_into(narrow, wide.state_dict())


def test_init_from_may_add_need_but_not_drop_it(tmp_path):
    from agents.checkpoint import CheckpointError, check_init_from, save_checkpoint
    from training.config import PolicyConfig

    kwargs = {"features": True, "hidden": 16, "context": 16, "embed": 4}
    save_checkpoint(tmp_path / "narrow", build_network("cards", **kwargs), "cards", kwargs, {})
    save_checkpoint(tmp_path / "wide", build_network("cards", need=5, **kwargs), "cards",
                    {**kwargs, "need": 5}, {})
    check_init_from(tmp_path / "narrow", "cards", {**kwargs, "need": 5})
    with pytest.raises(CheckpointError, match="policy.need, policy.reader and policy.show may be added"):
        check_init_from(tmp_path / "wide", "cards", kwargs)
    with pytest.raises(CheckpointError, match="policy.need, policy.reader and policy.show may be added"):
        check_init_from(tmp_path / "narrow", "cards", {**kwargs, "hidden": 32, "need": 5})
    assert PolicyConfig(need=31).arch_kwargs()["need"] == 31
    assert "need" not in PolicyConfig().arch_kwargs()
    with pytest.raises(ValueError, match="only arch 'cards' reads the points to go"):
        PolicyConfig(arch="mlp", need=31)
