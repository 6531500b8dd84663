"""champion-search: settings, the exact play solver, sampled values, and that it reads only its
own observation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.endgame import win_table
from agents.registry import make_agent
from agents.search import SearchSettings
from agents.search.sampling import solved_values
from agents.search.solve import new_stack, solve, solve_after
from crib_env import fast
from crib_env.cards import RANK, parse_cards
from crib_env.game import Game, Phase
from crib_env.observation import decode, encode

WINS = win_table(121)


def _python_value(game: Game, player: int) -> float:
    """Minimax over ``Game`` clones with the solver's end values: the reference."""
    if game.is_over:
        return 1.0 if game.winner == player else 0.0
    if game.phase == Phase.DEAL_OVER:
        deals_next = game.dealer != player
        return float(WINS[min(game.scores[player], 120), min(game.scores[1 - player], 120),
                          int(deals_next)])
    values = []
    for card in game.legal_actions():
        child = game.clone()
        child.step(card)
        values.append(_python_value(child, player))
    return max(values) if game.to_move == player else min(values)


def _play_position(seed: int, cards_played: int) -> Game:
    """A single-deal game in the play with ``cards_played`` cards already laid at random."""
    rng = np.random.default_rng(seed)
    game = Game(seed=seed, single_deal=True, first_dealer=int(rng.integers(2)))
    game.scores = [int(rng.integers(60, 118)), int(rng.integers(60, 118))]
    while game.phase == Phase.DISCARD:
        game.step(int(rng.choice(game.legal_actions())))
    for _ in range(cards_played):
        game.step(int(rng.choice(game.legal_actions())))
    return game


def _loaded_play_position(seed: int, cards_played: int) -> tuple[Game, np.ndarray]:
    """``_play_position`` and its row on ``crib_env.fast`` (the test skipped if the deal ended)."""
    game = _play_position(seed, cards_played)
    if game.phase != Phase.PLAY:
        pytest.skip("the deal ended early")
    S = fast.new_state(1)
    fast.load_game(S, 0, game)
    return game, S


@pytest.mark.parametrize("seed", range(6))
def test_solver_matches_minimax_over_the_rules_engine(seed):
    game, S = _loaded_play_position(seed, cards_played=3)
    player = game.to_move
    row = S[0].copy()
    if player == 1:  # the solver values player 0: swap seats
        for name in ("HAND", "DISC", "PLAYED", "NDISC", "NHAND", "SCORE", "PREV", "SAID_GO",
                     "DEALT", "PEG", "HAND_PTS"):
            col = fast.COLUMNS[name]
            row[col], row[col + 1] = row[col + 1], row[col]
        for name in ("TO_MOVE", "DEALER"):
            row[fast.COLUMNS[name]] = 1 - row[fast.COLUMNS[name]]
        if row[fast.LAST_PLAYER] >= 0:
            row[fast.LAST_PLAYER] = 1 - row[fast.LAST_PLAYER]
    stack = new_stack()
    for card in game.legal_actions():
        child = game.clone()
        child.step(card)
        assert solve_after(row, card, WINS, stack) == pytest.approx(_python_value(child, player))


def test_values_of_all_samples_together_equal_one_sample_at_a_time():
    game = _play_position(3, cards_played=1)
    position, candidates, kept, discards, n_laid = _sampled_deals(game, 8, 0)
    together = solved_values(position, candidates, kept, discards, n_laid, WINS)
    for s in range(8):
        alone = solved_values(position, candidates, kept[s:s + 1], discards[s:s + 1], n_laid, WINS)
        np.testing.assert_array_equal(alone[:, 0], together[:, s])


def _sampled_deals(game: Game, n: int, seed: int):
    """The player's position and ``n`` random draws of the opponent's cards consistent with it."""
    from agents.rollout import play_position

    view = decode(encode(game, game.to_move))
    rng = np.random.default_rng(seed)
    n_laid = len(view.played_opp)
    kept = np.zeros((n, 4), dtype=np.int64)
    discards = np.zeros((n, 2), dtype=np.int64)
    for s in range(n):
        pick = rng.choice(list(view.unseen), size=4 - n_laid + 2, replace=False)
        kept[s] = list(view.played_opp) + list(pick[:4 - n_laid])
        discards[s] = pick[4 - n_laid:]
    candidates = np.array(game.legal_actions(), dtype=np.int64)
    return play_position(view), candidates, kept, discards, n_laid


@pytest.mark.parametrize("cards, prune, own", [(1, 0.0, False), (3, 0.0, False), (3, 0.3, False),
                                               (5, 0.0, False), (3, 0.0, True), (7, 0.0, True),
                                               (7, 0.3, True)])
