"""Learning to read the opponent's hand: a network that, from one seat's observation alone, gives
the chance that the opponent holds each card it has not seen.

A policy network fitted on tens of thousands of decisions learns little, from those labels
alone, what the opponent's plays say about the cards it still holds; but what it holds is known
in every game played, so a reader can be fitted on millions of plain (observation, held cards)
pairs. ``record`` plays an agent against an opponent on ``crib_env.fast`` and keeps, at each of
the agent's turns in the play, its observation, its legal cards and the opponent's held cards
(as a 52-bit mask); ``fit`` trains ``agents.reader.HandReader`` on them and reports its log-loss
on held-out chunks next to a reader that knows only which cards are unseen and how many the opponent holds.

    python -m training.hand_reader record DIR --agent champion --opponent expert --chunks 0:40
    python -m training.hand_reader fit DIR OUT --epochs 4

Chunks are numbered and each is a function of the seed and its number alone, written atomically,
so a killed recording resumes by skipping the chunks on disk.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.files import atomic_write, atomic_write_text
from agents.reader import (
    HandReader,
    log_loss,
    save_reader,
    uniform_probabilities,
    unseen_cards,
)
from crib_env import fast
from crib_env.cards import N_CARDS
from crib_env.observation import OBS_SIZE

from .algos.distill_recording import CHUNK_PATTERN, chunk_files, npz_bytes
from .eval_plans import derive_seed, game_plan

#: every this many chunks, one is kept out of the reader's training to measure it
HELD_OUT_EVERY = 10


def held_mask(bits: np.ndarray) -> np.ndarray:
    """(rows, 52) int8 masks of the card bitmasks ``bits``."""
    return ((bits[:, None] >> np.arange(N_CARDS)) & 1).astype(np.int8)


class HeldCardsRecorder:
    """``play_games``' ``on_turn`` hook: at each of the agent's turns in the play with the opponent
    still holding a card, keeps the agent's observation, its legal cards and the opponent's held
    cards."""

    def __init__(self, agent_seats: np.ndarray) -> None:
        self.agent_seats = agent_seats
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.held: list[np.ndarray] = []

    def __call__(self, S: np.ndarray, live: np.ndarray, observations: np.ndarray,
                 masks: np.ndarray, actions: np.ndarray) -> None:
        seats = self.agent_seats[live]
        opp_held = S[live, fast.HAND + 1 - seats]
        keep = ((S[live, fast.TO_MOVE] == seats) & (S[live, fast.PHASE] == fast.P_PLAY)
                & (opp_held != 0))
        if keep.any():
            self.obs.append(observations[keep].copy())
            self.masks.append(masks[keep].astype(np.int8))
            self.held.append(held_mask(opp_held[keep]))


def record_chunk(agent_spec: str, opponent: str, seed: int, number: int,
                 games: int) -> dict[str, np.ndarray]:
    """Chunk ``number``: the agent ``agent_spec`` plays ``games`` games against ``opponent``."""
    from .batch_play import play_games
    from .eval_play import build_agent
    from .per_row import PerRowAgent, is_stateless

    chunk_seed = derive_seed(seed, "hand_reader", number)
    sides = []
    for role, spec in (("agent", agent_spec), ("opponent", opponent)):
        side = build_agent(spec, seed=derive_seed(chunk_seed, role))
        if not is_stateless(side):  # one copy per game, as in an evaluation
            side = PerRowAgent(side, lambda b, role=role: derive_seed(chunk_seed, role, "game", b))
        sides.append(side)
    agent, rival = sides
    plans = [game_plan(chunk_seed, index) for index in range(games)]
    recorder = HeldCardsRecorder(np.array([p.agent_seat for p in plans], dtype=np.int64))
    play_games(agent, rival, plans, on_turn=recorder)
    obs = np.concatenate(recorder.obs) if recorder.obs else np.zeros((0, OBS_SIZE), np.float32)
    masks = (np.concatenate(recorder.masks) if recorder.masks
             else np.zeros((0, N_CARDS), np.int8))
    held = np.concatenate(recorder.held) if recorder.held else np.zeros((0, N_CARDS), np.int8)
    return {"obs": obs.astype(np.float32), "masks": masks, "held": held}


def record(directory: Path, agent: str, opponent: str, seed: int, chunks: range,
           games: int) -> None:
    from .eval_play import build_agent

    for spec_text in (agent, opponent):  # a bad name is refused before anything is written
        build_agent(spec_text, seed=seed)
    directory.mkdir(parents=True, exist_ok=True)
    spec = {"agent": agent, "opponent": opponent, "seed": seed, "games_per_chunk": games}
    spec_file = directory / "recording.json"
    if chunk_files(directory):
        recorded = spec_file.read_text().strip() if spec_file.exists() else "nothing said"
        if recorded != json.dumps(spec):
            raise SystemExit(f"{directory} was recorded with {recorded}, not "
                             f"{json.dumps(spec)}: use another folder")
    atomic_write_text(spec_file, json.dumps(spec) + "\n")
    for number in chunks:
        path = directory / CHUNK_PATTERN.format(number)
        if path.exists():
            continue
        started = time.perf_counter()
        arrays = record_chunk(agent, opponent, seed, number, games)
        atomic_write(path, lambda tmp, arrays=arrays: tmp.write_bytes(npz_bytes(arrays)))
        print(f"chunk {number}: {len(arrays['obs'])} rows in "
              f"{time.perf_counter() - started:.0f} s", flush=True)


def chosen_chunks(directory: Path, held_out: bool) -> list[Path]:
    """The recording's held-out chunk files (every ``HELD_OUT_EVERY``-th), or its training ones."""
    return [path for number, path in chunk_files(directory).items()
            if (number % HELD_OUT_EVERY == 0) == held_out]


