"""Checkpoints: the folder format, reading and writing it, and the checks before one is used.

A checkpoint is a folder holding

* ``policy.safetensors`` - the network's weights (safetensors: plain tensors, no code runs on load);
* ``meta.json`` - plain JSON: the observation-layout version and size, the action count, the
  architecture name and its keyword arguments, the card-feature version, training steps, and the
  SHA-256 of every other file in the folder (so a corrupt or half-written checkpoint is caught).

Training adds ``optimizer.pt`` (the optimizer's state dict: tensors and numbers only, read back
with ``torch.load(weights_only=True)``) and ``rng.json`` (the Python, NumPy and Torch generator
states as plain JSON) for ``crib train --resume``; playing needs neither. Nothing here unpickles
anything.

A checkpoint folder is replaced as a whole (``agents.files.replace_folder``): all its files are
written into a hidden staging folder, then that folder is swapped with the old one in one atomic
step. A reader (or a ``--resume`` after a kill at any moment) therefore sees the old checkpoint or
the new one, never a mix; the hashes in ``meta.json`` catch a folder damaged some other way.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from crib_env.observation import OBS_SIZE, OBSERVATION_VERSION

from .card_features import FEATURES_VERSION
from .files import replace_folder
from .networks import ACTION_N, ARCHITECTURES, WIDENING_INPUTS, build_network

CHECKPOINT_FORMAT = "crib-rl-checkpoint"
CHECKPOINT_FORMAT_VERSION = 1
META_FILE = "meta.json"
POLICY_FILE = "policy.safetensors"
OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.json"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used here: missing, corrupt, or made for another layout."""


def check_finite(state: dict[str, torch.Tensor], where: str) -> None:
    """Refuse (``CheckpointError`` naming the tensor) weights holding NaN or infinity: a hash
    recomputed over broken weights does not make them playable."""
    for name, tensor in state.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{where}: tensor {name!r} holds NaN or infinite values")


# -- reading --


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_checkpoint(path: str | Path) -> Path:
    """The checkpoint folder for ``path``: a checkpoint folder itself, a file inside one, or a run
    folder (its ``best``, else its ``latest``)."""
    path = Path(path)
    if path.is_file() and path.name in (META_FILE, POLICY_FILE):
        path = path.parent
    if (path / META_FILE).exists() or (path / POLICY_FILE).exists():
        return path
    for sub in ("best", "latest"):
        if (path / sub / META_FILE).exists():
            return path / sub
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    raise FileNotFoundError(f"no checkpoint at {path}: expected {META_FILE} and {POLICY_FILE} "
                            f"(or a run folder with best/ or latest/)")


def read_meta(folder: Path) -> dict[str, Any]:
    """``meta.json`` of a checkpoint folder, checked against this build; raises ``CheckpointError``
    saying what does not match."""
    meta_path = folder / META_FILE
    if not meta_path.exists():
        raise FileNotFoundError(f"checkpoint {folder}: {META_FILE} is missing")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"checkpoint {folder}: {META_FILE} is corrupt ({err})") from err
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {folder}: {META_FILE} is not a {CHECKPOINT_FORMAT} "
                              f"file")
    problems = []
    if meta.get("format_version") != CHECKPOINT_FORMAT_VERSION:
        problems.append(f"checkpoint format version {meta.get('format_version')!r}, "
                        f"this build reads {CHECKPOINT_FORMAT_VERSION}")
    if meta.get("observation_version") != OBSERVATION_VERSION:
        problems.append(f"observation layout version {meta.get('observation_version')!r}, "
                        f"this build uses {OBSERVATION_VERSION}")
    if meta.get("obs_size") != OBS_SIZE:
        problems.append(f"observation size {meta.get('obs_size')!r}, this build uses {OBS_SIZE}")
    if meta.get("action_n") != ACTION_N:
        problems.append(f"action space Discrete({meta.get('action_n')!r}), this build uses "
                        f"Discrete({ACTION_N})")
    kwargs = meta.get("arch_kwargs", {})
    if not isinstance(kwargs, dict):
        raise CheckpointError(f"checkpoint {folder}: arch_kwargs in {META_FILE} must be an "
                              f"object, got {kwargs!r}")
    if kwargs.get("features") and meta.get("features_version") != FEATURES_VERSION:
        problems.append(f"card features version {meta.get('features_version')!r}, this build "
                        f"computes version {FEATURES_VERSION}")
    if problems:
        raise CheckpointError(f"checkpoint {folder} does not match this build: "
                              + "; ".join(problems) + ". Retrain it with this version.")
    return meta


