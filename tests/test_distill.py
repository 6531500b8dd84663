"""Policy distillation (training.distill): what is recorded, that a recording is a function of its
seed and resumes, and that the fitted network is a checkpoint that plays the teacher's cards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.learned import load_learned_agent
from agents.base import RandomAgent
from training.distill import CHUNK_GAMES, RecordingAgent, fit, load_chunks, main, record_chunk


def test_recording_keeps_only_decisions_with_a_choice() -> None:
    recorder = RecordingAgent(RandomAgent(seed=0))
    forced = np.zeros(52, dtype=np.int8)
    forced[7] = 1
    assert recorder.act(np.zeros(10, dtype=np.float32), forced) == 7
    assert recorder.cards == []
    data = record_chunk("standard", "greedy", seed=3, number=0)
    assert len(data["cards"]) == len(data["obs"]) == len(data["masks"]) > 20 * CHUNK_GAMES
    assert (data["masks"].sum(axis=1) > 1).all()
    assert data["masks"][np.arange(len(data["cards"])), data["cards"]].all()  # every card legal


def test_a_chunk_is_a_function_of_seed_and_number() -> None:
    first = record_chunk("standard", "greedy", seed=3, number=1)
    again = record_chunk("standard", "greedy", seed=3, number=1)
    other = record_chunk("standard", "greedy", seed=3, number=2)
    for key in first:
        assert np.array_equal(first[key], again[key])
    assert not np.array_equal(first["cards"][:50], other["cards"][:50])


def test_record_resumes_and_refuses_another_recording(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rec"
    args = ["record", "--out", str(out), "--teacher", "standard", "--opponents", "greedy",
            "--chunks", "2", "--seed", "1"]
    assert main(args) == 0
    written = {p.name: p.stat().st_mtime_ns for p in out.glob("chunk_*.npz")}
    assert sorted(written) == ["chunk_00000.npz", "chunk_00001.npz"]
    assert main(args[:-2] + ["--chunks", "2", "--seed", "1"]) == 0  # nothing left to do
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("chunk_*.npz")} == written
    with pytest.raises(SystemExit, match="holds a recording of"):
        main(args[:-1] + ["2"])  # another seed into the same folder


def test_bad_teacher_fails_before_any_game(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nosuch"):
        main(["record", "--out", str(tmp_path / "r"), "--teacher", "nosuch", "--chunks", "1"])
    assert not (tmp_path / "r").exists()


def test_fit_learns_the_teachers_cards(tmp_path: Path) -> None:
    """Standard's choices (deterministic expected values) are learnable: a small network
    agrees with it on most held-out decisions and plays it as a checkpoint."""
    out = tmp_path / "rec"
    main(["record", "--out", str(out), "--teacher", "standard", "--opponents", "greedy",
          "--chunks", "11", "--seed", "2"])
    train, held = load_chunks(out)
    assert len(held["cards"]) > 0 and len(train["cards"]) > 8 * len(held["cards"])
    last = fit(out, tmp_path / "student", {"features": True, "prior": False, "hidden": 32,
                                           "context": 32, "embed": 8},
               epochs=3, lr=3e-3, batch_size=256, seed=0)
    assert last["held_agreement"] > 0.8
    student = load_learned_agent(tmp_path / "student")
    meta = json.loads((tmp_path / "student" / "meta.json").read_text())
    assert meta["algo"] == "distill" and meta["distill"]["teacher"] == "standard"
    picks = student.act_batch(held["obs"], held["masks"])
    assert np.mean(picks == held["cards"]) == pytest.approx(last["held_agreement"], abs=1e-6)
