"""The PettingZoo AEC environment: API conformance, no hidden information, rewards, scripted deals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import crib_env
from crib_env.cards import parse_cards
from crib_env.observation import decode

# A full deal played card by card (player_1 deals, so player_0 is pone and leads). Pegging:
# 7S, 8C (15 for 2, player_1), 7H, 8D (30); player_0 says go, player_1 cannot lay a card either
# and pegs the go; player_0 leads again: 5S, 9H, 6S, 2D (last card, player_1).
# Show: player_0 5S 6S 7S 7H + KD = 10; player_1 8C 8D 9H 2D + KD = 2; crib KC QC AC 3H + KD = 2.
SCRIPTED_DEAL = {"hands": {"player_0": "5S 6S 7S 7H KC QC", "player_1": "8C 8D 9H 2D AC 3H"},
                 "starter": "KD"}
SCRIPTED_MOVES = [  # (agent, card, scores after the move)
    ("player_0", "KC", (0, 0)), ("player_0", "QC", (0, 0)),
    ("player_1", "AC", (0, 0)), ("player_1", "3H", (0, 0)),
    ("player_0", "7S", (0, 0)), ("player_1", "8C", (0, 2)),
    ("player_0", "7H", (0, 2)), ("player_1", "8D", (0, 3)),  # 30: nobody can go, player_1 pegs 1
    ("player_0", "5S", (0, 3)), ("player_1", "9H", (0, 3)),
    ("player_0", "6S", (0, 3)),
    ("player_1", "2D", (10, 8)),  # last card 1, then the show: pone 10, dealer 2, crib 2
]


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play_out(env, rng: np.random.Generator, on_step=None) -> dict[str, float]:
    """Play random legal cards to the end; return each agent's summed rewards from last()."""
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if on_step is not None:
            on_step(agent, observation, info)
        env.step(None if termination or truncation else random_legal(rng, observation["action_mask"]))
    return totals


def test_pettingzoo_api_test():
    api_test(crib_env.env(), num_cycles=300)


def test_pettingzoo_api_test_points_deal_mode():
    api_test(crib_env.env(reward="points", episode="deal"), num_cycles=300)


def test_pettingzoo_seed_test():
    seed_test(lambda: crib_env.env(), num_cycles=300)


def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: crib_env.env(render_mode=render_mode or "ansi"))


def test_ansi_board_shows_pegs_count_table_and_table_talk():
    env = crib_env.env(render_mode="ansi")
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    for _, card, _ in SCRIPTED_MOVES[:6]:
        env.step(parse_cards(card)[0])
    board = env.render()
    assert "player_0 |" in board and "player_1 |" in board
    assert "back peg 0" in board
    assert "count 15" in board
    assert "7S 8C" in board  # the cards on the table in order
    assert "starter KD" in board
    assert "player_1: fifteen two" in board


