"""Recording the teacher for policy distillation (``training.algos.distill``).

The teacher plays whole games (python engine) against the config's opponents, and every decision it
makes with more than one legal card is kept as (observation, legal mask, card) and, where the
teacher gives them, its value of every legal card. With a ``player`` (``distill.player``) the
player's cards are laid instead and the teacher only labels the player's positions (DAgger): the
learner then learns on the positions its own play reaches, not on the teacher's. Games come in
numbered chunks of ``CHUNK_GAMES``; chunk ``k`` is a function of the seed and ``k`` alone and is
written atomically to its own file, so a killed recording resumes by skipping the chunks on disk,
and a recording folder can be shared by runs that ask for the same one. The chunks are recorded in
this process, in a pool of worker processes (``distill.workers``) or as Ray tasks
(``training.ray_record``); every ``HELD_OUT_EVERY``-th chunk is kept out of training to measure
agreement.
"""

from __future__ import annotations

import ctypes
import io
import json
import multiprocessing
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.files import atomic_write, atomic_write_text
from crib_env.cards import N_CARDS
from crib_env.observation import OBS_SIZE, pack, unpack

from ..eval_plans import derive_seed, game_plan
from ..eval_play import Opening, build_agent, play_game
from ..interrupt import ignore_stop_signals, stop_signals_blocked

CHUNK_GAMES = 25
CHUNK_PATTERN = "chunk_{:05d}.npz"
SPEC_FILE = "recording.json"
#: every this many chunks, one is kept out of training to measure agreement with the teacher
HELD_OUT_EVERY = 20


class RecordingAgent:
    """Plays as ``agent`` (as ``player`` where one is given: ``agent`` then labels its positions)
    and keeps ``agent``'s choice at every decision that had one."""

    def __init__(self, agent: Any, player: Any = None) -> None:
        self.agent = agent
        self.player = player
        self.name = agent.name if player is None else player.name
        # the teacher sees every position of the seat, so it keeps its memory of the deal whichever
        # agent lays the cards
        self.stateless = getattr(agent, "stateless", False) and getattr(player, "stateless", True)
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.cards: list[int] = []
        self.margins: list[np.ndarray] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        card = int(self.agent.act(observation, action_mask))
        if int(np.count_nonzero(action_mask)) > 1:
            self.obs.append(np.asarray(observation, dtype=np.float32).copy())
            self.masks.append(np.asarray(action_mask, dtype=np.int8).copy())
            self.cards.append(card)
            margins = np.full(N_CARDS, np.nan, dtype=np.float32)
            # the expert's simulated pegging margins, or the search's chances to win
            values = getattr(self.agent, "last_values", None)
            if values is None:
                values = getattr(self.agent, "last_margins", {})
            for legal, value in values.items():
                margins[legal] = value
            self.margins.append(margins)
        if self.player is not None:
            return int(self.player.act(observation, action_mask))
        return card

    def reset(self) -> None:
        self.agent.reset()
        if self.player is not None:
            self.player.reset()


def rotation(opponents: Sequence[tuple[str, float]]) -> list[str]:
    """The opponents chunk by chunk: chunk ``k`` meets ``rotation[k % len(rotation)]``, each name
    as many times in a row as its (whole) weight."""
    out = []
    for name, weight in opponents:
        if weight != int(weight):
            raise ValueError(f"opponent {name!r}: weight {weight} is not a whole number "
                             f"(distillation gives each opponent whole chunks in turn)")
        out += [name] * int(weight)
    return out


