"""Policy distillation: a network learns to choose the card a search agent chooses.

The expert decides each card with hundreds of simulated deals (milliseconds per decision); a
network that imitates it decides in microseconds, can be trained further, and plays in batches.

Two steps, each restartable:

* ``record``: the teacher plays whole games (python engine) against a rotation of opponents and
  every decision it makes with more than one legal card is stored as (observation, legal mask,
  card). Games come in numbered chunks, each written atomically to its own file and derived from
  the seed and its number alone, so a killed recording resumes by skipping the chunks on disk and
  several processes can share the work (``--shard i/n``).
* ``fit``: cross-entropy of the network's legal-card logits against the teacher's card, over all
  recorded chunks (a fixed share held out to measure agreement), saved as an ordinary checkpoint
  that ``LearnedAgent`` plays.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.learned import build_network, network_input_batch
from crib_env.cards import N_CARDS
from crib_env.observation import OBS_SIZE
from training.checkpoint import save_checkpoint
from training.evaluate import build_agent, derive_seed, game_plan, play_game
from training.files import atomic_write, atomic_write_text

CHUNK_GAMES = 25
CHUNK_PATTERN = "chunk_{:05d}.npz"
#: share of the decisions (by chunk) kept out of training to measure agreement with the teacher
HELD_OUT_EVERY = 20


class RecordingAgent:
    """Plays as ``agent`` and keeps every decision that had a choice."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = agent.name
        self.stateless = getattr(agent, "stateless", False)
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.cards: list[int] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        card = int(self.agent.act(observation, action_mask))
        if int(np.count_nonzero(action_mask)) > 1:
            self.obs.append(np.asarray(observation, dtype=np.float32).copy())
            self.masks.append(np.asarray(action_mask, dtype=np.int8).copy())
            self.cards.append(card)
        return card

    def reset(self) -> None:
        self.agent.reset()


def record_chunk(teacher: str, opponent: str, seed: int, number: int) -> dict[str, np.ndarray]:
    """The teacher's decisions in the ``CHUNK_GAMES`` games of chunk ``number``."""
    chunk_seed = derive_seed(seed, "distill", number)
    recorder = RecordingAgent(build_agent(teacher, seed=derive_seed(chunk_seed, "teacher")))
    rival = build_agent(opponent, seed=derive_seed(chunk_seed, "opponent"))
    for index in range(CHUNK_GAMES):
        play_game(recorder, rival, game_plan(chunk_seed, index))
    return {"obs": np.asarray(recorder.obs, dtype=np.float32).reshape(-1, OBS_SIZE),
            "masks": np.asarray(recorder.masks, dtype=np.int8).reshape(-1, N_CARDS),
            "cards": np.asarray(recorder.cards, dtype=np.int16)}


def record(out: Path, teacher: str, opponents: Sequence[str], chunks: int, seed: int,
           shard: tuple[int, int] = (0, 1)) -> None:
    """Record chunks ``0..chunks-1`` (those of this shard) that are not on disk yet."""
    out.mkdir(parents=True, exist_ok=True)
    spec = {"teacher": teacher, "opponents": list(opponents), "seed": seed,
            "chunk_games": CHUNK_GAMES}
    spec_file = out / "recording.json"
    if spec_file.exists():
        old = json.loads(spec_file.read_text(encoding="utf-8"))
        if old != spec:
            raise SystemExit(f"error: {out} holds a recording of {old}, not {spec}")
    else:
        atomic_write_text(spec_file, json.dumps(spec, indent=2) + "\n")
    index, count = shard
    todo = [k for k in range(chunks) if k % count == index
            and not (out / CHUNK_PATTERN.format(k)).exists()]
    start = time.perf_counter()
    decisions = 0
    for done, number in enumerate(todo, 1):
        data = record_chunk(teacher, opponents[number % len(opponents)], seed, number)
        atomic_write(out / CHUNK_PATTERN.format(number),
                     lambda tmp: tmp.write_bytes(_npz_bytes(data)))
        decisions += len(data["cards"])
        rate = decisions / (time.perf_counter() - start)
        print(f"chunk {number}: {len(data['cards'])} decisions ({done}/{len(todo)} of this "
              f"shard, {rate:.0f} decisions/s)", flush=True)


def _npz_bytes(data: dict[str, np.ndarray]) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **data)
    return buffer.getvalue()