def load(directory: Path, held_out: bool
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The recording's training (or held-out) chunks' observations, held-card masks and the seat's
    legal cards (``None`` where a chunk was recorded without them)."""
    chosen = chosen_chunks(directory, held_out)
    if not chosen:
        raise SystemExit(f"{directory}: no {'held-out' if held_out else 'training'} chunks")
    parts = [np.load(p) for p in chosen]
    legal = (np.concatenate([p["masks"] for p in parts])
             if all("masks" in p.files for p in parts) else None)
    return (np.concatenate([p["obs"] for p in parts]),
            np.concatenate([p["held"] for p in parts]).astype(np.float32), legal)


def reading_scores(probs: torch.Tensor, held: torch.Tensor, obs: torch.Tensor) -> dict[str, float]:
    """Chances ``probs`` (0 on the cards the seat has seen) scored against the ``held`` cards: the
    mean log-loss per unseen card, and how often the n cards rated likeliest are held when the
    opponent holds n."""
    unseen = unseen_cards(obs)
    k = int(held.sum(1).max())
    order = torch.argsort(probs, dim=1, descending=True, stable=True)[:, :k]
    n = held.sum(1)
    hit = (torch.gather(held, 1, order) * (torch.arange(k)[None, :] < n[:, None])).sum() / n.sum()
    return {"log_loss": float(log_loss(probs, held, unseen)), "top_n_held": float(hit)}


def _scores(reader: HandReader | None, obs: np.ndarray, held: np.ndarray) -> dict[str, float]:
    """``reader``'s (``None``: the uniform reader's) ``reading_scores``."""
    with torch.no_grad():
        o, h = torch.from_numpy(obs), torch.from_numpy(held)
        probs = uniform_probabilities(o) if reader is None else reader.probabilities(o)
        return reading_scores(probs, h, o)


def fit_reader(directory: Path, output: Path, epochs: int, seed: int, batch: int = 512,
               lr: float = 1e-3) -> dict:
    """Fit a ``HandReader`` on the recording's training chunks and save it (with its held-out
    scores next to the uniform reader's) to ``output``; returns what its ``meta.json`` says."""
    output = Path(output)
    if output.exists() and any(output.iterdir()):
        raise SystemExit(f"{output} exists and is not empty: choose a new folder")
    torch.manual_seed(seed)
    obs, held, _ = load(directory, held_out=False)
    test_obs, test_held, _ = load(directory, held_out=True)
    reader = HandReader()
    optimizer = torch.optim.Adam(reader.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    history = []
    for epoch in range(epochs):
        order = rng.permutation(len(obs))
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            o, h = torch.from_numpy(obs[rows]), torch.from_numpy(held[rows])
            unseen = unseen_cards(o)
            loss = (nn.functional.binary_cross_entropy_with_logits(reader(o), h, reduction="none")
                    * unseen).sum() / unseen.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        history.append({"epoch": epoch + 1, **_scores(reader, test_obs, test_held)})
        print(f"epoch {epoch + 1}: held-out log-loss {history[-1]['log_loss']:.4f}, "
              f"top-n held {history[-1]['top_n_held']:.3f}", flush=True)
    meta = {"recording": str(directory), "training_rows": len(obs),
            "held_out_rows": len(test_obs), "epochs": epochs, "seed": seed,
            "seconds": round(time.perf_counter() - started, 1),
            "held_out": {"reader": history[-1] if history else None,
                         "uniform": _scores(None, test_obs, test_held)},
            "history": history}
    save_reader(output, reader, meta)
    print(json.dumps(meta["held_out"]))
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.hand_reader",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="record (observation, opponent's held cards)")
    rec.add_argument("directory", type=Path)
    rec.add_argument("--agent", default="champion", help="who plays the observing seat")
    rec.add_argument("--opponent", default="expert")
    rec.add_argument("--seed", type=int, default=81)
    rec.add_argument("--chunks", default="0:40", help="first:stop chunk numbers")
    rec.add_argument("--games", type=int, default=200, help="games a chunk")
    fit = commands.add_parser("fit", help="fit a HandReader on a recording")
    fit.add_argument("directory", type=Path)
    fit.add_argument("output", type=Path)
    fit.add_argument("--epochs", type=int, default=4)
    fit.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "record":
        first, _, stop = args.chunks.partition(":")
        record(args.directory, args.agent, args.opponent, args.seed,
               range(int(first), int(stop)), args.games)
    else:
        fit_reader(args.directory, args.output, args.epochs, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
