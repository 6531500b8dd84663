"""Packed observations (``crib_env.observation.pack``): what recordings keep in memory."""

from __future__ import annotations

import numpy as np
import pytest

import crib_env
from crib_env.observation import OBS_SIZE, SLICES, pack, unpack


def observations_of_random_games(games: int, target: int) -> np.ndarray:
    rng = np.random.default_rng(target)
    env = crib_env.raw_env(target_score=target)
    rows = []
    for seed in range(games):
        env.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            seen = env.observe(env.agent_selection)
            rows.append(seen["observation"])
            env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    return np.asarray(rows, dtype=np.float32)


@pytest.mark.parametrize(("target", "dtype"), [(121, np.uint8), (31, np.uint8), (400, np.uint16)])
def test_packed_observations_unpack_to_the_very_same_vectors(target, dtype):
    observations = observations_of_random_games(3, target)
    codes = pack(observations)
    assert codes.dtype == dtype and codes.shape == observations.shape
    assert np.array_equal(unpack(codes), observations)
    # the whole numbers behind the scalars: the count up to 31, the scores up to the target
    assert codes[:, SLICES["count"]].max() <= 31
    assert 0 < codes[:, SLICES["scores"]].max() < target
    assert (codes[:, SLICES["target"]] == target).all()


def test_rows_that_are_not_observations_are_refused():
    row = np.zeros((1, OBS_SIZE), np.float32)
    assert pack(row).dtype == np.uint8
    for entry, value in ((SLICES["count"].start, 0.5), (0, 0.25), (0, -1.0)):
        bad = row.copy()
        bad[0, entry] = value
        with pytest.raises(ValueError, match="not observations"):
            pack(bad)
    assert pack(np.zeros((0, OBS_SIZE), np.float32)).shape == (0, OBS_SIZE)
    for shape in ((OBS_SIZE,), (2, OBS_SIZE - 1)):  # not rows of this layout
        with pytest.raises(ValueError, match=f"rows of {OBS_SIZE}, got shape"):
            pack(np.zeros(shape, np.float32))
