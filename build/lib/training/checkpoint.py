"""Writing and resuming checkpoints (the folder format is described in ``agents.learned``).

A checkpoint folder is replaced as a whole (``training.files.replace_folder``): all its files are
written into a hidden staging folder, then that folder is swapped with the old one in one atomic
step. A reader (or a ``--resume`` after a kill at any moment) therefore sees the old checkpoint or
the new one, never a mix; ``meta.json`` still records the SHA-256 of the other files, so a folder
damaged some other way is reported instead of loaded.

For ``--resume`` a checkpoint also holds ``optimizer.pt`` (the optimizer's state dict: tensors and
numbers only, read back with ``torch.load(weights_only=True)``) and ``rng.json`` (the Python, NumPy
and Torch generator states as plain JSON).
"""

from __future__ import annotations

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

from agents.card_features import FEATURES_VERSION
from agents.learned import (
    ACTION_N,
    ARCHITECTURES,
    CHECKPOINT_FORMAT,
    CHECKPOINT_FORMAT_VERSION,
    META_FILE,
    POLICY_FILE,
    CheckpointError,
    read_meta,
    resolve_checkpoint,
    sha256_file,
    verify_files,
)
from crib_env.observation import OBS_SIZE, OBSERVATION_VERSION

from .files import replace_folder

OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.json"


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
                              f"{_first_line(err)})") from err
    return meta, optimizer, rng


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else "no detail"


def _same_network(meta: dict[str, Any], arch: str, arch_kwargs: dict[str, Any]) -> bool:
    """Whether ``meta`` describes the weights of ``arch`` with ``arch_kwargs`` (defaults filled
    in; ``prior`` is left out: it only sets the initial weights)."""
    theirs = meta.get("arch_kwargs")
    if meta.get("arch") != arch or not isinstance(theirs, dict) or arch not in ARCHITECTURES:
        return False
    cls, _ = ARCHITECTURES[arch]
    defaults = {name: p.default for name, p in inspect.signature(cls).parameters.items()
                if p.default is not inspect.Parameter.empty}

    def full(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in {**defaults, **kwargs}.items() if k != "prior"}

    return full(theirs) == full(arch_kwargs)


def check_init_from(path: str | Path, arch: str, arch_kwargs: dict[str, Any]) -> Path:
    """The checkpoint folder ``init_from`` names, checked before any work: its files match their
    hashes and it holds the config's network (only the weights carry over). Raises
    ``CheckpointError`` or ``FileNotFoundError`` in one line naming ``init_from``."""
    try:
        folder = resolve_checkpoint(path)
        meta = read_meta(folder)
        verify_files(folder, meta, (POLICY_FILE,))
    except (CheckpointError, FileNotFoundError) as err:
        raise type(err)(f"init_from: {err}") from err
    if not _same_network(meta, arch, arch_kwargs):
        raise CheckpointError(
            f"init_from: {folder} holds a {meta.get('arch')!r} network with "
            f"{meta.get('arch_kwargs')}, but policy asks for {arch!r} with {arch_kwargs}: "
            f"init_from needs the same architecture and sizes")
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