def record_chunk(teacher: str, opponent: str, seed: int, number: int,
                 games: int = CHUNK_GAMES, opening: tuple[str, int] | None = None,
                 player: str | None = None) -> dict[str, np.ndarray]:
    """The teacher's decisions in the ``games`` games of chunk ``number`` (a rollout teacher's:
    ``rollout_teacher.record_rollout_chunk``). ``opening``: (agent, need): that agent plays both
    seats until a deal starts with either player within ``need`` points of the target, and only
    the rest of each game is recorded (``eval_play.Opening``). ``player``: the agent whose cards
    are laid, the teacher's choice at each of its positions recorded (``RecordingAgent``)."""
    from .rollout_teacher import NO_OPENING, NO_PLAYER, is_rollout_teacher, record_rollout_chunk

    if is_rollout_teacher(teacher):
        if opening is not None:
            raise ValueError(NO_OPENING)
        if player is not None:
            raise ValueError(NO_PLAYER)
        return record_rollout_chunk(teacher, opponent, seed, number, games)
    started = time.perf_counter()
    chunk_seed = derive_seed(seed, "distill", number)
    recorder = RecordingAgent(
        build_agent(teacher, seed=derive_seed(chunk_seed, "teacher")),
        None if player is None else build_agent(player, seed=derive_seed(chunk_seed, "player")))
    rival = build_agent(opponent, seed=derive_seed(chunk_seed, "opponent"))
    start = None if opening is None else Opening(
        build_agent(opening[0], seed=derive_seed(chunk_seed, "opening")), opening[1])
    for index in range(games):
        play_game(recorder, rival, game_plan(chunk_seed, index), opening=start)
    return {"obs": np.asarray(recorder.obs, dtype=np.float32).reshape(-1, OBS_SIZE),
            "masks": np.asarray(recorder.masks, dtype=np.int8).reshape(-1, N_CARDS),
            "cards": np.asarray(recorder.cards, dtype=np.int16),
            "margins": np.asarray(recorder.margins, dtype=np.float32).reshape(-1, N_CARDS),
            "seconds": np.float64(time.perf_counter() - started)}


#: prctl option: the signal the kernel sends a process when its parent dies (Linux)
PR_SET_PDEATHSIG = 1


def _recorder_process() -> None:
    # the run's own process answers a stop (after the chunks in flight); born with the stop
    # signals blocked (_start_chunk)
    ignore_stop_signals()
    # a recorder must not outlive a run that was killed outright (a signal it cannot ignore)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    torch.set_num_threads(1)