def test_answers_taken_as_the_solve_would_take_them_give_the_solved_values(cards, prune, own):
    from agents.search.reply import after_candidates, answered_values

    game = _play_position(3, cards_played=1)
    position, candidates, kept, discards, n_laid = _sampled_deals(game, 12, 1)
    rows = after_candidates(position, candidates, kept, discards, n_laid)
    stack = new_stack()
    calls = []
    seats = set()

    def as_the_solve(at, obs, masks):  # each seat's best card, as the solve takes it
        calls.append(len(at))
        probs = np.zeros(masks.shape)
        for r in range(len(at)):
            seat = int(at[r, fast.TO_MOVE])
            seats.add(seat)
            legal = np.flatnonzero(masks[r])
            assert len(legal) >= 2 and obs[r].sum() > 0
            assert set(legal) <= set(int(c) for c in fast.cards_of(int(at[r, fast.HAND + seat])))
            values = [solve_after(at[r], int(c), WINS, stack) for c in legal]
            pick = np.argmax(values) if seat == 0 else np.argmin(values)
            probs[r, legal[int(pick)]] = 1.0
        return probs

    def uniform(at, obs, masks):
        calls.append(len(at))
        return masks / masks.sum(axis=1, keepdims=True)

    solved = solved_values(position, candidates, kept, discards, n_laid, WINS)
    answered = answered_values(rows, cards, WINS, as_the_solve, prune, own).reshape(solved.shape)
    np.testing.assert_allclose(answered, solved)
    assert calls[0] >= 6  # one forward pass per depth with a choice in it
    assert len(calls) == 1 if cards == 1 else len(calls) >= 2
    assert seats == ({0, 1} if own else {1})  # the player's cards go to the network only with own
    if own:
        return
    calls.clear()
    weaker = answered_values(rows, cards, WINS, uniform, prune).reshape(solved.shape)
    assert (weaker >= solved - 1e-12).all() and (weaker > solved + 1e-6).any()


def _legal_cards(row: np.ndarray) -> list[int]:
    """The cards the player to move in ``row`` (1, N_FIELDS) may lay, ascending."""
    return fast.cards_of(fast.legal_bits(row, 0))


def _lowest_card_for_the_opponent(at, obs, masks):
    """A deterministic opponent: its lowest legal card."""
    probs = np.zeros(masks.shape)
    probs[np.arange(len(at)), masks.argmax(axis=1)] = 1.0
    return probs


@pytest.mark.parametrize("seed", range(4))
def test_information_set_choices_are_one_card_per_set_of_plays(seed):
    """``reply=3`` with weights: the player's second card is one card for all sampled deals in
    which the same cards were laid, the one whose weighted values sum highest (checked against a
    direct enumeration), never above the per-deal best."""
    from agents.search.reply import after_candidates, answered_values

    game = _play_position(seed, cards_played=0)  # the pone leads: no go in the first 3 cards
    position, candidates, kept, discards, n_laid = _sampled_deals(game, 12, seed)
    n_c, n_s = candidates.size, kept.shape[0]
    weights = np.random.default_rng(seed).uniform(0.1, 1.0, n_s)
    rows = after_candidates(position, candidates, kept, discards, n_laid)
    per_set = answered_values(rows, 3, WINS, _lowest_card_for_the_opponent,
                              groups=np.repeat(np.arange(n_c), n_s),
                              weights=np.tile(weights, n_c)).reshape(n_c, n_s)
    fused = answered_values(rows, 3, WINS, _lowest_card_for_the_opponent).reshape(n_c, n_s)
    assert (per_set <= fused + 1e-12).all() and (per_set < fused - 1e-9).any()

    expected = np.zeros((n_c, n_s))
    for c in range(n_c):
        sets: dict[int, list[tuple[int, dict[int, float]]]] = {}
        for s in range(n_s):
            row = rows[c * n_s + s: c * n_s + s + 1].copy()
            answer = _legal_cards(row)[0]
            fast.apply_action(row, 0, answer)  # the opponent's lowest card
            assert row[0, fast.TO_MOVE] == 0
            after = {}
            for card in _legal_cards(row):
                child = row.copy()
                fast.apply_action(child, 0, int(card))
                after[int(card)] = answered_values(
                    child, 1, WINS, _lowest_card_for_the_opponent)[0]
            sets.setdefault(RANK[answer], []).append((s, after))
        for members in sets.values():
            cards = members[0][1].keys()
            best = max(cards, key=lambda k: sum(weights[s] * after[k] for s, after in members))
            for s, after in members:
                expected[c, s] = after[best]
    np.testing.assert_allclose(per_set, expected, atol=1e-12)


def _legal_ranks(row: np.ndarray) -> dict[int, int]:
    """The first legal card of each rank the player to move in ``row`` (1, N_FIELDS) can lay."""
    return {RANK[c]: c for c in reversed(_legal_cards(row))}


