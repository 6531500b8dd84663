"""Agents that keep memory, played on the compiled core one copy per game row
(``training.per_row``): each copy decides as one object playing its game alone on ``Game``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.expert import ExpertAgent
from agents.standard import StandardAgent
from training.batch_play import play_games
from training.eval_plans import game_plan
from training.eval_play import play_game
from training.per_row import PerRowAgent, copy_with_seed


class SeeingExpert(ExpertAgent):
    """The expert (few simulations, for speed), keeping every observation, mask and card of its
    game: what it was shown and what it did."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, sims=6, discard_sims=6)
        self.seen: list[tuple[bytes, bytes, int]] = []

    def act(self, observation, action_mask):
        card = super().act(observation, action_mask)
        self.seen.append((np.asarray(observation).tobytes(), np.asarray(action_mask).tobytes(),
                          card))
        return card


def row_seed(b: int) -> int:
    return 1000 + 7 * b


def test_a_per_row_expert_on_the_compiled_core_decides_as_on_game():
    # Duplicate plans script 40 deals, more than a game needs: both engines deal the same cards.
    # Each game has its own seed, and the expert's play reading depends on its memory of the
    # deal, so a row fed another row's observations, or out of order, would show other
    # observations and choose other cards than the same expert playing that game alone.
    plans = [game_plan(5, i, duplicate=True) for i in range(6)]
    expert = PerRowAgent(SeeingExpert(), row_seed)
    games = play_games(expert, StandardAgent(seed=3), plans)
    for b, (plan, game) in enumerate(zip(plans, games, strict=True)):
        alone = SeeingExpert(seed=row_seed(b))
        plain = play_game(alone, StandardAgent(seed=3), plan)
        assert len(plain.records) < 40  # no deal past the scripted ones
        assert expert.copies[b].seen == alone.seen, f"game {b} went another way"
        assert game.scores == plain.scores and game.winner == plain.winner
    # the games differ from each other, so a mix-up of rows could not go unseen
    assert len({tuple(c.seen) for c in expert.copies.values()}) == len(plans)


def test_copies_are_made_once_per_row_and_reset_for_each_new_game():
    resets = []

    class Counts(StandardAgent):
        def reset(self):
            resets.append(id(self))

    agent = PerRowAgent(Counts(seed=1), lambda b: b)
    agent.reset_rows([0, 2])
    first = dict(agent.copies)
    agent.reset_rows(np.array([2]))
    assert agent.copies == first and sorted(first) == [0, 2]
    assert resets == [id(first[0]), id(first[2]), id(first[2])]
    assert first[0] is not agent.prototype and first[0].rng is not first[2].rng


def test_copy_with_seed_restarts_the_random_stream():
    a, b = ExpertAgent(seed=1), ExpertAgent(seed=99)
    twin = copy_with_seed(b, 1)
    assert twin.rng.integers(1 << 30, size=5).tolist() == a.rng.integers(1 << 30, size=5).tolist()


def test_misuse_is_refused_with_a_clear_error():
    plans = [game_plan(0, i) for i in range(2)]
    with pytest.raises(ValueError, match="keeps memory.*PerRowAgent"):
        play_games(ExpertAgent(), StandardAgent(), plans)
    both = PerRowAgent(ExpertAgent(), lambda b: b)
    with pytest.raises(ValueError, match="cannot play both sides"):
        play_games(both, both, plans)
    with pytest.raises(RuntimeError, match="row 1 acts before reset_rows"):
        PerRowAgent(ExpertAgent(), lambda b: b).act_rows([1], np.zeros((1, 4)), np.ones((1, 52)))
    with pytest.raises(ValueError, match="needs act"):
        PerRowAgent(object(), lambda b: b)


# -- as a training opponent on the compiled vector env --

class OneGameAtATime(StandardAgent):
    """Fails if its observations are not those of one game since its last reset: within a game
    its score never goes down, and it starts at 0."""

    def reset(self):
        self.score = 0

    def observe(self, view):
        assert view.own_score >= self.score, "one copy saw two games"
        self.score = view.own_score


def lowest_cards(env, steps, seed):
    obs, info = env.reset(seed=seed)
    seen, ended = [obs], 0
    for _ in range(steps):
        obs, _, done, _, info = env.step(info["action_mask"].argmax(axis=1))
        seen.append(obs)
        ended += int(done.sum())
    return np.array(seen), ended


def test_a_per_row_opponent_in_the_vector_env_plays_each_row_as_its_own_game():
    from crib_env.vector import CribbageVectorEnv

    member = PerRowAgent(OneGameAtATime(), lambda b: b)
    env = CribbageVectorEnv(6, opponent=[(member, 1.0), (StandardAgent(), 1.0)],
                            episode="deal")  # many restarts: every one must reset the row's copy
    _, ended = lowest_cards(env, 150, seed=3)
    assert ended > 20 and sorted(member.copies) == list(range(6))
    assert (env.opponent_ids == 0).any() and (env.opponent_ids == 1).any()


def test_a_per_row_expert_opponent_is_fixed_by_the_reset_seed():
    from crib_env.vector import CribbageVectorEnv

    def run(seed):
        expert = PerRowAgent(ExpertAgent(sims=4, discard_sims=4), lambda b: 0)
        return lowest_cards(CribbageVectorEnv(3, opponent=expert), 60, seed)[0]

    first = run(11)
    assert np.array_equal(first, run(11))  # the copies restart from the seed's streams
    assert not np.array_equal(first, run(12))


def test_the_expert_is_a_per_row_member_of_a_training_mixture():
    from training.batch_opponents import batch_mixture

    members, _ = batch_mixture([("expert", 1.0), ("standard", 2.0)], None, 1, "greedy", seed=0)
    assert isinstance(members[0][0], PerRowAgent) and members[0][0].name == "expert"
    assert not isinstance(members[1][0], PerRowAgent) and members[1][1] == 2.0
    with pytest.raises(ValueError, match="fallback: 'expert' keeps memory"):
        batch_mixture([("self", 1.0)], Path("."), 2, "expert", seed=0)


def test_the_progress_is_told_game_by_game():
    told = []
    plans = [game_plan(1, i) for i in range(4)]
    play_games(StandardAgent(), PerRowAgent(StandardAgent(), lambda b: b), plans,
               on_game=told.append)
    assert told == [1, 1, 1, 1]
