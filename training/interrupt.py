"""Stopping ``crib train`` on SIGINT (Ctrl-C) or SIGTERM (what a scheduler sends) without losing work.

The first signal only records the request; the trainer notices it at the next step, saves
``latest/`` and ``summary.json`` and raises ``TrainingInterrupted``, which the CLI turns into exit
status 128 + signal (130 for SIGINT, 143 for SIGTERM, what a shell reports for a process the
signal ended). A second signal stops at once, losing the steps since the last save.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

#: the signals that stop a run: Ctrl-C, and what a scheduler sends
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_signals_blocked() -> Iterator[None]:
    """Start worker processes inside this: they are born with the stop signals blocked, so one sent
    while they import cannot kill them. Blocked, not ignored, in this process: a signal sent
    meanwhile is delivered here on the way out."""
    # the first start of multiprocessing's resource tracker unblocks both signals in this thread
    # (CPython blocks them around it, then unblocks rather than restores): start it first
    resource_tracker.ensure_running()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def ignore_stop_signals() -> None:
    """In a worker process: the run decides when to stop and closes its workers itself. A signal
    that arrived while they were blocked (``stop_signals_blocked``) is dropped here."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class TrainingInterrupted(Exception):
    """A run stopped by SIGINT or SIGTERM after saving ``latest/`` and ``summary.json``."""

    def __init__(self, signum: int, run_dir: Path, steps: int) -> None:
        self.signum = signum
        self.run_dir = run_dir
        self.steps = steps
        self.exit_code = 128 + signum  # what a shell reports for a process the signal ended
        super().__init__(f"stopped by {signal.Signals(signum).name} at step {steps:,}")


class StopOnSignal:
    """While active (main thread only), the first SIGINT or SIGTERM only records the request (the
    trainer stops at the next step and saves); a second one stops at once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self.signum is not None:
            _say(f"\n{name} again: stopping now, without saving\n")
            signal.signal(signum, signal.SIG_DFL)
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            os.kill(os.getpid(), signum)
            return
        self.signum = signum
        _say(f"\n{name}: stopping after the current step and saving latest/ (send {name} again "
             f"to stop at once and lose the steps since the last save)\n")


def _say(text: str) -> None:
    # os.write, not print: a signal handler may run while the main thread is inside a print
    os.write(sys.stderr.fileno(), text.encode())
