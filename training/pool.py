"""Pool trained networks into one checkpoint (``agents.networks.LogitPool``): its logits are the
weighted mean of theirs, with one forward pass of each and no search. Pooled with the network it
was fitted from, a fit leaves that network's card only where the advantage it learned for another
card is large: its small departures, where its labels are noisiest, are voted down.

    python -m training.pool OUT MEMBER[=WEIGHT[:DISCARD_WEIGHT[:ENDGAME_WEIGHT]]] ...
                            [--endgame-need POINTS] [--name NAME]

MEMBER is a checkpoint path or ``champion``; WEIGHT defaults to 1. ``WEIGHT:DISCARD_WEIGHT`` weighs
the member apart on the discards (either may then be 0): ``PLAYER=1:0 THROWER=0:1`` plays as one
network and throws as the other. A third weight, given for every member, weighs it on every
decision once either player is within ``--endgame-need`` points of the target (30, where the
board rather than the points decides): ``CHAMPION=1:1:0 FINISHER=0:0:1``.

``--symmetric`` makes every member the mean of itself over the 24 relabelings of the suits
(``CardNet``'s ``symmetric``; no new weights); with it one member is enough:
``python -m training.pool OUT champion --symmetric``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NamedTuple

from torch import nn

from agents.checkpoint import POLICY_FILE, CheckpointError, load_network, resolve_checkpoint, save_checkpoint
from agents.endgame import ENDGAME_NEED
from agents.networks import LogitPool, build_network, reads_features
from agents.registry import network_path


class Weights(NamedTuple):
    """A member's weights: on the play, on the discards, and near the end (None: none apart)."""

    play: float
    discard: float
    endgame: float | None = None


#: a member: (checkpoint path, weight, weight on the discards or None for the same[, weight near
#: the end])
Member = tuple[Path, float, float | None] | tuple[Path, float, float | None, float]


def parse_member(text: str) -> Member:
    """``PATH``, ``PATH=WEIGHT``, ``PATH=WEIGHT:DISCARD_WEIGHT`` or
    ``PATH=WEIGHT:DISCARD_WEIGHT:ENDGAME_WEIGHT`` -> (checkpoint path, weight, weight on the
    discards or None[, weight near the end])."""
    path, _, weights = text.rpartition("=") if "=" in text else (text, "", "1")
    parts = weights.split(":")
    if len(parts) > 3:
        raise ValueError(f"member {text!r}: at most three weights (play, discards, near the "
                         f"end), got {len(parts)}")
    values = []
    for raw in parts:
        try:
            values.append(float(raw))
        except ValueError:
            raise ValueError(f"member {text!r}: weight {raw!r} is not a number") from None
    if not all(0 <= v < float("inf") for v in values) or (len(values) == 1 and values[0] == 0):
        raise ValueError(f"member {text!r}: the weight must be positive (with a discard weight, "
                         f"0 or more), got {weights}")
    return (network_path(path), values[0], values[1] if len(values) > 1 else None,
            *values[2:])


def _members(path: Path, weights: Weights, need: int | None
             ) -> list[tuple[dict[str, Any], nn.Module, Weights, dict[str, Any]]]:
    """(architecture, network, weights, source) of each network in the checkpoint ``path``: the
    one it holds, or a pool's members with the weights shared out as the pool shares them in each
    situation (``need``: the outer pool's endgame need, None without endgame weights)."""
    net, meta = load_network(path)
    folder = resolve_checkpoint(path)

    def source(base: dict[str, Any], w: Weights) -> dict[str, Any]:
        return {**base, "weight": w.play, "discard_weight": w.discard,
                **({} if w.endgame is None else {"endgame_weight": w.endgame})}

    if meta["arch"] != "pool":
        base = {"path": str(path), "name": meta.get("name"),
                "policy_sha256": meta["sha256"].get(POLICY_FILE)}
        return [({"arch": meta["arch"], "arch_kwargs": meta.get("arch_kwargs", {})}, net,
                 weights, source(base, weights))]
    sources = meta.get("pool")
    if not isinstance(sources, list) or len(sources) != len(net.members):
        raise CheckpointError(f"checkpoint {folder}: its meta.json's 'pool' does not name its "
                              f"{len(net.members)} members")
    if net.endgame_weights is not None and (need is None or need != net.endgame_need):
        raise CheckpointError(f"checkpoint {folder} weighs its members apart within "
                              f"{net.endgame_need} points of the end: pool it with endgame "
                              f"weights for every member and --endgame-need {net.endgame_need}")
    if need is not None and net.endgame_weights is None and net.discard_weights is not None:
        raise CheckpointError(f"checkpoint {folder} throws and plays with different weights: near "
                              f"the end it has no one share to pool apart")
    thrown = net.discard_weights or net.weights
    finishing = net.endgame_weights or net.weights
    out = []
    for spec, member, share, throw_share, end_share, base in zip(
            meta["arch_kwargs"]["members"], net.members, net.weights, thrown, finishing, sources,
            strict=True):
        w = Weights(weights.play * share, weights.discard * throw_share,
                    None if weights.endgame is None else weights.endgame * end_share)
        out.append((spec, member, w, source(base, w)))
    return out


