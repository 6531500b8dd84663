"""Pool trained networks into one checkpoint (``agents.networks.LogitPool``): its logits are the
weighted mean of theirs, with one forward pass of each and no search. Pooled with the network it
was fitted from, a fit leaves that network's card only where the advantage it learned for another
card is large: its small departures, where its labels are noisiest, are voted down.

    python -m training.pool OUT MEMBER[=WEIGHT[:DISCARD_WEIGHT]] ... [--name NAME]

MEMBER is a checkpoint path or ``champion``; WEIGHT defaults to 1. ``WEIGHT:DISCARD_WEIGHT`` weighs
the member apart on the discards (either may then be 0): ``PLAYER=1:0 THROWER=0:1`` plays as one
network and throws as the other.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from torch import nn

from agents.checkpoint import POLICY_FILE, CheckpointError, load_network, resolve_checkpoint, save_checkpoint
from agents.networks import LogitPool
from agents.registry import network_path

#: a member: (checkpoint path, weight, weight on the discards or None for the same)
Member = tuple[Path, float, float | None]


def parse_member(text: str) -> Member:
    """``PATH``, ``PATH=WEIGHT`` or ``PATH=WEIGHT:DISCARD_WEIGHT`` -> (checkpoint path, weight,
    weight on the discards or None)."""
    path, _, weights = text.rpartition("=") if "=" in text else (text, "", "1")
    play, sep, discard = weights.partition(":")
    values = []
    for raw in (play, discard) if sep else (play,):
        try:
            values.append(float(raw))
        except ValueError:
            raise ValueError(f"member {text!r}: weight {raw!r} is not a number") from None
    if not all(0 <= v < float("inf") for v in values) or (not sep and values[0] == 0):
        raise ValueError(f"member {text!r}: the weight must be positive (with a discard weight, "
                         f"0 or more), got {weights}")
    return network_path(path), values[0], values[1] if sep else None


def _members(path: Path, weight: float, discard: float
             ) -> list[tuple[dict[str, Any], nn.Module, float, float, dict[str, Any]]]:
    """(architecture, network, weight, discard weight, source) of each network in the
    checkpoint ``path``: the one it holds, or a pool's members with the weights shared out as the
    pool shares them."""
    net, meta = load_network(path)
    folder = resolve_checkpoint(path)
    if meta["arch"] != "pool":
        source = {"path": str(path), "name": meta.get("name"), "weight": weight,
                  "discard_weight": discard, "policy_sha256": meta["sha256"].get(POLICY_FILE)}
        return [({"arch": meta["arch"], "arch_kwargs": meta.get("arch_kwargs", {})}, net, weight,
                 discard, source)]
    sources = meta.get("pool")
    if not isinstance(sources, list) or len(sources) != len(net.members):
        raise CheckpointError(f"checkpoint {folder}: its meta.json's 'pool' does not name its "
                              f"{len(net.members)} members")
    thrown = net.discard_weights or net.weights
    return [(spec, member, weight * share, discard * throw_share,
             {**source, "weight": weight * share, "discard_weight": discard * throw_share})
            for spec, member, share, throw_share, source in zip(
                meta["arch_kwargs"]["members"], net.members, net.weights, thrown, sources,
                strict=True)]


def pool_checkpoint(out: Path, members: list[tuple[Path, float] | Member],
                    name: str | None = None, info: dict[str, Any] | None = None) -> Path:
    """Write the pool of ``members`` ((checkpoint, weight) pairs, or (checkpoint, weight,
    discard weight or None); a member that is itself a pool brings its own members, its weights
    shared out as it shares them) to the checkpoint folder ``out``; its ``meta.json`` names each
    network's folder, name, weights and weights' hash."""
    loaded = [entry for path, weight, *rest in members
              for entry in _members(path, weight, weight if not rest or rest[0] is None
                                    else rest[0])]
    features = {bool(spec.get("arch_kwargs", {}).get("features")) for spec, *_ in loaded}
    if len(features) != 1:
        raise CheckpointError("the members read different input rows (some with card features, "
                              "some without): a pool's members must read the same row")
    weights = [weight for _, _, weight, _, _ in loaded]
    discards = [discard for _, _, _, discard, _ in loaded]
    kwargs = {"features": features.pop(), "members": [spec for spec, *_ in loaded],
              "weights": weights, **({"discard_weights": discards} if discards != weights else {})}
    pool = LogitPool(**kwargs)
    for target, (_, net, *_) in zip(pool.members, loaded, strict=True):
        target.load_state_dict(net.state_dict(), strict=True)
    return save_checkpoint(Path(out), pool, "pool", kwargs,
                           {"name": name or Path(out).name,
                            "pool": [source for *_, source in loaded], **(info or {})})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the checkpoint folder to write")
    parser.add_argument("members", nargs="+", help="PATH, PATH=WEIGHT or "
                                                   "PATH=WEIGHT:DISCARD_WEIGHT (PATH: a checkpoint "
                                                   "or champion)")
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
