"""The compiled ``act_batch`` of the greedy and standard agents choose as their one-row ``act``.

Positions are real observations from games on the compiled core (``crib_env.fast.GameBatch``)
played with random legal cards from scores spread over the whole game, the last 30 points
included (where the standard agent's end-game rules take over), targets 121 and 61, both seats,
both phases.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest

from agents.endgame import ENDGAME_NEED
from agents.greedy import GreedyAgent
from agents.greedy_batch import tie_weights
from agents.pegging import Board, endgame_mode
from agents.standard import StandardAgent
from crib_env import fast
from crib_env.game import Phase
from crib_env.observation import OBS_SIZE, SCORE_SCALE, SLICES, decode, phase_column

TARGET = SLICES["target"].start
DISCARD_PHASE = phase_column(Phase.DISCARD)


def play_positions(games: int, target: int, seed: int, moves: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move over ``moves`` random moves of ``games`` games
    whose scores start anywhere from 0 to a point short of ``target``."""
    fg = fast.GameBatch(games, target=target).reset(seed=seed)
    rng = np.random.default_rng(seed)
    for p in range(2):
        start = rng.integers(0, target, games)
        fg.state[:, fast.SCORE + p] = start
        fg.state[:, fast.PREV + p] = start
    observations, masks = [], []
    for _ in range(moves):
        running = ~fg.over
        if not running.any():
            break
        observations.append(fg.observe(fg.to_move)[running])
        masks.append(fg.legal_masks()[running])
        fg.step(fg.random_actions())
    return np.concatenate(observations), np.concatenate(masks)


@cache
def positions() -> tuple[np.ndarray, np.ndarray]:
    """About 5,700 positions: targets 121 and 61, in one batch."""
    parts = [play_positions(150, 121, seed=1, moves=30), play_positions(100, 61, seed=2, moves=20)]
    return (np.concatenate([o for o, _ in parts]), np.concatenate([m for _, m in parts]))


def one_row_tie_set(agent: GreedyAgent, observation: np.ndarray, mask: np.ndarray) -> Counter:
    """How many of the one-row greedy agent's tied best options lead to each card."""
    view = decode(observation)
    legal = [int(c) for c in np.flatnonzero(mask)]
    if view.phase == Phase.DISCARD:
        hand6 = tuple(sorted(view.hand + view.discards))
        return Counter(next(c for c in sorted(pair) if c not in view.discards)
                       for pair in agent.discard_options(view, hand6))
    if len(legal) == 1:
        return Counter(legal)
    return Counter(agent.play_options(view, legal))


def test_the_positions_cover_both_phases_seats_and_the_end_game():
    observations, _ = positions()
    views = [decode(o) for o in observations[::7]]
    assert len(observations) > 5000
    assert {v.phase for v in views} == {Phase.DISCARD, Phase.PLAY}
    assert {v.is_dealer for v in views} == {True, False}
    assert {v.target for v in views} == {121, 61}
    near = [v for v in views if min(v.target - v.own_score, v.target - v.opp_score) <= ENDGAME_NEED]
    assert len(near) > len(views) // 3


def test_greedy_batch_tie_sets_are_the_one_row_tie_sets():
    observations, masks = positions()
    agent = GreedyAgent(0)
    weights = np.zeros((len(observations), 52), dtype=np.int64)
    tie_weights(observations, masks != 0, weights)
    ties = 0
    for obs, mask, row in zip(observations, masks, weights, strict=True):
        expected = one_row_tie_set(agent, obs, mask)
        assert {c: int(row[c]) for c in np.flatnonzero(row)} == dict(expected), decode(obs)
        ties += len(expected) > 1
    assert ties > 500  # ties are common: the draw among them is tested below


def test_greedy_batch_chooses_from_the_tie_set_and_as_act_when_one_card_is_best():
    observations, masks = positions()
    batch = GreedyAgent(1).act_batch(observations, masks)
    one_row = GreedyAgent(2)
    single = 0
    for obs, mask, card in zip(observations, masks, batch, strict=True):
        options = one_row_tie_set(one_row, obs, mask)
        assert card in options
        if len(options) == 1:
            assert card == one_row.act(obs, mask)
            single += 1
    assert single > 1000


