"""The compiled batch of card features equals the Python one-row reference, float32 for float32."""

from __future__ import annotations

import numpy as np
import pytest

from agents.card_features import N_CARD_FEATURES, card_features
from agents.card_features_kernels import card_features_batch
from agents.networks import network_input, network_input_batch
from crib_env.fast import P_DISCARD, P_PLAY, GameBatch
from crib_env.game import Phase
from crib_env.observation import OBS_SIZE, SLICES, phase_column

HAND, DISCARDS, COUNT = SLICES["hand"], SLICES["discards"], SLICES["count"]
PLAYED_OPP, OPP_LEFT = SLICES["played_opp"], SLICES["opp_cards_left"]


def one_row(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return np.stack([card_features(o, m) for o, m in zip(observations, masks, strict=True)])


@pytest.fixture(scope="module")
def decisions() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """About 6,000 decisions of the player to move in random games of the compiled core, with
    the phase each was taken in; finished games' rows (empty masks) are left out."""
    games = GameBatch(48).reset(seed=11)
    obs, masks, phases = [], [], []
    while sum(len(m) for m in masks) < 6000:
        mask = games.legal_masks()
        live = mask.any(axis=1)
        obs.append(games.observe(games.to_move)[live])
        masks.append(mask[live])
        phases.append(games.phase[live].copy())
        games.step(games.random_actions())
    return np.concatenate(obs), np.concatenate(masks), np.concatenate(phases)


def test_the_sample_covers_every_kind_of_decision(decisions):
    obs, _, phases = decisions
    discard, play = phases == P_DISCARD, phases == P_PLAY
    hand_size = obs[:, HAND].sum(axis=1)
    is_dealer = obs[:, SLICES["is_dealer"].start] > 0.5
    count = np.rint(obs[:, COUNT.start] * 31)
    for rows in (discard & (hand_size == 6), discard & (hand_size == 5), play & (count >= 28),
                 play & (obs[:, OPP_LEFT.start] == 0), play & (hand_size == 1)):
        assert (rows & is_dealer).sum() > 20 and (rows & ~is_dealer).sum() > 20


def test_batch_equals_one_row_on_real_decisions(decisions):
    obs, masks, _ = decisions
    batch = card_features_batch(obs, masks)
    assert batch.dtype == np.float32 and batch.shape == (len(obs), 52, N_CARD_FEATURES)
    np.testing.assert_array_equal(batch, one_row(obs, masks))


def test_batch_equals_one_row_with_few_cards_unseen(decisions):
    # Real games never show fewer than 41 unseen cards: mark all but 0..12 of them as played by
    # the opponent, so the reply columns average over a handful of cards (or none at all).
    obs, masks, phases = decisions
    rows = np.flatnonzero(phases == P_PLAY)[:400]
    obs, masks = obs[rows].copy(), masks[rows]
    rng = np.random.default_rng(0)
    for i, row in enumerate(obs):
        seen = sum(row[SLICES[name]] for name in ("hand", "discards", "starter", "played_own",
                                                  "played_opp"))
        unseen = np.flatnonzero(seen == 0)
        hide = rng.permutation(unseen)[: len(unseen) - i % 13]
        row[PLAYED_OPP.start + hide] = 1.0
    np.testing.assert_array_equal(card_features_batch(obs, masks), one_row(obs, masks))


def test_empty_masks_give_zero_rows_as_one_row_does(decisions):
    obs, masks, _ = decisions
    empty = np.zeros((40, 52), dtype=np.int8)
    batch = card_features_batch(obs[:40], empty)
    assert not batch.any()
    np.testing.assert_array_equal(batch, one_row(obs[:40], empty))


def test_finished_games_with_a_mask_set_only_the_legal_column():
    games = GameBatch(4).reset(seed=2)
    while not games.over.all():
        games.step(games.random_actions())
    obs = games.observe(0)
    assert (obs[:, phase_column(Phase.GAME_OVER)] == 1).all()
    masks = np.ones((4, 52), dtype=bool)
    np.testing.assert_array_equal(card_features_batch(obs, masks), one_row(obs, masks))


def test_masks_of_any_numeric_type_mean_nonzero_is_legal(decisions):
    obs, masks, _ = decisions
    reference = card_features_batch(obs[:200], masks[:200])
    for dtype in (bool, np.int64, np.float32):
        np.testing.assert_array_equal(card_features_batch(obs[:200], masks[:200].astype(dtype)),
                                      reference)


def test_network_input_batch_equals_network_input_row_by_row(decisions):
    obs, masks, _ = decisions
    for features in (True, False):
        batch = network_input_batch(obs[:300], masks[:300], features)
        rows = np.stack([network_input(o, m, features)
                         for o, m in zip(obs[:300], masks[:300], strict=True)])
        assert batch.dtype == np.float32
        np.testing.assert_array_equal(batch, rows)


def test_wrong_shapes_are_named():
    obs = np.zeros((3, OBS_SIZE), dtype=np.float32)
    masks = np.zeros((3, 52), dtype=np.int8)
    with pytest.raises(ValueError, match=rf"observations must have shape \(rows, {OBS_SIZE}\), "
                                         r"got \(3, 686\)"):
        card_features_batch(obs[:, 1:], masks)
    with pytest.raises(ValueError, match=rf"observations must have shape \(rows, {OBS_SIZE}\), "
                                         rf"got \({OBS_SIZE},\)"):
        card_features_batch(obs[0], masks)
    with pytest.raises(ValueError, match=r"action_masks must have shape \(3, 52\) to match 3 "
                                         r"observations, got \(2, 52\)"):
        card_features_batch(obs, masks[:2])
    with pytest.raises(ValueError, match=r"action_masks must have shape \(3, 52\).*got \(3, 51\)"):
        card_features_batch(obs, masks[:, :51])
    with pytest.raises(ValueError, match=r"observations must have shape"):
        network_input_batch(obs[:, 1:], masks, features=False)
