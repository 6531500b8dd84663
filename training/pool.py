"""Pool trained networks into one checkpoint (``agents.networks.LogitPool``): its logits are the
weighted mean of theirs, with one forward pass of each and no search. Pooled with the network it
was fitted from, a fit leaves that network's card only where the advantage it learned for another
card is large: its small departures, where its labels are noisiest, are voted down.

    python -m training.pool OUT MEMBER[=WEIGHT] MEMBER[=WEIGHT] ... [--name NAME]

MEMBER is a checkpoint path or ``champion``; WEIGHT defaults to 1.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from torch import nn

from agents.checkpoint import POLICY_FILE, CheckpointError, load_network, resolve_checkpoint, save_checkpoint
from agents.networks import LogitPool
from agents.registry import network_path


def parse_member(text: str) -> tuple[Path, float]:
    """``PATH`` or ``PATH=WEIGHT`` -> (checkpoint path, weight)."""
    path, _, weight = text.rpartition("=") if "=" in text else (text, "", "1")
    try:
        value = float(weight)
    except ValueError:
        raise ValueError(f"member {text!r}: weight {weight!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"member {text!r}: the weight must be positive, got {value}")
    return network_path(path), value


def _members(path: Path, weight: float) -> list[tuple[dict[str, Any], nn.Module, float,
                                                      dict[str, Any]]]:
    """(architecture, network, weight, source) of each network in the checkpoint ``path``: the
    one it holds, or a pool's members with ``weight`` shared out as the pool shares it."""
    net, meta = load_network(path)
    folder = resolve_checkpoint(path)
    if meta["arch"] != "pool":
        source = {"path": str(path), "name": meta.get("name"), "weight": weight,
                  "policy_sha256": meta["sha256"].get(POLICY_FILE)}
        return [({"arch": meta["arch"], "arch_kwargs": meta.get("arch_kwargs", {})}, net, weight,
                 source)]
    sources = meta.get("pool")
    if not isinstance(sources, list) or len(sources) != len(net.members):
        raise CheckpointError(f"checkpoint {folder}: its meta.json's 'pool' does not name its "
                              f"{len(net.members)} members")
    return [(spec, member, weight * share, {**source, "weight": weight * share})
            for spec, member, share, source in zip(meta["arch_kwargs"]["members"], net.members,
                                                   net.weights, sources, strict=True)]


def pool_checkpoint(out: Path, members: list[tuple[Path, float]], name: str | None = None,
                    info: dict[str, Any] | None = None) -> Path:
    """Write the pool of ``members`` ((checkpoint, weight) pairs; a member that is itself a pool
    brings its own members, its weight shared out as it shares it) to the checkpoint folder
    ``out``; its ``meta.json`` names each network's folder, name, weight and weights' hash."""
    loaded = [entry for path, weight in members for entry in _members(path, weight)]
    features = {bool(spec.get("arch_kwargs", {}).get("features")) for spec, *_ in loaded}
    if len(features) != 1:
        raise CheckpointError("the members read different input rows (some with card features, "
                              "some without): a pool's members must read the same row")
    kwargs = {"features": features.pop(), "members": [spec for spec, *_ in loaded],
              "weights": [weight for _, _, weight, _ in loaded]}
    pool = LogitPool(**kwargs)
    for target, (_, net, _, _) in zip(pool.members, loaded, strict=True):
        target.load_state_dict(net.state_dict(), strict=True)
    return save_checkpoint(Path(out), pool, "pool", kwargs,
                           {"name": name or Path(out).name,
                            "pool": [source for *_, source in loaded], **(info or {})})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the checkpoint folder to write")
    parser.add_argument("members", nargs="+", help="PATH or PATH=WEIGHT (PATH: a checkpoint or "
                                                   "champion)")
    parser.add_argument("--name", help="the pool's name (default: the folder's)")
    args = parser.parse_args(argv)
    if len(args.members) < 2:
        parser.error("a pool needs at least two members")
    try:
        members = [parse_member(text) for text in args.members]
        folder = pool_checkpoint(args.out, members, args.name)
    except (ValueError, FileNotFoundError) as err:  # CheckpointError included
        parser.exit(2, f"error: {err}\n")
    print(f"pooled {len(members)} networks into {folder}")


if __name__ == "__main__":
    main()