def npz_bytes(data: dict[str, np.ndarray]) -> bytes:
    """``data`` as the bytes of a compressed ``.npz`` file (a chunk, written atomically)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **data)
    return buffer.getvalue()


def _check_spec(folder: Path, spec: dict[str, Any]) -> None:
    path = folder / SPEC_FILE
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old != spec:
            raise ValueError(f"distill.recording: {folder} holds a recording of {old}, not {spec}")
    else:
        atomic_write_text(path, json.dumps(spec, indent=2) + "\n")


def record(folder: Path, teacher: str, opponents: Sequence[str], chunks: int, seed: int,
           workers: int = 1, progress: bool = True,
           should_stop: Callable[[], bool] = lambda: False, games: int = CHUNK_GAMES,
           ray: str | None = None, opening: tuple[str, int] | None = None,
           player: str | None = None) -> int:
    """Record chunks ``0..chunks-1`` that are not in ``folder`` yet; returns how many are still
    missing (0 unless ``should_stop`` ended the recording early). ``ray``: record them as Ray
    tasks on that cluster (``training.ray_record``) instead of ``workers`` local processes.
    ``opening``, ``player``: see ``record_chunk``."""
    from tqdm import tqdm

    folder.mkdir(parents=True, exist_ok=True)
    spec = {"teacher": teacher, "opponents": list(opponents), "seed": seed, "chunk_games": games}
    if opening is not None:  # (a recording of whole games keeps the spec it always had)
        spec["opening"] = {"agent": opening[0], "need": opening[1]}
    if player is not None:
        spec["player"] = player
    _check_spec(folder, spec)
    todo = [k for k in range(chunks) if not (folder / CHUNK_PATTERN.format(k)).exists()]
    if not todo:
        return 0
    bar = tqdm(total=len(todo), unit="chunk", disable=not progress, dynamic_ncols=True,
               desc=f"recording {teacher} ({games} games a chunk)")
    jobs = iter([(teacher, opponents[k % len(opponents)], seed, k, games, opening, player)
                 for k in todo])

    def write(number: int, data: dict[str, np.ndarray]) -> None:
        atomic_write(folder / CHUNK_PATTERN.format(number),
                     lambda tmp: tmp.write_bytes(npz_bytes(data)))
        bar.update(1)

    if ray is not None:
        from ..ray_record import record_on_ray

        record_on_ray(record_chunk, jobs, ray, write, should_stop)
    elif workers == 1:  # in this process: no pool to start (the chunks are the same)
        for job in jobs:
            if should_stop():
                break
            write(job[3], record_chunk(*job))
    else:
        _record_in_pool(jobs, workers, write, should_stop)
    bar.close()
    return sum(not (folder / CHUNK_PATTERN.format(k)).exists() for k in range(chunks))


def _record_in_pool(jobs: Any, workers: int, write: Callable[[int, dict[str, np.ndarray]], None],
                    should_stop: Callable[[], bool]) -> None:
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_recorder_process)
    try:
        # a few chunks in flight per worker, each written as soon as it is done: a stop request
        # waits for the chunks being recorded and drops those not started
        running: dict[Future, int] = {}
        told = False  # whether the stop request has been answered
        while True:
            while not should_stop() and len(running) < 2 * workers:
                job = next(jobs, None)
                if job is None:
                    break
                running[_start_chunk(pool, job)] = job[3]
            if not running:
                break
            # a second at most, so a stop request is answered while long chunks are recorded
            done, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in done:
                number = running.pop(future)
                if not future.cancelled():
                    write(number, future.result())
            if should_stop() and not told:
                dropped = sum(future.cancel() for future in running)
                told = True
                if len(running) > dropped:
                    print(f"recording: waiting for the {len(running) - dropped} chunks being "
                          f"recorded (each is written whole; a second signal drops them)",
                          file=sys.stderr, flush=True)
    except BaseException:
        # a second signal (KeyboardInterrupt) or an error: stop now, losing the chunks in flight
        # (a chunk is written whole or not at all), rather than wait minutes for them to finish
        for process in list((pool._processes or {}).values()):  # public only from Python 3.14
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _start_chunk(pool: ProcessPoolExecutor, job: tuple) -> Future:
    """Submit one chunk. ``submit`` may start a worker process, which takes seconds to reach
    ``_recorder_process``."""
    with stop_signals_blocked():
        return pool.submit(record_chunk, *job)


@dataclass
class Decisions:
    """Recorded decisions: observations (packed, ``crib_env.observation.pack``: a quarter of the
    memory of float32), legal masks, the teacher's cards and, where the teacher gave them
    (``ExpertAgent.last_margins``), its value of every legal card (NaN elsewhere); ``margins`` is
    None when some chunk was recorded without them."""

    codes: np.ndarray
    masks: np.ndarray
    cards: np.ndarray
    margins: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.cards)

    def observations(self, rows: np.ndarray | slice) -> np.ndarray:
        """The float32 observations of ``rows``."""
        return unpack(self.codes[rows])

    @property
    def obs(self) -> np.ndarray:
        """Every observation as float32 (four times the packed size: for small sets)."""
        return unpack(self.codes)


def chunk_files(folder: Path) -> dict[int, Path]:
    """The chunks on disk in ``folder``, by number, in order."""
    return {int(path.stem.split("_")[1]): path
            for path in sorted(folder.glob(CHUNK_PATTERN.replace("{:05d}", "*")))}


def recorded_without_margins(folder: Path) -> list[Path]:
    """The chunks in ``folder`` recorded without the teacher's values (before they were kept)."""
    missing = []
    for path in chunk_files(folder).values():
        with np.load(path) as data:
            if "margins" not in data.files:
                missing.append(path)
    return missing


def load_recording(folder: Path, chunks: int) -> tuple[Decisions, Decisions, float]:
    """Chunks ``0..chunks-1`` of ``folder`` as (training, held out, recording seconds)."""
    return load_recordings([(folder, chunks)])


def _chunk_paths(folder: Path, chunks: int) -> list[Path]:
    paths = [folder / CHUNK_PATTERN.format(number) for number in range(chunks)]
    for path in paths:
        if not path.exists():
            raise ValueError(f"distill.recording: {path} is missing: the recording is unfinished")
    return paths