def _per_set_by_enumeration(members, left, weights):
    """The values of ``members`` ((sampled deal, row) pairs that share every public play so far)
    when the opponent lays its lowest card and the player chooses one rank for the whole set,
    the deeper sets chosen first; ``left`` cards of the horizon, then the exact solve (as is a
    player's last card of the horizon)."""
    values = {}
    opponent, player = {}, {}
    for s, row in members:
        mover = int(row[0, fast.TO_MOVE])
        if (row[0, fast.PHASE] >= fast.P_DEAL_OVER or left <= 0
                or (mover == 0 and left == 1)):
            values[s] = _solved_value(row)
        elif mover == 1:
            child = row.copy()
            card = _legal_cards(row)[0]
            fast.apply_action(child, 0, card)
            opponent.setdefault(RANK[card], []).append((s, child))
        else:
            player.setdefault(tuple(sorted(_legal_ranks(row))), []).append((s, row))
    for group in opponent.values():
        values.update(_per_set_by_enumeration(group, left - 1, weights))
    for group in player.values():
        best_total, best = -np.inf, {}
        ranks = [_legal_ranks(row) for _, row in group]
        for rank in sorted(ranks[0]):
            children = []
            for (s, row), card in zip(group, ranks, strict=True):
                child = row.copy()
                fast.apply_action(child, 0, card[rank])
                children.append((s, child))
            after = _per_set_by_enumeration(children, left - 1, weights)
            total = sum(weights[s] * after[s] for s, _ in group)
            if total > best_total:
                best_total, best = total, after
        values.update(best)
    return values


def _solved_value(row: np.ndarray) -> float:
    """Player 0's chance to win from ``row`` with the rest of the play solved exactly."""
    stack = new_stack()
    stack[0, :] = row[0]
    return float(solve(stack, WINS))


@pytest.mark.parametrize("seed, cards, deals", [(6, 5, 10), (1, 7, 100), (7, 7, 100)])
def test_deeper_information_sets_match_a_direct_enumeration(seed, cards, deals):
    """``reply`` of 5 and 7 with weights: every one of the player's cards in the horizon, after
    answers and gos, is one rank per set of public plays, the deeper sets chosen first (with 100
    sampled deals the sets beyond the player's second card hold several deals)."""
    from agents.search.reply import after_candidates, answered_values

    game = _play_position(seed, cards_played=0)
    position, candidates, kept, discards, n_laid = _sampled_deals(game, deals, seed)
    n_c, n_s = candidates.size, kept.shape[0]
    weights = np.random.default_rng(seed).uniform(0.1, 1.0, n_s)
    rows = after_candidates(position, candidates, kept, discards, n_laid)
    per_set = answered_values(rows, cards, WINS, _lowest_card_for_the_opponent,
                              groups=np.repeat(np.arange(n_c), n_s),
                              weights=np.tile(weights, n_c)).reshape(n_c, n_s)
    expected = np.zeros((n_c, n_s))
    for c in range(n_c):
        members = [(s, rows[c * n_s + s: c * n_s + s + 1].copy()) for s in range(n_s)]
        for s, value in _per_set_by_enumeration(members, cards, weights).items():
            expected[c, s] = value
    np.testing.assert_allclose(per_set, expected, atol=1e-12)
    fused = answered_values(rows, cards, WINS, _lowest_card_for_the_opponent).reshape(n_c, n_s)
    assert (per_set <= fused + 1e-12).all() and (per_set < fused - 1e-9).any()


def test_rollouts_of_all_rows_together_equal_one_row_at_a_time():
    """The network in both seats to the end of the play (``reply=7`` with ``own``): stepping every
    candidate and sampled deal together gives each row the value it gets alone."""
    from agents.search.reply import after_candidates, answered_values

    game = _play_position(5, cards_played=1)
    position, candidates, kept, discards, n_laid = _sampled_deals(game, 10, 2)
    rows = after_candidates(position, candidates, kept, discards, n_laid)
    passes = []

    def lowest_card_or_uniform(at, obs, masks):  # the player lays its lowest card
        passes.append(len(at))
        probs = masks / masks.sum(axis=1, keepdims=True)
        player = np.flatnonzero(at[:, fast.TO_MOVE] == 0)
        probs[player] = 0.0
        probs[player, masks[player].argmax(axis=1)] = 1.0
        return probs

    together = answered_values(rows, 7, WINS, lowest_card_or_uniform, 0.0, True)
    batched_passes = len(passes)
    alone = np.array([answered_values(rows[r:r + 1], 7, WINS, lowest_card_or_uniform, 0.0, True)[0]
                      for r in range(len(rows))])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)
    assert len(together) == candidates.size * 10 and 0 < together.min() <= together.max() < 1
    assert batched_passes <= 7 < len(passes) - batched_passes  # one pass per depth, not per row
    def uniform(at, obs, masks):
        return masks / masks.sum(axis=1, keepdims=True)

    best_own = answered_values(rows, 7, WINS, uniform, 0.0, False)  # the player's best cards
    assert (together <= best_own + 1e-12).all() and (together < best_own - 1e-9).any()


