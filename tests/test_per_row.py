"""Agents that keep memory, played on the compiled core one copy per game row
(``training.per_row``): each copy decides as one object playing its game alone on ``Game``."""

from __future__ import annotations

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
