"""A distillation recording as Ray tasks (``crib train --ray``): one task per chunk.

A chunk is a function of the teacher, the opponent, the seed and its number alone
(``training.algos.distill_recording.record_chunk``), so the chunks a cluster records are the ones a local run
records. Networks travel as in the evaluator (``training.ray_backend``): the checkpoint a
``champion-search`` teacher names (``net=``, else the shipped champion) or a checkpoint-path
opponent is read once on the driver, put in the object store, and written to each node's cache
folder before the task builds its agents. A worker that dies is retried; an error the chunk raises
is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .ray_backend import RETRIES, checkpoint_files, cluster_cpus, connect, materialize

#: teacher, opponent, seed, chunk number, games, opening (its agent and need, or None), player
#: (or None)
Job = tuple[str, str, int, int, int, tuple[str, int] | None, str | None]


def _search_network(spec: str) -> tuple[str, str] | None:
    """(the spec without its net=, the network) for a champion-search spec, else None."""
    from agents.registry import SEARCH_NAME, search_network
    from agents.search import SearchSettings, settings_without_network

    name, _, settings = spec.partition(":")
    if name != SEARCH_NAME:
        return None
    rest = settings_without_network(spec)
    base = f"{name}:{','.join(rest)}" if rest else name
    return base, str(search_network(SearchSettings.parse(settings).net))


def _with_network(spec: str, folder: str) -> str:
    from agents.search import with_network

    return with_network(spec, folder)


def shipped_files(spec: str) -> dict[str, bytes] | None:
    """The checkpoint files an agent spec needs on another machine (None: built from its name)."""
    search = _search_network(spec)
    return checkpoint_files(search[1] if search else spec)


def _on_node(spec: str, files: dict[str, bytes]) -> str:
    """``spec`` naming its shipped checkpoint as written to this node's cache."""
    folder = materialize(files)
    return _with_network(spec, folder) if _search_network(spec) else folder


def _record_shipped(record_chunk: Callable[..., dict[str, np.ndarray]], job: Job,
                    teacher_files: dict[str, bytes] | None,
                    opponent_files: dict[str, bytes] | None,
                    opening_files: dict[str, bytes] | None = None,
                    player_files: dict[str, bytes] | None = None) -> dict[str, np.ndarray]:
    teacher, opponent, seed, number, games, opening, player = job
    if teacher_files is not None:
        teacher = _on_node(teacher, teacher_files)
    if opponent_files is not None:
        opponent = materialize(opponent_files)
    if opening is not None and opening_files is not None:
        opening = (materialize(opening_files), opening[1])
    if player is not None and player_files is not None:
        player = _on_node(player, player_files)
    return record_chunk(teacher, opponent, seed, number, games, opening, player)


def record_on_ray(record_chunk: Callable[..., dict[str, np.ndarray]], jobs: Iterator[Job],
                  address: str, write: Callable[[int, dict[str, np.ndarray]], None],
                  should_stop: Callable[[], bool]) -> None:
    """Record ``jobs`` with ``record_chunk`` (``training.algos.distill_recording``'s) as Ray tasks on the
    cluster at ``address`` (``ray_backend.connect``), a few in flight per CPU, each chunk handed
    to ``write`` as it comes back."""
    import ray

    started = connect(address)
    try:
        task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(
            _record_shipped)
        refs: dict[str, Any] = {}

        def ship(spec: str) -> Any:
            if spec not in refs:
                files = shipped_files(spec)
                refs[spec] = None if files is None else ray.put(files)
            return refs[spec]

        limit = 2 * cluster_cpus()
        running: dict[Any, int] = {}
        while True:
            while not should_stop() and len(running) < limit:
                job = next(jobs, None)
                if job is None:
                    break
                opening = None if job[5] is None else ship(job[5][0])
                player = None if job[6] is None else ship(job[6])
                running[task.remote(record_chunk, job, ship(job[0]), ship(job[1]),
                                    opening, player)] = job[3]
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                write(running.pop(ref), ray.get(ref))
            if should_stop():
                for ref in running:
                    ray.cancel(ref)
                break
    finally:
        if started:
            ray.shutdown()