def test_throw_values_match_minimax_over_the_rules_engine():
    from agents.search.discard import discard_position, throw_values

    six = parse_cards("5H 5D JS 6C 7C KD")
    kept = np.array([parse_cards("2C 3D 8H 9S")], dtype=np.int64)
    thrown = np.array([parse_cards("QH TC")], dtype=np.int64)
    throws = np.array([parse_cards("5H 5D"), parse_cards("JS KD")])
    for scores, starter in (((100, 104), "JC"), ((117, 119), "5C")):  # heels; the game ends
        position = discard_position(*scores, 121, is_dealer=False)
        values = throw_values(position, np.array(six), throws, kept, thrown,
                              np.array(parse_cards(starter)), WINS)[:, 0]
        for throw, value in zip(throws, values, strict=True):
            game = Game(seed=0, first_dealer=1, single_deal=True, deals=[{
                "hands": {"player_0": six, "player_1": [*kept[0], *thrown[0]]},
                "starter": parse_cards(starter)[0]}])
            game.scores = list(scores)
            for card in [*throw, *thrown[0]]:  # the pone (player 0) throws first
                game.step(int(card))
            assert value == pytest.approx(_python_value(game, 0)), (scores, starter, throw)


def test_settings_from_the_name_and_their_errors():
    agent = make_agent("champion-search:sims=16,floor=0.2,model=0,reply=0", seed=0)
    assert agent.settings == SearchSettings(sims=16, floor=0.2, model=False, reply=0)
    deeper = make_agent("champion-search:reply=3,reply_prune=0.05", seed=0).settings
    assert (deeper.reply, deeper.reply_prune) == (3, 0.05)
    rollout = make_agent("champion-search:reply=7,own=1", seed=0).settings
    assert (rollout.reply, rollout.own) == (7, True)
    sharp = make_agent("champion-search:standard_prior=0.5,standard_floor=0.01", seed=0).settings
    assert (sharp.floor, sharp.standard_floor) == (0.1, 0.01)
    assert make_agent("champion-search:exact_keep=1", seed=0).settings.exact_keep
    with pytest.raises(ValueError, match="setting exact_keep must be a bool, got 'yes'"):
        make_agent("champion-search:exact_keep=yes")
    default = make_agent("champion-search", seed=0).settings
    assert ((default.sims, default.reply, default.reply_prune, default.infoset, default.standard_prior)
            == (64, 7, 0.05, True, 0.5))
    assert not make_agent("champion-search:infoset=0", seed=0).settings.infoset
    with pytest.raises(ValueError, match="standard_floor must be in 0..1, got 1.5"):
        make_agent("champion-search:standard_floor=1.5")
    with pytest.raises(ValueError, match="own needs reply of at least 1"):
        make_agent("champion-search:reply=0,own=1")
    with pytest.raises(ValueError, match="reply must be in 0..7 cards, got 8"):
        make_agent("champion-search:reply=8")
    with pytest.raises(ValueError, match="standard_prior must be in 0..1 \\(1 excluded\\), got 1.0"):
        make_agent("champion-search:standard_prior=1")
    with pytest.raises(ValueError, match="unknown setting 'simz=3'"):
        make_agent("champion-search:simz=3")
    with pytest.raises(ValueError, match="sims must be a int, got 'many'"):
        make_agent("champion-search:sims=many")
    with pytest.raises(ValueError, match="sims must be at least 1"):
        make_agent("champion-search:sims=0")
    with pytest.raises(ValueError, match="discard_sims, discard_need, play_need and play_until "
                                         "must not be negative"):
        make_agent("champion-search:discard_sims=-1")
    with pytest.raises(ValueError, match="got 256, 30, 0 and -1"):
        make_agent("champion-search:play_until=-1")
    with pytest.raises(ValueError, match="must not be negative, got 8, -2, 0 and 0"):
        make_agent("champion-search:discard_sims=8,discard_need=-2")


@pytest.mark.parametrize("scores, searched", [((0, 0), False), ((60, 90), False),
                                               ((60, 91), True), ((95, 20), True)])
def test_discards_are_searched_only_near_the_end_with_discard_need(scores, searched):
    agent = make_agent("champion-search:discard_sims=4,discard_need=30", seed=0)
    searched_at = []
    agent.discard = lambda view, obs, mask: searched_at.append(view.own_score) or int(
        np.flatnonzero(mask)[0])
    game = Game(seed=1, first_dealer=0)
    game.scores = list(scores)
    card = agent.act(encode(game, game.to_move), game.legal_mask())
    assert bool(searched_at) == searched
    if not searched:  # the network's own throw
        assert card == agent.policy.act(encode(game, game.to_move), game.legal_mask())


