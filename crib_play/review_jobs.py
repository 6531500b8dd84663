"""Game reviews computed in the background for ``crib serve`` (``review.ReviewSettings``).

``ReviewJobs`` runs reviews on ``limits.REVIEW_WORKERS`` thread(s) of its own, never on the threads
that serve moves or analyses. A job is known by a key: ``("game", id)`` for a game of the store
(queued when the game ends; the finished review is handed to ``on_done``, which keeps it with the
game) or ``("record", digest)`` for a recorded game a browser sent (kept here, the newest
``limits.REVIEWS_KEPT``). At most ``limits.REVIEW_QUEUE`` jobs wait (503 past it) and at most
``limits.MAX_REVIEWS_PER_CLIENT`` are one client's (429 past it). A job that fails keeps its
reason, said to whoever asks for it.
"""

from __future__ import annotations

import hashlib
import json
import queue as queues
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException

from . import limits
from .review import ReviewSettings

Key = tuple[str, str]


def record_key(record: dict[str, Any]) -> Key:
    """The key of a recorded game's review: the SHA-256 of the record's canonical JSON."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return "record", hashlib.sha256(text.encode()).hexdigest()[:32]


class ReviewJobs:
    """Reviews waiting, running, failed, and (for recorded games) done; thread-safe."""

    def __init__(self, settings: ReviewSettings | None = None, eager: bool = False,
                 workers: int = limits.REVIEW_WORKERS, queue: int = limits.REVIEW_QUEUE,
                 per_client: int = limits.MAX_REVIEWS_PER_CLIENT,
                 kept: int = limits.REVIEWS_KEPT) -> None:
        """``eager``: review every game of the store as it ends (``crib serve``), not only when
        its review is asked for."""
        self.settings = settings or ReviewSettings()
        self.eager = eager
        self.queue, self.per_client, self.kept = queue, per_client, kept
        self.workers = workers
        self._jobs: queues.Queue = queues.Queue()
        self._lock = threading.Condition()
        self._threads: list[threading.Thread] = []  # started with the first job
        self._pending: dict[Key, str] = {}  # key -> client
        self._failed: OrderedDict[Key, str] = OrderedDict()
        self._done: OrderedDict[Key, dict[str, Any]] = OrderedDict()  # recorded games' reviews

    def submit(self, key: Key, record: dict[str, Any], client: str,
               on_done: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Queue the review of ``record`` (nothing if it is queued or done already). 503 when
        ``queue`` jobs wait, 429 when ``client`` has ``per_client`` of them."""
        with self._lock:
            if key in self._pending or key in self._done:
                return
            if len(self._pending) >= self.queue:
                raise HTTPException(503, f"busy: {len(self._pending)} game reviews waiting "
                                         f"(REVIEW_QUEUE {self.queue}); try again shortly")
            mine = sum(1 for c in self._pending.values() if c == client)
            if mine >= self.per_client:
                raise HTTPException(429, f"{mine} of your game reviews are waiting, the most one "
                                         f"player may have (MAX_REVIEWS_PER_CLIENT "
                                         f"{self.per_client}); wait for one")
            self._pending[key] = client
            self._failed.pop(key, None)
            while len(self._threads) < self.workers:  # daemons: a review never holds up the exit
                thread = threading.Thread(target=self._work, name="review", daemon=True)
                thread.start()
                self._threads.append(thread)
        self._jobs.put((key, record, on_done))

    def _work(self) -> None:
        while True:
            self._run(*self._jobs.get())

    def _run(self, key: Key, record: dict[str, Any],
             on_done: Callable[[dict[str, Any]], None] | None) -> None:
        try:
            review = self.settings.review(record)
            if on_done is not None:
                on_done(review)
        except Exception as err:  # noqa: BLE001 - said to whoever asks for this review
            with self._lock:
                self._failed[key] = limits.clip(f"{type(err).__name__}: {err}", 4 * limits.MAX_ECHO)
                while len(self._failed) > self.kept:
                    self._failed.popitem(last=False)
                self._pending.pop(key, None)
                self._lock.notify_all()
            return
        with self._lock:
            if on_done is None:
                self._done[key] = review
                while len(self._done) > self.kept:
                    self._done.popitem(last=False)
            self._pending.pop(key, None)
            self._lock.notify_all()

    def state(self, key: Key) -> tuple[str, Any]:
        """("done", review) for a recorded game's review kept here, ("computing", None),
        ("failed", reason), or ("none", None)."""
        with self._lock:
            if key in self._done:
                return "done", self._done[key]
            if key in self._pending:
                return "computing", None
            if key in self._failed:
                return "failed", self._failed[key]
            return "none", None

    def wait(self, timeout: float | None = None) -> bool:
        """Until no review waits or runs (for tests and tools); False if ``timeout`` came first."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._pending, timeout)