class _Filling:
    """A set of decisions allocated at its final size and filled chunk by chunk, so loading
    needs little more memory than the decisions themselves (no list of parts to join)."""

    def __init__(self, rows: int, valued: bool) -> None:
        self.data = Decisions(np.zeros((rows, OBS_SIZE), np.uint8),
                              np.zeros((rows, N_CARDS), np.int8), np.zeros(rows, np.int16),
                              np.zeros((rows, N_CARDS), np.float32) if valued else None)
        self.filled = 0

    def add(self, chunk: Any) -> None:
        data, cards, codes = self.data, chunk["cards"], pack(chunk["obs"])
        rows = slice(self.filled, self.filled + len(cards))
        if codes.dtype.itemsize > data.codes.dtype.itemsize:  # a target score past 255
            data.codes = data.codes.astype(codes.dtype)
        data.codes[rows], data.masks[rows], data.cards[rows] = codes, chunk["masks"], cards
        if data.margins is not None:
            data.margins[rows] = chunk["margins"]
        self.filled = rows.stop


def finished_chunks(folder: Path) -> int:
    """How many chunks an earlier recording (``distill.also_from``) holds, all of them on disk."""
    numbers = list(chunk_files(folder))
    if not (folder / SPEC_FILE).exists() or not numbers:
        raise ValueError(f"distill.also_from: {folder} holds no recording (a {SPEC_FILE} and "
                         f"its chunks)")
    if len(numbers) != numbers[-1] + 1:
        missing = sorted(set(range(numbers[-1] + 1)) - set(numbers))
        raise ValueError(f"distill.also_from: {folder} lacks chunk {missing[0]}: the recording "
                         f"is unfinished")
    return len(numbers)


#: bytes one decision takes in memory once loaded: its packed observation, mask, card and values
DECISION_BYTES = OBS_SIZE + N_CARDS + 2 + N_CARDS * 4
#: peak memory of a fit's recording, in units of its decisions' own size: loading 3.9M decisions
#: peaked at 1.12 times (the process included); the held-out network inputs come on top
LOAD_FACTOR = 1.5


def available_memory() -> int:
    """Bytes of memory this machine has free for new allocations (Linux ``MemAvailable``; total
    physical memory elsewhere)."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_fits_in_memory(decisions: int) -> None:
    """Raise ``ValueError`` when ``decisions`` would not fit in the memory free now
    (``LOAD_FACTOR`` times their size), naming the settings that learn from fewer."""
    needed = int(LOAD_FACTOR * decisions * DECISION_BYTES)
    free = available_memory()
    if needed > free:
        raise ValueError(f"distill: the recordings hold {decisions:,} decisions, about "
                         f"{needed / 2**30:.1f} GiB to load, and {free / 2**30:.1f} GiB are free; "
                         f"learn from fewer (distill.chunks, distill.also_from, "
                         f"exit.keep_recordings: false)")


def load_recordings(parts: Sequence[tuple[Path, int]]) -> tuple[Decisions, Decisions, float]:
    """Chunks ``0..chunks-1`` of each (folder, chunks), joined as (training, held out, recording
    seconds); every ``HELD_OUT_EVERY``-th chunk of a folder is held out. The values are None
    when some chunk was recorded without them. Raises ``ValueError`` before loading when the
    decisions would not fit in free memory."""
    paths = [(path, number % HELD_OUT_EVERY == 0) for folder, chunks in parts
             for number, path in enumerate(_chunk_paths(folder, chunks))]
    rows = {False: 0, True: 0}
    valued = True
    for path, held in paths:  # sizes first (the small members only), to allocate once
        with np.load(path) as data:
            rows[held] += len(data["cards"])
            valued = valued and "margins" in data.files
    check_fits_in_memory(rows[False] + rows[True])
    sets = {held: _Filling(rows[held], valued) for held in rows}
    seconds = 0.0
    for path, held in paths:
        with np.load(path) as data:
            sets[held].add(data)
            seconds += float(data["seconds"]) if "seconds" in data.files else 0.0
    return sets[False].data, sets[True].data, seconds
