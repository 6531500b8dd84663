"""The single-agent Gymnasium wrapper: checkers, seats, opponents, rewards of the learning seat."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import SubprocVecEnv

from crib_env.single import SingleAgentCribbageEnv


def play_episode(env: SingleAgentCribbageEnv, seed: int, choose=None) -> tuple[float, dict]:
    observation, info = env.reset(seed=seed)
    total, done = 0.0, False
    rng = np.random.default_rng(seed)
    while not done:
        mask = env.action_masks()
        assert mask.any()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        action = choose(observation, mask) if choose else int(rng.choice(np.flatnonzero(mask)))
        observation, reward, done, truncated, info = env.step(action)
        total += reward
    return total, info


def test_gymnasium_check_env():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's random actions are illegal on purpose
        gymnasium_check_env(SingleAgentCribbageEnv(reward="points"), skip_render_check=True)


def test_sb3_check_env():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(SingleAgentCribbageEnv(reward="points"))


@pytest.mark.parametrize("seat", ["player_0", "player_1", "random"])
def test_points_reward_is_the_learning_seats_margin(seat):
    env = SingleAgentCribbageEnv(reward="points", seat=seat)
    seats = set()
    for seed in range(8):
        total, info = play_episode(env, seed)
        scores = env.game_env.scores
        learner = env.learner
        opponent = "player_1" if learner == "player_0" else "player_0"
        assert total == scores[learner] - scores[opponent]
        assert info["learner"] == learner
        seats.add(learner)
        assert info["deal_stats"]["deals"] == len(env.game_env.game.records)
    assert seats == ({"player_0", "player_1"} if seat == "random" else {seat})


def test_win_reward_and_summary():
    env = SingleAgentCribbageEnv(reward="win", seat="player_0")
    total, info = play_episode(env, 3)
    assert total in (1.0, -1.0)
    assert (total == 1.0) == (info["summary"]["winner"] == "player_0")


def test_same_seed_same_episode():
    first = [play_episode(SingleAgentCribbageEnv(reward="points"), s)[0] for s in range(3)]
    second = [play_episode(SingleAgentCribbageEnv(reward="points"), s)[0] for s in range(3)]
    assert first == second


def test_opponent_agent_object_callable_and_reset_each_episode():
    class LowestCard:
        name = "lowest"
        resets = 0

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])

        def reset(self):
            self.resets += 1

    opponent = LowestCard()
    env = SingleAgentCribbageEnv(opponent=opponent, reward="points", episode="deal")
    for seed in range(3):
        play_episode(env, seed)
    assert opponent.resets == 3
    calls = []

    def highest(observation, action_mask):
        calls.append(1)
        return int(np.flatnonzero(action_mask)[-1])

    play_episode(SingleAgentCribbageEnv(opponent=highest, episode="deal"), 0)
    assert calls


def test_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="seat"):
        SingleAgentCribbageEnv(seat="north")
    with pytest.raises(ValueError, match="make_agent"):
        SingleAgentCribbageEnv(opponent="greedy")
    with pytest.raises(ValueError, match="opponent"):
        SingleAgentCribbageEnv(opponent=42)


def test_illegal_action_terminates_with_penalty_or_raises():
    env = SingleAgentCribbageEnv(seat="player_0")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(UserWarning, match="illegal move"):
        _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and "not in hand" in info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(illegal)
    strict = SingleAgentCribbageEnv(seat="player_0", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="not in hand"):
        strict.step(illegal)


def _make_env():
    return SingleAgentCribbageEnv(reward="points", episode="deal")


def test_works_under_subproc_vec_env():
    vec = SubprocVecEnv([_make_env, _make_env])
    try:
        vec.seed(0)
        observations = vec.reset()
        # The same two envs in this process, seeded as SB3 seeds them (seed + index), must see
        # the same observations, rewards and episode ends step for step, auto-resets included.
        local = [_make_env() for _ in range(2)]
        expected = np.stack([env.reset(seed=i)[0] for i, env in enumerate(local)])
        np.testing.assert_array_equal(observations, expected)
        episodes_ended = 0
        for _ in range(60):
            masks = np.stack(vec.env_method("action_masks"))
            actions = [int(np.flatnonzero(m)[0]) for m in masks]
            observations, rewards, dones, infos = vec.step(np.array(actions))
            for i, env in enumerate(local):
                obs, reward, terminated, truncated, _ = env.step(actions[i])
                assert reward == rewards[i] and (terminated or truncated) == dones[i]
                if dones[i]:
                    np.testing.assert_array_equal(infos[i]["terminal_observation"], obs)
                    obs, _ = env.reset()
                    episodes_ended += 1
                np.testing.assert_array_equal(observations[i], obs)
        assert episodes_ended >= 2
    finally:
        vec.close()