def test_scripted_deal_scores_step_by_step():
    env = crib_env.env()
    env.reset(seed=1, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    assert env.unwrapped.dealer == "player_1"
    for agent, card, scores in SCRIPTED_MOVES:
        assert env.agent_selection == agent
        env.step(parse_cards(card)[0])
        assert tuple(env.unwrapped.scores.values()) == scores, (agent, card)
    # after the show the next deal is dealt by player_0
    assert env.unwrapped.dealer == "player_0"


def test_infos_report_go_and_score_events_with_cards():
    env = crib_env.raw_env()
    env.reset(seed=1, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    for _, card, _ in SCRIPTED_MOVES[:6]:
        env.step(parse_cards(card)[0])
    fifteen = [e for e in env.infos["player_1"]["events"] if e["kind"] == "fifteen"]
    assert fifteen == [{"kind": "fifteen", "player": "player_1", "points": 2,
                        "cards": ("7S", "8C")}]
    for _, card, _ in SCRIPTED_MOVES[6:8]:
        env.step(parse_cards(card)[0])
    # player_0's window runs from just before its last move (7H): the go and the go point
    events = env.infos["player_0"]["events"]
    kinds = [(e["kind"], e["player"]) for e in events]
    assert ("said go", "player_0") in kinds
    assert ("go", "player_1") in kinds
    assert env.infos["player_0"]["go"] == ["player_0"]


def test_no_leak_observations_identical_when_only_opponent_cards_differ():
    """Two deals with the same hand for player_0 but different cards for player_1 and a different
    stock give player_0 identical observations and infos up to the cut."""
    mine = "5S 6S 7S 7H KC QC"
    deal_a = {"hands": {"player_0": mine, "player_1": "8C 8D 9H 2D AC 3H"}, "starter": "KD"}
    deal_b = {"hands": {"player_0": mine, "player_1": "4D 4H JD TH 9C 2S"}, "starter": "AS"}
    seen = []
    for deal, their_discards in ((deal_a, ("AC", "3H")), (deal_b, ("JD", "9C"))):
        env = crib_env.raw_env()
        env.reset(seed=7, options={"first_dealer": "player_1", "deals": [deal]})
        views = [env.observe("player_0")["observation"]]
        infos = []
        for card in ("KC", "QC", *their_discards):
            env.step(parse_cards(card)[0])
            if env.game.starter is None:
                views.append(env.observe("player_0")["observation"])
                infos.append(env.infos["player_0"])
        seen.append((views, infos))
    (views_a, infos_a), (views_b, infos_b) = seen
    assert len(views_a) == len(views_b) == 4
    for view_a, view_b in zip(views_a, views_b, strict=True):
        np.testing.assert_array_equal(view_a, view_b)
    assert infos_a == infos_b


def test_observation_never_holds_opponent_hand_or_discards():
    env = crib_env.raw_env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(60):
        agent = env.agent_selection
        if env.terminations[agent]:
            break
        for viewer, other in (("player_0", 1), ("player_1", 0)):
            view = decode(env.observe(viewer)["observation"])
            hidden = set(env.game.hands[other]) | set(env.game.discards[other])
            assert hidden.isdisjoint(view.hand + view.discards + view.played_own
                                     + view.played_opp + view.sequence)
            assert view.starter not in hidden
            assert all(e["kind"] != "discard" or e["player"] == viewer
                       for e in env.infos[viewer]["events"])
        env.step(random_legal(rng, env.observe(agent)["action_mask"]))


@pytest.mark.parametrize("episode", ["game", "deal"])
def test_points_rewards_sum_to_final_margin_and_are_zero_sum(episode):
    rng = np.random.default_rng(0)
    for seed in range(20):
        env = crib_env.env(reward="points", episode=episode)
        env.reset(seed=seed)
        step_sums: list[float] = []

        def check_zero_sum(agent, observation, info, env=env, step_sums=step_sums):
            step_sums.append(sum(env.unwrapped.rewards.values()))

        totals = play_out(env, rng, check_zero_sum)
        scores = env.unwrapped.scores
        assert totals["player_0"] == scores["player_0"] - scores["player_1"]
        assert totals["player_1"] == scores["player_1"] - scores["player_0"]
        assert all(s == 0 for s in step_sums)


def test_win_reward_is_plus_minus_one_at_the_end_only():
    rng = np.random.default_rng(1)
    env = crib_env.env(reward="win")
    env.reset(seed=11)
    totals = play_out(env, rng)
    winner = max(env.unwrapped.scores, key=env.unwrapped.scores.get)
    assert env.unwrapped.scores[winner] == 121
    assert totals[winner] == 1.0 and sum(totals.values()) == 0.0


def test_episode_deal_ends_after_one_show():
    env = crib_env.raw_env(episode="deal")
    env.reset(seed=2, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    for _, card, _ in SCRIPTED_MOVES:
        env.step(parse_cards(card)[0])
    assert all(env.terminations.values())
    assert env.unwrapped.scores == {"player_0": 10, "player_1": 8}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}  # the deal's winner by points


def test_target_score_short_game_ends_exactly_on_target():
    env = crib_env.env(target_score=31)
    env.reset(seed=5)
    play_out(env, np.random.default_rng(5))
    assert max(env.unwrapped.scores.values()) == 31
    assert min(env.unwrapped.scores.values()) < 31


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = crib_env.raw_env()
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    before = env.observe("player_0")["observation"].copy()
    with pytest.raises(ValueError, match="not in hand"):
        env.step(parse_cards("8C")[0])
    with pytest.raises(ValueError, match="card id 0..51"):
        env.step("five")
    np.testing.assert_array_equal(before, env.observe("player_0")["observation"])
    assert env.agent_selection == "player_0"


def test_wrapped_env_illegal_move_terminates_with_penalty_and_names_the_move():
    env = crib_env.env()
    env.reset(seed=0, options={"first_dealer": "player_1", "deals": [SCRIPTED_DEAL]})
    with pytest.warns(UserWarning, match=r"illegal move by player_0: 8C"):
        env.step(parse_cards("8C")[0])
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1.0


def test_bad_config_and_options_are_rejected_by_name():
    with pytest.raises(ValueError, match="reward"):
        crib_env.env(reward="score")
    with pytest.raises(ValueError, match="episode"):
        crib_env.env(episode="hand")
    with pytest.raises(ValueError, match="target_score"):
        crib_env.env(target_score=0)
    env = crib_env.raw_env()
    with pytest.raises(ValueError, match="first_dealer"):
        env.reset(options={"first_dealer": "player_2"})
    bad = {"hands": {"player_0": "5S 6S 7S 7H KC QC", "player_1": "5S 8D 9H 2D AC 3H"},
           "starter": "KD"}
    with pytest.raises(ValueError, match="duplicate cards 5S"):
        env.reset(options={"deals": [bad]})


RANDOM_GAMES = 10_000
RANDOM_CHUNK_GAMES = 1_000  # one test each; the quick suite plays the first


@pytest.mark.parametrize("chunk", [0, *(pytest.param(c, marks=pytest.mark.slow)
                                        for c in range(1, RANDOM_GAMES // RANDOM_CHUNK_GAMES))])
def test_random_games_never_present_an_empty_mask_and_keep_invariants(chunk):
    """10,000 random games (10 chunks of 1,000; the quick suite plays the first) through the raw env
    (the wrapped env adds only checks): no exception, a mask that is never empty for the agent to
    move, scores that never fall, a count never past 31, a game that ends on exactly 121."""
    rng = np.random.default_rng(chunk)
    env = crib_env.raw_env(target_score=121)
    for seed in range(chunk * RANDOM_CHUNK_GAMES, (chunk + 1) * RANDOM_CHUNK_GAMES):
        env.reset(seed=seed)
        previous = (0, 0)
        while True:
            agent = env.agent_selection
            if env.terminations[agent]:
                break
            mask = env.observe(agent)["action_mask"]
            assert mask.sum() > 0
            env.step(random_legal(rng, mask))
            scores = tuple(env.unwrapped.scores.values())
            assert scores[0] >= previous[0] and scores[1] >= previous[1]
            assert env.game.count <= 31
            previous = scores
        assert max(previous) == 121


def test_registration_by_id():
    import gymnasium

    import crib_env.registration  # noqa: F401 - registers the ids

    single = gymnasium.make("Cribbage-v0", reward="points")
    observation, info = single.reset(seed=0)
    assert observation.shape == single.observation_space.shape
    from crib_env.registration import make_aec

    assert make_aec("cribbage_v0").metadata["name"] == "cribbage_v0"
    with pytest.raises(ValueError, match="cribbage_v0"):
        make_aec("cribbage_v9")


def test_env_warns_on_unknown_reset_option():
    env = crib_env.raw_env()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=0, options={"first_deler": "player_0"})
    assert any("first_deler" in str(w.message) for w in caught)


def test_int_subclass_actions_are_in_bounds_and_bools_are_not():
    from enum import IntEnum

    env = crib_env.env()
    env.reset(seed=3)
    card = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
    Card = IntEnum("Card", {"chosen": card})
    env.step(Card.chosen)  # an int, as Discrete(52).contains says
    assert env.unwrapped.game.log[-1].cards == (card,)
    with pytest.raises(AssertionError, match="outside the action space"):
        env.step(True)
