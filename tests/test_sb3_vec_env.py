"""The SB3 VecEnv over the compiled vector env: MaskablePPO trains on it, and episodes add up."""

from __future__ import annotations

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks

from crib_env.observation import OBS_SIZE, decode
from training.sb3_vec_env import SB3VecEnv


def random_steps(env: SB3VecEnv, seed: int):
    """Step ``env`` with uniformly random legal cards forever, yielding ``(done, infos)``."""
    rng = np.random.default_rng(seed)
    while True:
        masks = get_action_masks(env)
        env.step_async((rng.random(masks.shape) * masks).argmax(axis=1))
        _, _, done, infos = env.step_wait()
        yield done, infos


def test_maskable_ppo_learns_a_few_steps_on_the_sb3_vec_env():
    env = SB3VecEnv(8, reward="points", episode="deal")
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # episodes logged as Monitor would


def test_episode_infos_carry_the_return_and_the_terminal_observation():
    env = SB3VecEnv(16, reward="points")
    env.seed(5)
    obs = env.reset()
    assert obs.shape == (16, OBS_SIZE)
    ends = 0
    for done, infos in random_steps(env, 0):
        if ends >= 20:
            break
        for i in np.flatnonzero(done):
            own, opp = infos[i]["final_scores"]
            assert infos[i]["episode"]["r"] == own - opp  # points rewards add up to the margin
            view = decode(infos[i]["terminal_observation"])
            assert (view.own_score, view.opp_score) == (own, opp) and max(own, opp) == 121
            ends += 1


def test_seeded_resets_replay_the_same_games():
    firsts = []
    for _ in range(2):
        env = SB3VecEnv(4)
        env.seed(11)
        firsts.append(env.reset())
    np.testing.assert_array_equal(firsts[0], firsts[1])


def test_obs_transform_must_match_the_declared_width():
    env = SB3VecEnv(2, obs_transform=lambda obs, masks: obs[:, :10], obs_size=11)
    with pytest.raises(ValueError, match="obs_transform returned shape"):
        env.reset()


def test_deal_stats_add_up_to_the_learners_points_of_the_deal():
    from crib_env.cards import RANK

    env = SB3VecEnv(32, reward="points", episode="deal")
    env.seed(3)
    env.reset()
    checked = 0
    for done, infos in random_steps(env, 0):
        if checked >= 100:
            break
        for i in np.flatnonzero(done):
            stats = infos[i]["deal_stats"]
            view = decode(infos[i]["terminal_observation"])
            heels = 2 if view.is_dealer and RANK[view.starter] == 10 else 0  # the jack turned up
            crib = stats["crib_per_deal"]
            assert view.is_dealer or crib == 0
            assert min(stats["pegging_per_deal"], stats["hand_per_deal"], crib) >= 0
            assert stats["pegging_per_deal"] + stats["hand_per_deal"] + crib + heels == \
                infos[i]["final_scores"][0]
            checked += 1
