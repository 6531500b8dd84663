"""Two-player cribbage for reinforcement learning.

The rules core (``cards``, ``scoring``, ``game``, ``observation``) imports only numpy. The PettingZoo
environment (module ``crib_env.aec``; not ``env.py``, whose module name would shadow the ``env()``
function of the contract) is loaded on first use of ``crib_env.env`` / ``crib_env.raw_env`` so that
the core can be used without gymnasium or pettingzoo installed.
"""

from .kernel_cache import invalidate_stale_kernels

invalidate_stale_kernels("crib_env")  # agents registers its own kernels (agents/__init__.py)

from .cards import card_str, parse_card, parse_cards  # noqa: E402
from .scoring import hand_events, play_events, score_hand, score_play  # noqa: E402

__all__ = ["card_str", "parse_card", "parse_cards", "score_hand", "score_play", "hand_events",
           "play_events", "env", "raw_env", "SingleAgentCribbageEnv"]


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    if name == "SingleAgentCribbageEnv":
        from .single import SingleAgentCribbageEnv

        return SingleAgentCribbageEnv
    raise AttributeError(f"module 'crib_env' has no attribute {name!r}")
