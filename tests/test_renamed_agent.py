"""``renamed:SPEC``: an agent playing every game through its own random renaming of the suits."""

from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_agent
from agents.renamed import SuitRenamedAgent
from agents.standard import StandardAgent
from crib_env.game import Game
from crib_env.observation import encode
from crib_env.symmetry import CARD_MAP, N_RENAMINGS, rename_suits
from training.evaluate import evaluate


def _decisions(seeds=range(6)):
    """(observation, mask) of every decision of a few games played at random."""
    out = []
    for seed in seeds:
        rng, game = np.random.default_rng(seed), Game(seed=seed)
        while not game.is_over and len(out) < 60 * (seed + 1):
            out.append((encode(game, game.to_move), game.legal_mask()))
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
    return out


def test_a_renamed_agent_lays_the_card_its_agent_lays_in_the_renamed_game():
    agent = SuitRenamedAgent(StandardAgent(seed=0))
    inner = StandardAgent(seed=0)
    differs = 0
    for k, (obs, mask) in enumerate(_decisions()):
        p = k % N_RENAMINGS
        agent.renaming = p
        card = agent.act(obs, mask)
        assert mask[card]
        new_obs, new_mask, _, _ = rename_suits(np.array([p]), obs[None], mask[None], np.zeros(1))
        assert CARD_MAP[p, card] == inner.act(new_obs[0], new_mask[0])
        differs += card != inner.act(obs, mask)
    # standard breaks ties by the card id, so under other names it lays other cards of a rank
    assert differs > 0


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
    from pydantic import ValidationError

    from training.config import EvalConfig, OpponentConfig

    assert OpponentConfig(agent="renamed:expert").agent == "renamed:expert"
    assert EvalConfig(opponents=["renamed:standard", "greedy"]).opponents[0] == "renamed:standard"
    for bad in ("renamed:self", "renamed:nobody", "renamed:"):
        with pytest.raises(ValidationError, match="also after 'renamed:'"):
            OpponentConfig(agent=bad)
    with pytest.raises(ValidationError, match="also after 'renamed:'"):
        EvalConfig(opponents=["renamed:self"])
