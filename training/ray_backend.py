"""Ray as an executor for the evaluator's blocks of games (``crib evaluate/tournament --ray``).

``RayPool`` is a ``concurrent.futures.Executor``: ``training.evaluate.evaluate(..., pool=...)`` and
the tournament hand it the same blocks they hand a local process pool, and every block is a Ray
task. A block's games depend only on the seed and the block number, never on which worker plays it,
so the report is the one a local run gives for the same seed.

* Checkpoints travel through Ray's object store, not shared paths: each checkpoint an agent spec
  names is read once on the driver (its ``meta.json`` and ``policy.safetensors`` as bytes),
  ``ray.put`` once per pool, and written to a per-node cache folder keyed by the bytes' hash
  before the worker loads it as usual (with the same SHA-256 checks).
* A worker process that dies mid-block (killed, out of memory, node lost) is retried by Ray
  (``max_retries``); an error raised by the block itself (a bad checkpoint, an illegal move) is not,
  and reaches the caller as the ``ValueError`` it was.
* Ray is optional (``pip install -e .[ray]``). Nothing imports it until a pool is made, and asking
  for Ray without it installed raises ``RayUnavailableError`` (a ``ValueError``) saying how to
  install it.

``address``: ``"local"`` starts a Ray on this machine with ``num_cpus`` CPUs (stopped again when
the pool shuts down), ``"auto"`` joins the cluster this machine belongs to (``ray start``), and
anything else is a cluster address (``HOST:6379`` or ``ray://HOST:10001``). If Ray is already
initialised in this process (a test, a notebook) the pool uses it as it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import socket
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

LOCAL = "local"  # the --ray value that starts a Ray on this machine
INSTALL_HINT = "pip install -e '.[ray]'  (or: pip install -c constraints.txt 'ray[tune]==2.60.0')"
SCRIPTED = ("random", "greedy", "standard", "expert")  # built on the worker from the name alone
RETRIES = 3  # Ray's default for tasks, stated here because the report relies on it


class RayUnavailableError(ValueError):
    """``--ray`` was asked for but Ray is not installed."""


def require_ray() -> Any:
    """The ``ray`` module, or ``RayUnavailableError`` with the install command."""
    if importlib.util.find_spec("ray") is None:
        raise RayUnavailableError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}")
    import ray

    return ray


def connect(address: str = LOCAL, num_cpus: int | None = None) -> bool:
    """Initialise Ray for this process; returns True if this call started it (so the caller
    should shut it down), False if Ray was already initialised."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"--ray address must be 'local', 'auto' or HOST:PORT, got {address!r}")
    # no dashboard (its packages are not part of the extra), and only Ray's warnings
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING",
                               "log_to_driver": True}
    if address == LOCAL:
        ray.init(num_cpus=num_cpus or os.cpu_count(), **options)
        return True
    if address != "auto":
        check_reachable(address)  # ray.init would retry an address that never answers for minutes
    try:
        ray.init(address=address, **options)
    except ConnectionError as err:
        raise ValueError(f"--ray {address}: cannot join a Ray cluster there ({err}); start one "
                         f"with 'ray start --head' or leave the address out for a local "
                         f"Ray") from err
    return True


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise ``ValueError`` unless something accepts connections at ``HOST:PORT`` (or
    ``ray://HOST:PORT``)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--ray {address!r}: expected 'auto', HOST:PORT or ray://HOST:PORT "
                         f"(or no address for a local Ray)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ValueError(f"--ray {address}: nothing answers there ({err}); is the head node "
                         f"started ('ray start --head') and the address the one it printed?") \
            from None


def cluster_cpus() -> int:
    """CPUs the connected Ray cluster offers (at least 1)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# -- checkpoints through the object store --

def checkpoint_files(spec: str) -> dict[str, bytes] | None:
    """The files a worker needs to load the checkpoint ``spec`` names, as bytes; None for a
    scripted agent (built from its name on the worker)."""
    from agents.checkpoint import META_FILE, POLICY_FILE, resolve_checkpoint
    from agents.registry import network_path

    name = spec.strip()
    if name in SCRIPTED:
        return None
    folder = resolve_checkpoint(network_path(name))
    return {file: (folder / file).read_bytes() for file in (META_FILE, POLICY_FILE)}


def materialize(files: dict[str, bytes]) -> str:
    """Write shipped checkpoint files to this node's cache folder (once per content) and return
    the folder, which ``agents.registry.make_agent`` loads like any checkpoint."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    folder = Path(tempfile.gettempdir()) / "crib-ray-checkpoints" / digest.hexdigest()[:32]
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        # Several workers of a node may get here at once: each writes its own folder and renames
        # it into place; a loser of the race just drops its copy.
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".staging-"))
        for name, data in files.items():
            (staging / name).write_bytes(data)
        try:
            staging.rename(folder)
        except OSError:
            for path in staging.iterdir():
                path.unlink()
            staging.rmdir()
    return str(folder)


def _run_shipped(fn: Callable[[Any], Any], block: Any, agent_files: dict[str, bytes] | None,
                 opponent_files: dict[str, bytes] | None) -> Any:
    """The Ray task: point the block's checkpoint specs at local copies, then run it. Ray passes
    the checkpoint bytes in already fetched from the object store (top-level arguments)."""
    changes = {}
    if agent_files is not None:
        changes["agent"] = materialize(agent_files)
    if opponent_files is not None:
        changes["opponent"] = materialize(opponent_files)
    return fn(dataclasses.replace(block, **changes) if changes else block)


class RayPool(Executor):
    """Runs ``evaluate``'s blocks as Ray tasks; see the module docstring.

    Ray is joined on the first ``submit``, so bad arguments are reported before the few seconds a
    Ray start takes. ``workers`` is what a report records: the cluster's CPUs once connected.
    """

    def __init__(self, address: str = LOCAL, num_cpus: int | None = None,
                 retries: int = RETRIES) -> None:
        require_ray()
        self.address = address
        self.num_cpus = num_cpus
        self.retries = retries
        self._started = False
        self._connected = False
        self._task = None
        self._refs: dict[str, Any] = {}  # spec -> ObjectRef of its checkpoint files (or None)
        self._lock = threading.Lock()  # a tournament submits from one thread per pairing

    def _connect(self) -> None:
        import ray

        self._started = connect(self.address, self.num_cpus)
        self._connected = True
        # retry_exceptions=False: only a lost worker is retried, never the block's own error.
        self._task = ray.remote(num_cpus=1, max_retries=self.retries,
                                retry_exceptions=False)(_run_shipped)

    @property
    def workers(self) -> int:
        if not self._connected:
            self._connect()
        return cluster_cpus()

    def _ship(self, ref: Any) -> Any:
        if not isinstance(ref, str):
            return None  # an Agent object travels pickled inside the block
        with self._lock:
            if ref not in self._refs:
                import ray

                files = checkpoint_files(ref)
                self._refs[ref] = None if files is None else ray.put(files)
            return self._refs[ref]

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        if kwargs or len(args) != 1 or not dataclasses.is_dataclass(args[0]):
            raise TypeError("RayPool runs the evaluator's blocks: submit(fn, block)")
        with self._lock:
            if not self._connected:
                self._connect()
        block = args[0]
        return self._task.remote(fn, block, self._ship(block.agent),
                                 self._ship(block.opponent)).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = False
        self._connected = False
        self._refs.clear()


__all__ = ["LOCAL", "RETRIES", "RayPool", "RayUnavailableError", "check_reachable",
           "checkpoint_files", "connect", "materialize", "require_ray"]