def symmetric_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A member's ``{"arch", "arch_kwargs"}`` made the mean over the suits' relabelings; only the
    ``cards`` network has a suit embedding to relabel (``ValueError`` for another)."""
    if spec["arch"] != "cards":
        raise ValueError(f"--symmetric: a {spec['arch']!r} network reads the suits in its input "
                         f"row, not from a suit embedding; only 'cards' networks can be made "
                         f"symmetric")
    return {**spec, "arch_kwargs": {**spec.get("arch_kwargs", {}), "symmetric": True}}


def pool_checkpoint(out: Path, members: list[Member], name: str | None = None,
                    info: dict[str, Any] | None = None, endgame_need: int = ENDGAME_NEED,
                    symmetric: bool = False) -> Path:
    """Write the pool of ``members`` ((checkpoint, weight) pairs, or (checkpoint, weight,
    discard weight or None[, weight near the end]), the third weight given for every member or
    none; a member that is itself a pool brings its own members, its weights shared out as it
    shares them) to the checkpoint folder ``out``; its ``meta.json`` names each network's
    folder, name, weights and weights' hash. ``symmetric``: every member made the mean over the
    suits' relabelings (``symmetric_spec``)."""
    ends = {len(rest) > 1 for _, _, *rest in members}
    if len(ends) > 1:
        raise ValueError("a weight near the end (PATH=W:D:E) must be given for every member or "
                         "for none")
    need = endgame_need if ends == {True} else None
    loaded = [entry for path, weight, *rest in members
              for entry in _members(path, Weights(
                  weight, weight if not rest or rest[0] is None else rest[0],
                  rest[1] if len(rest) > 1 else None), need)]
    features = {reads_features(spec) for spec, *_ in loaded}
    if len(features) != 1:
        raise CheckpointError("the members read different input rows (some with card features, "
                              "some without): a pool's members must read the same row")
    weights = [w.play for _, _, w, _ in loaded]
    discards = [w.discard for _, _, w, _ in loaded]
    specs = [symmetric_spec(spec) if symmetric else spec for spec, *_ in loaded]
    if len(loaded) == 1:  # one network made symmetric: no pool around it
        (_, net, _, source), = loaded
        if not symmetric:
            raise ValueError("a pool needs at least two networks (or symmetric)")
        single = build_network(specs[0]["arch"], **specs[0]["arch_kwargs"])
        single.load_state_dict(net.state_dict(), strict=True)
        return save_checkpoint(Path(out), single, specs[0]["arch"], specs[0]["arch_kwargs"],
                               {"name": name or Path(out).name, "symmetric_of": source,
                                **(info or {})})
    kwargs: dict[str, Any] = {"features": features.pop(), "members": specs, "weights": weights}
    if discards != weights:
        kwargs["discard_weights"] = discards
    if need is not None:
        kwargs.update(endgame_weights=[w.endgame for _, _, w, _ in loaded], endgame_need=need)
    pool = LogitPool(**kwargs)
    for target, (_, net, *_) in zip(pool.members, loaded, strict=True):
        target.load_state_dict(net.state_dict(), strict=True)
    return save_checkpoint(Path(out), pool, "pool", kwargs,
                           {"name": name or Path(out).name,
                            "pool": [source for *_, source in loaded], **(info or {})})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the checkpoint folder to write")
    parser.add_argument("members", nargs="+", help="PATH, PATH=WEIGHT, "
                                                   "PATH=WEIGHT:DISCARD_WEIGHT or "
                                                   "PATH=WEIGHT:DISCARD_WEIGHT:ENDGAME_WEIGHT "
                                                   "(PATH: a checkpoint or champion)")
    parser.add_argument("--endgame-need", type=int, default=ENDGAME_NEED,
                        help="with endgame weights: within this many points of the target "
                             f"(default {ENDGAME_NEED})")
    parser.add_argument("--name", help="the pool's name (default: the folder's)")
    parser.add_argument("--symmetric", action="store_true",
                        help="every member the mean of itself over the 24 relabelings of the "
                             "suits (one member is then enough)")
    args = parser.parse_args(argv)
    if len(args.members) < 2 and not args.symmetric:
        parser.error("a pool needs at least two members (or --symmetric)")
    try:
        members = [parse_member(text) for text in args.members]
        folder = pool_checkpoint(args.out, members, args.name, endgame_need=args.endgame_need,
                                 symmetric=args.symmetric)
    except (ValueError, FileNotFoundError) as err:  # CheckpointError included
        parser.exit(2, f"error: {err}\n")
    made = "made symmetric" if args.symmetric else "pooled"
    print(f"{made}: {len(members)} checkpoint(s) into {folder}")


if __name__ == "__main__":
    main()