def verify_files(folder: Path, meta: dict[str, Any], names: tuple[str, ...]) -> None:
    """Check that each file in ``names`` exists and matches the SHA-256 recorded in ``meta``."""
    hashes = meta.get("sha256")
    if not isinstance(hashes, dict):
        raise CheckpointError(f"checkpoint {folder}: {META_FILE} holds no 'sha256' table of file "
                              f"hashes (got {hashes!r}), so its files cannot be checked")
    for name in names:
        path = folder / name
        if not path.exists():
            raise FileNotFoundError(f"checkpoint {folder}: {name} is missing")
        if name not in hashes:
            raise CheckpointError(f"checkpoint {folder}: {META_FILE} records no hash for {name}")
        if sha256_file(path) != hashes[name]:
            raise CheckpointError(f"checkpoint {folder}: {name} does not match the SHA-256 in "
                                  f"{META_FILE}: the file is corrupt or was half-written")


def load_network(path: str | Path) -> tuple[nn.Module, dict[str, Any]]:
    """Build the network a checkpoint describes and load its weights (safetensors, no pickle)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = resolve_checkpoint(path)
    meta = read_meta(folder)
    verify_files(folder, meta, (POLICY_FILE,))
    try:
        # the sizes are checked before anything is allocated (check_sizes)
        net = build_network(meta["arch"], **meta.get("arch_kwargs", {}))
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {folder}: bad architecture in {META_FILE} ({err})") \
            from err
    try:
        state = load_file(str(folder / POLICY_FILE))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"checkpoint {folder}: {POLICY_FILE} is corrupt ({err})") from err
    check_finite(state, f"checkpoint {folder}: {POLICY_FILE}")
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise CheckpointError(f"checkpoint {folder}: weights do not fit architecture "
                              f"{meta['arch']!r} ({err})") from err
    net.eval()
    return net, meta


# -- writing, and the state a resumed run needs --


def rng_state() -> dict[str, Any]:
    """The global Python, NumPy and Torch generator states as plain JSON values."""
    py = random.getstate()
    # The legacy global generator is the one SB3 draws minibatches from.
    name, keys, pos, has_gauss, gauss = np.random.get_state()  # noqa: NPY002
    return {
        "python": [py[0], list(py[1]), py[2]],
        "numpy": {"name": name, "keys": keys.tolist(), "pos": int(pos),
                  "has_gauss": int(has_gauss), "gauss": float(gauss)},
        "torch": torch.get_rng_state().tolist(),
    }


def _rng_parts(state: Any) -> tuple[tuple, tuple, torch.Tensor]:
    """The Python, NumPy and Torch states of ``rng_state()``'s JSON, as their setters take them."""
    py = state["python"]
    n = state["numpy"]
    legacy = (n["name"], np.array(n["keys"], dtype=np.uint32), n["pos"], n["has_gauss"], n["gauss"])
    return (py[0], tuple(py[1]), py[2]), legacy, torch.tensor(state["torch"], dtype=torch.uint8)


def check_rng_state(state: Any) -> None:
    """Raise ``ValueError`` (or another error of the conversion) unless ``state`` has the shape
    ``rng_state()`` writes; tried on throwaway generators, so the global ones stay as they are."""
    python, legacy, torch_state = _rng_parts(state)
    random.Random().setstate(python)
    np.random.RandomState().set_state(legacy)  # noqa: NPY002
    torch.Generator().set_state(torch_state)


def set_rng_state(state: dict[str, Any]) -> None:
    python, legacy, torch_state = _rng_parts(state)
    random.setstate(python)
    np.random.set_state(legacy)  # noqa: NPY002
    torch.set_rng_state(torch_state)


def save_checkpoint(folder: Path, net: nn.Module, arch: str, arch_kwargs: dict[str, Any],
                    info: dict[str, Any], optimizer: dict[str, Any] | None = None,
                    rng: dict[str, Any] | None = None) -> Path:
    """Write (or replace, as a whole) a checkpoint folder; ``info`` (plain JSON values) is merged
    into ``meta.json``."""
    from safetensors.torch import save_file

    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}

    def fill(staging: Path) -> None:
        files = [POLICY_FILE]
        save_file(state, str(staging / POLICY_FILE))
        if optimizer is not None:
            torch.save(optimizer, staging / OPTIMIZER_FILE)
            files.append(OPTIMIZER_FILE)
        if rng is not None:
            (staging / RNG_FILE).write_text(json.dumps(rng), encoding="utf-8")
            files.append(RNG_FILE)
        meta = {
            "format": CHECKPOINT_FORMAT,
            "format_version": CHECKPOINT_FORMAT_VERSION,
            "observation_version": OBSERVATION_VERSION,
            "obs_size": OBS_SIZE,
            "action_n": ACTION_N,
            "arch": arch,
            "arch_kwargs": arch_kwargs,
            "features_version": FEATURES_VERSION if arch_kwargs.get("features") else None,
            "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **info,
            "sha256": {name: sha256_file(staging / name) for name in files},
        }
        (staging / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n",
                                         encoding="utf-8")

    return replace_folder(Path(folder), fill)


def copy_checkpoint(source: Path, target: Path, names: tuple[str, ...] | None = None) -> None:
    """Copy a checkpoint folder (or only ``names`` of it, ``meta.json`` always), replacing
    ``target`` as a whole."""
    if names is None:
        names = tuple(sorted(p.name for p in source.iterdir()
                             if p.is_file() and p.name != META_FILE and not p.name.startswith(".")))

    def fill(staging: Path) -> None:
        for name in [*names, META_FILE]:
            shutil.copyfile(source / name, staging / name)

    replace_folder(Path(target), fill)


