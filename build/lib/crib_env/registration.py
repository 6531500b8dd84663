"""Create the environments by id.

* Gymnasium (single-agent): ``gymnasium.make("crib_env.registration:Cribbage-v0", **kwargs)``, or
  ``import crib_env.registration`` once and then ``gymnasium.make("Cribbage-v0")``.
* PettingZoo has no registry; ``make_aec("cribbage_v0", **kwargs)`` is the equivalent.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from .aec import ENV_NAME, env
from .observation import OBSERVATION_VERSION

GYM_ID = f"Cribbage-v{OBSERVATION_VERSION}"

if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="crib_env.single:SingleAgentCribbageEnv",
                       disable_env_checker=False)


def make_aec(env_id: str = ENV_NAME, **kwargs: Any):
    """The wrapped AEC env for ``env_id`` (only ``cribbage_v0`` exists)."""
    if env_id != ENV_NAME:
        raise ValueError(f"unknown environment id {env_id!r}: available is {ENV_NAME!r}")
    return env(**kwargs)