@pytest.mark.parametrize("scores, searched", [((0, 0), False), ((60, 90), False),
                                               ((60, 91), True), ((95, 20), True)])
def test_the_play_is_searched_only_near_the_end_with_play_need(scores, searched):
    agent = make_agent("champion-search:sims=4,play_need=30", seed=0)
    searched_at = []
    agent.play_values = lambda view, legal: searched_at.append(view.own_score) or np.zeros(
        legal.size)
    game = next(g for seed in range(20)
                if len((g := _play_position(seed, cards_played=1)).legal_actions()) > 1)
    game.scores = list(scores)
    obs, mask = encode(game, game.to_move), game.legal_mask()
    card = agent.act(obs, mask)
    assert bool(searched_at) == searched
    if not searched:  # the network's own card
        assert card == agent.policy.act(obs, mask) and agent.last_values == {}


@pytest.mark.parametrize("laid, searched", [(0, True), (1, True), (2, False), (3, False)])
def test_the_play_is_searched_only_early_in_the_deal_with_play_until(laid, searched):
    agent = make_agent("champion-search:sims=4,play_until=2", seed=0)
    searched_at = []
    agent.play_values = lambda view, legal: searched_at.append(laid) or np.zeros(legal.size)
    game = next(g for seed in range(40)
                if len((g := _play_position(seed, cards_played=laid)).legal_actions()) > 1)
    obs, mask = encode(game, game.to_move), game.legal_mask()
    card = agent.act(obs, mask)
    assert bool(searched_at) == searched
    if not searched:  # the network's own card
        assert card == agent.policy.act(obs, mask) and agent.last_values == {}


def test_the_style_that_explains_the_plays_gains_weight_deal_by_deal():
    from agents.search.styles import OpponentStyles

    styles = OpponentStyles(0.2)
    np.testing.assert_allclose(styles.probs, [0.8, 0.2])
    # two sampled deals: standard's tactics explain the plays of both, the network's less well
    likelihoods = np.array([[0.3, 0.1], [1.0, 0.1]])
    weights = styles.sample_weights(likelihoods)
    np.testing.assert_allclose(weights, 0.8 * likelihoods[0] + 0.2 * likelihoods[1])
    after_one = styles.probs[1]
    assert after_one == pytest.approx(0.2 * 0.55 / (0.2 * 0.55 + 0.8 * 0.2))
    styles.sample_weights(likelihoods)  # the same plays seen again in the same deal: no new evidence
    assert styles.probs[1] == pytest.approx(after_one)
    styles.new_deal()
    assert styles.probs[1] == pytest.approx(after_one)
    styles.sample_weights(likelihoods)  # the next deal's plays say the same again
    styles.new_deal()
    assert styles.probs[1] > after_one + 0.1
    answers = styles.answers(np.array([[0.0, 0.75, 0.25]]), np.array([2]))
    np.testing.assert_allclose(answers, [[0.0, 0.75 * styles.probs[0],
                                          0.25 * styles.probs[0] + styles.probs[1]]])
    styles.reset()
    np.testing.assert_allclose(styles.probs, [0.8, 0.2])


class KeepAndLowest:
    """An opponent that keeps a fixed four (throws the other two) and lays its lowest legal card:
    its moves do not depend on which two cards it throws."""

    name = "keep-and-lowest"

    def __init__(self, keep):
        self.keep = set(keep)

    def reset(self):
        pass

    def act(self, observation, action_mask):
        legal = [int(c) for c in np.flatnonzero(action_mask)]
        view = decode(observation)
        if view.phase == Phase.DISCARD:
            return next(c for c in legal if c not in self.keep)
        return min(legal, key=lambda c: (c % 13, c))


def _first_deal(agent, opponent_six, keep):
    """The agent's observations and cards through the first deal's play (it is player 0)."""
    opponent = KeepAndLowest(keep)
    agent.reset()
    game = Game(seed=0, first_dealer=1, deals=[{
        "hands": {"player_0": parse_cards("5H 5D JS 6C 7C KD"), "player_1": opponent_six},
        "starter": parse_cards("4S")[0]}])
    seen, laid, values = [], [], []
    while game.phase != Phase.DEAL_OVER and len(game.records) == 1 and not game.is_over:
        if game.phase == Phase.PLAY and not game.hands[0] and not game.hands[1]:
            break
        seat = game.to_move
        obs = encode(game, seat)
        if seat == 0:
            card = agent.act(obs, game.legal_mask())
            seen.append(obs)
            laid.append(card)
            values.append(dict(agent.last_values))
        else:
            card = opponent.act(obs, game.legal_mask())
        game.step(card)
        if len(game.records) > 1 or game.records[0].completed:
            break
    return seen, laid, values