def test_greedy_batch_draws_each_tied_option_uniformly():
    """A row whose two tied options lay two different cards: each is chosen with chance 1/2, and
    4,000 draws land within 4 standard deviations of that."""
    observations, masks = positions()
    weights = np.zeros((len(observations), 52), dtype=np.int64)
    tie_weights(observations, masks != 0, weights)
    two = np.flatnonzero((weights.sum(axis=1) == 2) & ((weights > 0).sum(axis=1) == 2))
    row = int(two[0])
    agent = GreedyAgent(3)
    cards = agent.act_batch(np.repeat(observations[row:row + 1], 4000, axis=0),
                            np.repeat(masks[row:row + 1], 4000, axis=0))
    first, second = np.flatnonzero(weights[row])
    assert set(cards.tolist()) == {first, second}
    assert abs(np.mean(cards == first) - 0.5) < 4 * 0.5 / np.sqrt(4000)


def test_standard_batch_chooses_what_act_chooses_row_by_row():
    observations, masks = positions()
    batch = StandardAgent(0).act_batch(observations, masks)
    one_row = StandardAgent(0)
    modes = Counter()
    for obs, mask, card in zip(observations, masks, batch, strict=True):
        assert card == one_row.act(obs, mask), decode(obs)
        view = decode(obs)
        board = Board.of(view)
        if view.phase == Phase.DISCARD:
            modes["endgame discard" if min(board.need_own, board.need_opp) <= ENDGAME_NEED
                  else "discard"] += 1
        elif mask.sum() > 1:
            modes[endgame_mode(view, board)] += 1
    # every branch of the standard rules was exercised
    assert min(modes[m] for m in ("discard", "endgame discard", "score", "defend", "attack")) >= 20


def test_standard_batch_of_one_target_equals_the_mixed_batch():
    """Rows of different targets are grouped by win table: the same cards as each target alone."""
    observations, masks = positions()
    agent = StandardAgent(0)
    mixed = agent.act_batch(observations, masks)
    split = int(np.argmax(np.rint(observations[:, TARGET] * SCORE_SCALE) == 61))
    assert split > 0
    np.testing.assert_array_equal(mixed[:split], agent.act_batch(observations[:split], masks[:split]))
    np.testing.assert_array_equal(mixed[split:], agent.act_batch(observations[split:], masks[split:]))


@pytest.mark.parametrize("make", [GreedyAgent, StandardAgent])
def test_act_batch_rejects_an_empty_mask_row_naming_it(make):
    observations, masks = positions()
    masks = masks[:5].copy()
    masks[3] = 0
    with pytest.raises(ValueError, match="allows no action in row 3"):
        make(0).act_batch(observations[:5], masks)


@pytest.mark.parametrize("make", [GreedyAgent, StandardAgent])
def test_act_batch_rejects_wrong_shapes(make):
    observations, masks = positions()
    agent = make(0)
    with pytest.raises(ValueError, match=rf"observations must have shape \(rows, {OBS_SIZE}\)"):
        agent.act_batch(observations[0], masks[:1])
    with pytest.raises(ValueError, match=rf"observations must have shape \(rows, {OBS_SIZE}\)"):
        agent.act_batch(observations[:2, :-1], masks[:2])
    with pytest.raises(ValueError, match=r"action_masks must have shape \(rows, 52\)"):
        agent.act_batch(observations[:2], masks[:2, :51])
    with pytest.raises(ValueError, match="the same rows, got 3 and 2"):
        agent.act_batch(observations[:3], masks[:2])


@pytest.mark.parametrize("make", [GreedyAgent, StandardAgent])
def test_act_batch_rejects_a_discard_row_without_six_cards(make):
    observations, masks = positions()
    row = int(np.flatnonzero(observations[:, DISCARD_PHASE] == 1)[0])
    broken = observations[row:row + 1].copy()
    broken[0, int(np.flatnonzero(broken[0, :52])[0])] = 0.0  # drop a card from the hand
    with pytest.raises(ValueError, match="row 0 is in the discard phase without six cards"):
        make(0).act_batch(broken, masks[row:row + 1])


@pytest.mark.parametrize("base", [GreedyAgent, StandardAgent])
def test_a_subclass_that_changes_a_decision_acts_row_by_row_in_act_batch(base):
    """The compiled form decides as the class it was written for; a subclass with its own choices
    (as the expert is a standard agent with its own) gets its own ``act`` on every row."""
    class LowestPlay(base):
        def choose_play(self, view, legal):
            return min(legal)

    observations, masks = positions()
    rows = np.flatnonzero((observations[:, DISCARD_PHASE] == 0) & (masks.sum(axis=1) > 1))[:300]
    one_row = LowestPlay(0)
    expected = [one_row.act(o, m) for o, m in zip(observations[rows], masks[rows], strict=True)]
    assert LowestPlay(0).act_batch(observations[rows], masks[rows]).tolist() == expected
    assert expected != base(0).act_batch(observations[rows], masks[rows]).tolist()