def load_training_state(folder: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(meta, optimizer state dict, rng state) of a checkpoint written with resume state."""
    meta = read_meta(folder)
    verify_files(folder, meta, (POLICY_FILE, OPTIMIZER_FILE, RNG_FILE))
    try:
        optimizer = torch.load(folder / OPTIMIZER_FILE, weights_only=True, map_location="cpu")
    except Exception as err:  # the unpickler raises many types on bad input
        raise CheckpointError(f"checkpoint {folder}: {OPTIMIZER_FILE} is corrupt ({err})") from err
    try:
        rng = json.loads((folder / RNG_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"checkpoint {folder}: {RNG_FILE} is corrupt ({err})") from err
    try:
        check_rng_state(rng)
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, RuntimeError) as err:
        raise CheckpointError(f"checkpoint {folder}: {RNG_FILE} does not hold the Python, NumPy "
                              f"and Torch generator states this build writes ({type(err).__name__}: "
                              f"{first_line(err)})") from err
    return meta, optimizer, rng


def first_line(err: BaseException, empty: str = "no detail") -> str:
    """An error's message cut to its first line (``empty`` when it has none), for one-line
    reports of errors raised deep inside a load."""
    text = str(err).strip()
    return text.splitlines()[0] if text else empty


def _same_network(meta: dict[str, Any], arch: str, arch_kwargs: dict[str, Any],
                  widening: bool = False) -> bool:
    """Whether ``meta`` describes the weights of ``arch`` with ``arch_kwargs`` (defaults filled
    in; ``prior`` is left out: it only sets the initial weights). ``widening``: or those of the
    same network without the inputs ``need``, ``reader`` or ``show`` add, which
    ``agents.networks.widen_into`` loads."""
    theirs = meta.get("arch_kwargs")
    if meta.get("arch") != arch or not isinstance(theirs, dict) or arch not in ARCHITECTURES:
        return False
    cls, _ = ARCHITECTURES[arch]
    defaults = {name: p.default for name, p in inspect.signature(cls).parameters.items()
                if p.default is not inspect.Parameter.empty}

    def full(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in {**defaults, **kwargs}.items() if k != "prior"}

    if widening:  # the inputs ``need``, ``reader`` and ``show`` add may be new to the network
        mine, old = full(arch_kwargs), full(theirs)
        added = [name for name in WIDENING_INPUTS if not old.get(name)]
        return {k: v for k, v in old.items() if k not in added} == \
            {k: v for k, v in mine.items() if k not in added}
    return full(theirs) == full(arch_kwargs)


def check_init_from(path: str | Path, arch: str, arch_kwargs: dict[str, Any],
                    field: str = "init_from") -> Path:
    """The checkpoint folder ``init_from`` (or the config ``field`` given) names, checked before
    any work: its files match their hashes and it holds the config's network (only the weights
    carry over). Raises ``CheckpointError`` or ``FileNotFoundError`` in one line naming the
    field."""
    try:
        folder = resolve_checkpoint(path)
        meta = read_meta(folder)
        verify_files(folder, meta, (POLICY_FILE,))
    except (CheckpointError, FileNotFoundError) as err:
        raise type(err)(f"{field}: {err}") from err
    if meta.get("arch") == "pool" and arch != "pool":
        raise CheckpointError(
            f"{field}: {folder} is a pool of networks (its logits the mean of theirs), whose "
            f"weights no one network can take: name one of its members (its {META_FILE} lists "
            f"them under 'pool')")
    if not _same_network(meta, arch, arch_kwargs, widening=True):
        raise CheckpointError(
            f"{field}: {folder} holds a {meta.get('arch')!r} network with "
            f"{meta.get('arch_kwargs')}, but policy asks for {arch!r} with {arch_kwargs}: "
            f"{field} needs the same architecture and sizes (policy.need, policy.reader and "
            f"policy.show may be added)")
    return folder


def check_resume(folder: Path, arch: str, arch_kwargs: dict[str, Any]) -> None:
    """Refuse, before anything of the run is written, a ``--resume`` from ``folder`` that cannot
    continue: files that do not check out, no step count, or another network than the config's."""
    meta, _, _ = load_training_state(folder)
    training = meta.get("training")
    if not isinstance(training, dict) or not isinstance(training.get("num_timesteps"), int) \
            or not isinstance(training.get("n_updates"), int):
        raise CheckpointError(f"--resume: checkpoint {folder}: {META_FILE} has no training state "
                              f"(training.num_timesteps and training.n_updates)")
    if meta.get("arch") != arch or meta.get("arch_kwargs") != arch_kwargs:
        raise ValueError(f"--resume: {folder} holds a {meta.get('arch')!r} network with "
                         f"{meta.get('arch_kwargs')}, the config asks for {arch!r} with "
                         f"{arch_kwargs}")
