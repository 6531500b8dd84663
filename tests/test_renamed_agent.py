"""``renamed:SPEC``: an agent playing every game through its own random renaming of the suits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.registry import make_agent
from training.config import EvalConfig, OpponentConfig
from training.evaluate import evaluate


def test_each_game_gets_a_renaming_from_the_seed_and_specs_are_checked():
    def renamings(seed):
        agent = make_agent("renamed:expert", seed=seed)
        drawn = []
        for _ in range(12):
            agent.reset()
            drawn.append(agent.renaming)
        return drawn

    assert renamings(3) == renamings(3)
    assert len(set(renamings(3))) > 3 and renamings(3) != renamings(4)
    agent = make_agent("renamed:expert", seed=3)
    assert agent.name == "renamed:expert" and not agent.stateless
    for bad in ("renamed:", "renamed: ", "renamed:renamed:expert"):
        with pytest.raises(ValueError, match="'renamed:' takes one agent spec"):
            make_agent(bad)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        make_agent("renamed:nobody")


def test_an_evaluation_against_a_renamed_agent_is_reproducible_and_differs_from_the_plain_one():
    one = evaluate("greedy", "renamed:standard", games=40, seed=5, duplicate=True,
                   progress=False, regret=False)
    again = evaluate("greedy", "renamed:standard", games=40, seed=5, duplicate=True,
                     progress=False, regret=False, workers=2)
    plain = evaluate("greedy", "standard", games=40, seed=5, duplicate=True, progress=False,
                     regret=False)
    assert one.margins == again.margins
    assert one.margins != plain.margins


def test_training_configs_take_renamed_opponents_and_refuse_bad_ones():
    assert OpponentConfig(agent="renamed:expert").agent == "renamed:expert"
    assert EvalConfig(opponents=["renamed:standard", "greedy"]).opponents[0] == "renamed:standard"
    for bad in ("renamed:self", "renamed:nobody", "renamed:"):
        with pytest.raises(ValidationError, match="also after 'renamed:'"):
            OpponentConfig(agent=bad)
    with pytest.raises(ValidationError, match="also after 'renamed:'"):
        EvalConfig(opponents=["renamed:self"])
