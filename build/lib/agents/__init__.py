"""Policies that act from (observation, action_mask) only: scripted levels and learned agents."""

from .base import Agent, RandomAgent, legal_cards
from .registry import AGENT_NAMES, make_agent

__all__ = ["Agent", "RandomAgent", "legal_cards", "AGENT_NAMES", "make_agent"]