@pytest.mark.parametrize("spec", ["champion-search:sims=32,discard_sims=8,discard_need=0",  # searched throws
                                  "champion-search:sims=16,reply=3,reply_prune=0.05,infoset=0",
                                  "champion-search:sims=16,reply=7,own=1",  # network rollouts
                                  "champion-search:sims=16",  # the default: no fusion
                                  "champion-search:sims=16,reply=3",  # three answered cards
                                  "champion-search:sims=16,reply=1",  # one answered card
                                  "champion-search:sims=16,standard_prior=0",  # the network alone
                                  "champion-search:sims=16,standard_prior=0.5,standard_floor=0.01",
                                  "champion-search:sims=16,exact_keep=1,discard_sims=8,discard_need=0",
                                  "champion-search:sims=16,reply=0",  # the solve answers
                                  "champion-search:play=0,discard_sims=8,discard_need=0"])
def test_decisions_do_not_depend_on_the_hidden_cards(spec):
    keep = parse_cards("2C 3D 8H 9S")
    six_a = keep + parse_cards("QH TC")
    six_b = keep + parse_cards("AD 9C")  # other discards: the agent cannot see them in the play
    seen_a, laid_a, values_a = _first_deal(make_agent(spec, seed=5), six_a, keep)
    seen_b, laid_b, values_b = _first_deal(make_agent(spec, seed=5), six_b, keep)
    assert len(seen_a) == len(seen_b) >= 5
    for a, b in zip(seen_a, seen_b, strict=True):
        np.testing.assert_array_equal(a, b)  # the same observations ...
    assert laid_a == laid_b  # ... give the same cards
    assert values_a == values_b and any(values_a)  # and the same searched values


def test_legal_and_reproducible_under_a_seed():
    from training.eval_plans import game_plan
    from training.eval_play import play_game

    games = []
    for _ in range(2):
        agent = make_agent("champion-search:sims=8,discard_sims=4", seed=11)
        game = play_game(agent, make_agent("standard", seed=3), game_plan(7, 0), target=61)
        games.append([(r.hands, r.discards, r.pegging) for r in game.records])
    assert games[0] == games[1] and len(games[0]) >= 2


def test_values_are_chances_and_the_chosen_card_is_the_best_or_within_tolerance():
    agent = make_agent("champion-search:sims=16", seed=2)
    for seed in range(4):
        game = _play_position(seed, cards_played=2)
        if game.phase != Phase.PLAY or len(game.legal_actions()) < 2:
            continue
        card = agent.act(encode(game, game.to_move), game.legal_mask())
        values = agent.last_values
        assert set(values) == set(game.legal_actions())
        assert all(0.0 <= v <= 1.0 for v in values.values())
        assert values[card] >= max(values.values()) - agent.settings.tolerance


def test_searched_throws_leave_each_cards_value_and_play_0_lays_the_networks_cards():
    agent = make_agent("champion-search:play=0,discard_sims=8,discard_need=0", seed=4)
    network = make_agent("champion-search:play=0", seed=4).policy
    game, discarded, played = Game(seed=3, first_dealer=0), 0, 0
    while not game.is_over and played < 12:
        seat, mask = game.to_move, game.legal_mask()
        obs = encode(game, seat)
        card = agent.act(obs, mask)
        legal = set(game.legal_actions())
        if game.phase == Phase.DISCARD and len(legal) > 1:
            values = agent.last_values
            # every card of the hand, by the best throw holding it; the card laid is the best
            # throw's (or within tolerance of it)
            assert set(values) == legal and all(0.0 <= v <= 1.0 for v in values.values())
            assert values[card] >= max(values.values()) - agent.settings.tolerance
            discarded += 1
        elif game.phase == Phase.PLAY and len(legal) > 1:
            assert card == network.act(obs, mask) and agent.last_values == {}
            played += 1
        game.step(card)
    assert discarded >= 4 and played >= 4


def test_search_is_an_agent_name_everywhere():
    from agents.registry import AGENT_NAMES

    assert "champion-search" in AGENT_NAMES
    assert not make_agent("champion-search").stateless  # it remembers the opponent's plays


