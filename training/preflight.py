"""What a run checks before it writes anything, so that a bad config fails in one line naming
its field instead of in worker tracebacks or at the first evaluation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.checkpoint import check_resume, first_line

from .config import SELF, RunConfig
from .recovery import recover_run


def check_named_agents(cfg: RunConfig) -> None:
    """Load, once, every agent the config names (training opponents, the self-play fallback, the
    evaluation opponents) before anything of the run is written, so that a missing or corrupt
    checkpoint is one line naming its field instead of worker tracebacks or a failure at the
    first evaluation."""
    from agents.registry import make_agent

    named = [(f"opponents[{i}].agent", o.agent) for i, o in enumerate(cfg.opponents)
             if o.agent != SELF]
    named.append(("selfplay.fallback", cfg.selfplay.fallback))
    named += [(f"eval.opponents[{i}]", name) for i, name in enumerate(cfg.eval.opponents)]
    if cfg.algo == "distill":
        from .algos.rollout_teacher import (
            NO_OPENING,
            NO_PLAYER,
            RolloutSettings,
            is_rollout_teacher,
        )

        teacher = cfg.distill.teacher
        if is_rollout_teacher(teacher):  # not an agent: its network is what must load
            if cfg.distill.opening:
                raise ValueError(NO_OPENING)
            if cfg.distill.player:
                raise ValueError(NO_PLAYER)
            try:
                settings = RolloutSettings.parse(teacher)
            except ValueError as err:
                raise ValueError(f"distill.teacher: {err}") from err
            named.append(("distill.teacher's net", settings.net))
            if settings.stand_in is not None:
                named.append(("distill.teacher's opponent", settings.stand_in))
        else:
            named.append(("distill.teacher", teacher))
        if cfg.distill.opening:
            named.append(("distill.opening", cfg.distill.opening))
        if cfg.distill.player:
            named.append(("distill.player", cfg.distill.player))
        if cfg.distill.anchor:
            check_anchor(cfg.distill.anchor, cfg.policy.features)
    for field, spec in named:
        with field_error(field):
            make_agent(spec, seed=0)


@contextmanager
def field_error(field: str) -> Iterator[None]:
    """Turn any error in the block into one ``ValueError`` line naming the config ``field``: a
    bad checkpoint raises many types, and all of them are that field's fault."""
    try:
        yield
    except Exception as err:
        raise ValueError(f"{field}: {first_line(err, type(err).__name__)}") from err


def check_anchor(spec: str, features: bool) -> None:
    """Raise ``ValueError`` naming ``distill.anchor`` when it is not a network that reads the
    fitted policy's input rows (``features`` on or off alike)."""
    from agents.checkpoint import load_network
    from agents.networks import reads_features
    from agents.registry import network_path

    with field_error("distill.anchor"):
        _, meta = load_network(network_path(spec))
    theirs = reads_features(meta)
    if theirs != features:
        raise ValueError(f"distill.anchor: {spec} reads input rows with features: {theirs}, "
                         f"the fitted policy with features: {features}")


def resume_point(run_dir: Path, arch: str, arch_kwargs: dict[str, Any]) -> int | None:
    """The step ``--resume`` continues ``run_dir`` from (its ``latest/``, checked), or None when
    the run was killed before its first save."""
    recover_run(run_dir)
    latest = run_dir / "latest"
    if not latest.exists():
        return None
    check_resume(latest, arch, arch_kwargs)
    return int(json.loads((latest / "meta.json").read_text(encoding="utf-8"))["num_timesteps"])
