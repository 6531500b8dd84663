"""Policies that act from (observation, action_mask) only: scripted levels and learned agents."""

from crib_env.kernel_cache import invalidate_stale_kernels

# agents' numba kernels freeze crib_env's tables too: their cache follows both packages' sources
invalidate_stale_kernels("agents", feeds=("crib_env",))

from .base import Agent, RandomAgent, legal_cards  # noqa: E402
from .registry import AGENT_NAMES, make_agent  # noqa: E402

__all__ = ["Agent", "RandomAgent", "legal_cards", "AGENT_NAMES", "make_agent"]