def test_the_search_keeps_its_measured_network_and_the_champion_names_its_generation():
    """``champion-search`` searches with the distilled network its figures were measured over,
    not with whatever ``champion`` is now; the shipped champion's meta names the expert-iteration
    generation, the config that trains it (from a shipped network) and the commit, and, being a
    pool, the networks the config's pool holds: the start network and the generation's fits, or
    (``pooled_with``) an earlier champion's networks, named by their own config, and the fits."""
    import json
    import re

    import torch

    from agents.registry import CHAMPION_PATH, SEARCH_NETWORK_PATH, SHIPPED_CHECKPOINTS
    from training.config_file import load_config

    def same(a, b):
        x, y = a.net.state_dict(), b.net.state_dict()
        return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)

    search = make_agent("champion-search", seed=0).policy
    assert same(search, make_agent(str(SEARCH_NETWORK_PATH), seed=0))
    assert not same(search, make_agent("champion", seed=0))
    meta = json.loads((CHAMPION_PATH / "meta.json").read_text(encoding="utf-8"))
    block = meta["expert_iteration"]
    root = Path(__file__).resolve().parent.parent
    cfg = load_config(root / block["config"])
    assert cfg.algo == "exit" and 1 <= block["generation"] <= cfg.exit.generations
    start = (root / cfg.exit.start).resolve()
    assert start.parent == SHIPPED_CHECKPOINTS.resolve() and start != CHAMPION_PATH.resolve()
    assert re.fullmatch(r"[0-9a-f]{40}", block["commit"])
    if meta["arch"] == "pool":
        weights = [m["weight"] for m in meta["pool"]]
        earlier = block.get("pooled_with")
        if earlier is None:
            assert weights == [cfg.exit.pool_previous] + [1.0] * cfg.exit.fits
        else:  # the earlier champion's networks first, their weights shared out as it shared them
            before = load_config(root / earlier["config"]).exit
            assert earlier["networks"] == before.fits + (before.pool_previous > 0)
            assert len(weights) == earlier["networks"] + cfg.exit.fits
            assert sum(weights[:earlier["networks"]]) == pytest.approx(earlier["weight"])
            assert weights[earlier["networks"]:] == [1.0] * cfg.exit.fits
        first = json.loads((start / "meta.json").read_text(encoding="utf-8"))
        assert meta["pool"][0]["policy_sha256"] == first["sha256"]["policy.safetensors"]


def _tiny_exit_config(tmp_path, start):
    return {"name": "tinyexit", "seed": 1, "algo": "exit",
            "opponents": [{"agent": "greedy", "weight": 1}],
            "policy": {"arch": "cards", "features": True, "hidden": 16, "context": 16,
                       "embed": 4},
            "exit": {"generations": 2, "search": "champion-search:sims=4", "start": str(start),
                     "eval_games": 2, "opponents": ["random"]},
            "distill": {"chunks": 2, "chunk_games": 1, "soft": 0.5, "temperature": 0.01,
                        "batch_size": 64},
            "train": {"engine": "python", "total_timesteps": 256, "save_every": 128,
                      "progress_bar": False},
            "eval": {"every": 256, "games": 2, "opponents": ["random"], "final_games": 0}}


def test_tiny_expert_iteration_writes_generations_and_resumes(tmp_path):
    import json

    import torch

    from agents.checkpoint import save_checkpoint
    from agents.learned import load_learned_agent
    from agents.networks import build_network
    from training.algos.distill_recording import load_recording
    from training.config import RunConfig
    from training.train import train

    start = tmp_path / "gen0"
    cfg = RunConfig.model_validate(_tiny_exit_config(tmp_path, start))
    torch.manual_seed(0)
    kwargs = cfg.policy.arch_kwargs()
    save_checkpoint(start, build_network("cards", **kwargs), "cards", kwargs, {})
    run = train(cfg, output_dir=tmp_path / "runs")
    lines = [json.loads(x) for x in (run / "generations.jsonl").read_text().splitlines()]
    assert [x["generation"] for x in lines] == [1, 2]
    assert lines[1]["previous"] == lines[0]["checkpoint"]  # gen 2's teacher searched gen 1
    assert "net=" + lines[0]["checkpoint"] in lines[1]["teacher"]
    for x in lines:
        load_learned_agent(x["checkpoint"])  # loadable
        assert set(x["results"]) == {"previous", "random"}
    data, _, _ = load_recording(run / "gen_1" / "recording", 2)
    assert len(data) > 10
    valued = ~np.isnan(data.margins).all(axis=1)  # the search's values, the soft targets
    assert valued.any() and (data.margins[valued][~np.isnan(data.margins[valued])] <= 1).all()
    # a second session with --resume redoes nothing that was written
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*.npz")}
    (run / "gen_2" / "generation.json").unlink()
    again = train(cfg, output_dir=tmp_path / "runs", resume=True)
    assert again == run
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*.npz")} == before
    assert (run / "gen_2" / "generation.json").exists()