def load_chunks(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """All recorded decisions of ``folder``, split into (train, held out) by chunk number."""
    parts: dict[bool, list[dict[str, np.ndarray]]] = {False: [], True: []}
    files = sorted(folder.glob("chunk_*.npz"))
    if not files:
        raise SystemExit(f"error: {folder} holds no recorded chunks (run `record` first)")
    for path in files:
        number = int(path.stem.split("_")[1])
        with np.load(path) as data:
            parts[number % HELD_OUT_EVERY == 0].append({k: data[k] for k in data.files})

    def join(items: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {k: np.concatenate([item[k] for item in items]) for k in ("obs", "masks", "cards")}

    return join(parts[False]), join(parts[True])


def _legal_logits(net: nn.Module, rows: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return net(rows)[:, :N_CARDS].masked_fill(masks == 0, -1e9)


def fit(data: Path, output: Path, arch_kwargs: dict[str, Any], epochs: int, lr: float,
        batch_size: int, seed: int, threads: int = 1) -> dict[str, Any]:
    """Train a ``cards`` network on the recording in ``data`` and save it to ``output``."""
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    train, held = load_chunks(data)
    features = bool(arch_kwargs.get("features"))
    x_train = torch.from_numpy(network_input_batch(train["obs"], train["masks"], features))
    m_train = torch.from_numpy(train["masks"])
    y_train = torch.from_numpy(train["cards"].astype(np.int64))
    x_held = torch.from_numpy(network_input_batch(held["obs"], held["masks"], features))
    m_held = torch.from_numpy(held["masks"])
    y_held = torch.from_numpy(held["cards"].astype(np.int64))
    print(f"{len(y_train)} training decisions, {len(y_held)} held out", flush=True)
    net = build_network("cards", **arch_kwargs)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=epochs * -(-len(y_train) // batch_size))
    generator = torch.Generator().manual_seed(seed)
    history = []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        net.train()
        order = torch.randperm(len(y_train), generator=generator)
        total = 0.0
        for first in range(0, len(order), batch_size):
            rows = order[first:first + batch_size]
            loss = nn.functional.cross_entropy(
                _legal_logits(net, x_train[rows], m_train[rows]), y_train[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss.detach()) * len(rows)
        net.eval()
        with torch.inference_mode():
            held_logits = _legal_logits(net, x_held, m_held)
            held_loss = float(nn.functional.cross_entropy(held_logits, y_held))
            agree = float((held_logits.argmax(1) == y_held).float().mean())
        history.append({"epoch": epoch, "train_loss": total / len(y_train),
                        "held_loss": held_loss, "held_agreement": agree,
                        "wall_seconds": round(time.perf_counter() - start, 1)})
        print(json.dumps(history[-1]), flush=True)
    spec = json.loads((data / "recording.json").read_text(encoding="utf-8"))
    info = {"name": output.name, "algo": "distill", "distill": {
        **spec, "decisions": len(y_train), "held_out": len(y_held), "epochs": epochs,
        "learning_rate": lr, "batch_size": batch_size, "seed": seed, "history": history}}
    save_checkpoint(output, net, "cards", arch_kwargs, info)
    return history[-1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.distill", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the teacher's decisions")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--teacher", default="expert")
    rec.add_argument("--opponents", default="standard,greedy,expert")
    rec.add_argument("--chunks", type=int, required=True)
    rec.add_argument("--seed", type=int, default=0)
    rec.add_argument("--shard", default="0/1", help="I/N: record chunks with number %% N == I")
    fitp = sub.add_parser("fit", help="train a network to choose the teacher's cards")
    fitp.add_argument("--data", type=Path, required=True)
    fitp.add_argument("--output", type=Path, required=True)
    fitp.add_argument("--hidden", type=int, default=128)
    fitp.add_argument("--context", type=int, default=128)
    fitp.add_argument("--embed", type=int, default=16)
    fitp.add_argument("--epochs", type=int, default=10)
    fitp.add_argument("--lr", type=float, default=1e-3)
    fitp.add_argument("--batch-size", type=int, default=512)
    fitp.add_argument("--seed", type=int, default=0)
    fitp.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "record":
        index, _, count = args.shard.partition("/")
        shard = (int(index), int(count or 1))
        if not 0 <= shard[0] < shard[1]:
            parser.error(f"--shard: got {args.shard!r}; expected I/N with 0 <= I < N")
        opponents = [name.strip() for name in args.opponents.split(",") if name.strip()]
        for name in [args.teacher, *opponents]:
            build_agent(name, seed=0)  # a bad name fails here, before any game is played
        record(args.out, args.teacher, opponents, args.chunks, args.seed, shard)
    else:
        fit(args.data, args.output, {"features": True, "prior": False, "hidden": args.hidden,
                                     "context": args.context, "embed": args.embed},
            args.epochs, args.lr, args.batch_size, args.seed, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