def test_expert_iteration_pools_several_fits_of_each_recording(tmp_path):
    """``exit.fits``: a generation fits several networks on its one recording, each ordering its
    minibatches by its own seed, and its network is their pool (with ``exit.pool_previous`` the
    previous generation's network too); the next generation's search plays the pool and its fits
    start from the first fit."""
    import json

    import torch
    from safetensors.torch import load_file

    from agents.checkpoint import save_checkpoint
    from agents.learned import load_learned_agent
    from agents.networks import build_network
    from training.config import RunConfig
    from training.config_file import load_config
    from training.train import train

    start = tmp_path / "gen0"
    data = _tiny_exit_config(tmp_path, start)
    cfg = RunConfig.model_validate({**data, "exit": {**data["exit"], "fits": 2,
                                                     "pool_previous": 2.0}})
    torch.manual_seed(0)
    kwargs = cfg.policy.arch_kwargs()
    save_checkpoint(start, build_network("cards", **kwargs), "cards", kwargs, {})
    run = train(cfg, output_dir=tmp_path / "runs")
    lines = [json.loads(x) for x in (run / "generations.jsonl").read_text().splitlines()]
    first, second = lines
    assert first["checkpoint"] == str(run / "gen_1" / "pool")
    assert len(first["fits"]) == 2 and first["fits"][0] != first["fits"][1]
    fit_weights = [load_file(str(Path(f) / "policy.safetensors")) for f in first["fits"]]
    assert any(not torch.equal(fit_weights[0][k], fit_weights[1][k]) for k in fit_weights[0])
    meta = json.loads((run / "gen_1" / "pool" / "meta.json").read_text())
    assert [m["weight"] for m in meta["pool"]] == [2.0, 1.0, 1.0]
    assert meta["pool"][0]["path"] == str(start)
    # one recording for both fits; the second fit's config differs in its name and fit seed only
    fit_configs = [load_config(Path(f).parent / "config.yaml") for f in first["fits"]]
    assert fit_configs[0].distill.recording == fit_configs[1].distill.recording
    assert fit_configs[1].distill.fit_seed == cfg.seed + 2
    assert fit_configs[0].distill.fit_seed is None
    # generation 2: the search plays generation 1's pool, the fits start from its first fit
    assert "net=" + first["checkpoint"] in second["teacher"]
    second_fit = load_config(Path(second["fits"][0]).parent / "config.yaml")
    assert second_fit.init_from == first["fits"][0]
    # its pool holds generation 1's pool's three networks (weight 2 shared out) and its two fits
    meta = json.loads((run / "gen_2" / "pool" / "meta.json").read_text())
    assert [round(m["weight"], 6) for m in meta["pool"]] == [1.0, 0.5, 0.5, 1.0, 1.0]
    load_learned_agent(second["checkpoint"])
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*.npz")}
    (run / "gen_2" / "generation.json").unlink()
    assert train(cfg, output_dir=tmp_path / "runs", resume=True) == run
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*.npz")} == before


def test_expert_iteration_can_keep_every_earlier_generations_recording(tmp_path):
    """``exit.keep_recordings``: generation g learns from generations 1..g-1's recordings too;
    ``distill.also_from`` adds other runs' recordings to every generation."""
    from training.algos.distill_recording import record
    from training.algos.exit import generation_config
    from training.config import RunConfig

    data = _tiny_exit_config(tmp_path, "champion")
    cfg = RunConfig.model_validate({**data, "exit": {**data["exit"], "keep_recordings": True}})
    for g in (1, 2):
        assert record(tmp_path / f"gen_{g}" / "recording", "greedy", ["random"], 1, seed=g,
                      progress=False) == 0
    assert generation_config(cfg, 1, "champion", tmp_path / "gen_1").distill.also_from == []
    third = generation_config(cfg, 3, "champion", tmp_path / "gen_3").distill
    assert third.also_from == [str(tmp_path / f"gen_{g}" / "recording") for g in (1, 2)]
    assert third.recording == str(tmp_path / "gen_3" / "recording")
    plain = RunConfig.model_validate(data)  # off by default: its own recording alone
    assert generation_config(plain, 3, "champion", tmp_path / "gen_3").distill.also_from == []
    # recordings of other runs named in distill.also_from are learned from in every generation
    shared = str(tmp_path / "gen_1" / "recording")
    pooled = RunConfig.model_validate({**data, "distill": {**data["distill"], "also_from": [shared]}})
    assert [generation_config(pooled, g, "champion", tmp_path / f"gen_{g}").distill.also_from
            for g in (1, 3)] == [[shared], [shared]]


def test_expert_iteration_records_each_generations_own_number_of_chunks(tmp_path):
    """``exit.chunks`` sets each generation's recording in turn, ``distill.chunks`` past it; a
    generation with no chunk to record is refused before any work."""
    from training.algos.exit import generation_config
    from training.config import RunConfig

    data = _tiny_exit_config(tmp_path, "champion")
    cfg = RunConfig.model_validate({**data, "exit": {**data["exit"], "chunks": [5, 3]}})
    assert [generation_config(cfg, g, "champion", tmp_path / f"gen_{g}").distill.chunks
            for g in (1, 2, 3)] == [5, 3, data["distill"]["chunks"]]
    with pytest.raises(ValueError, match="at least one chunk"):
        RunConfig.model_validate({**data, "exit": {**data["exit"], "chunks": [5, 0]}})
