"""Search at play time over a policy network (``champion-search``); see ``agents.search.agent``."""

from .agent import (
    ChampionSearchAgent,
    SearchSettings,
    load_search_agent,
    settings_without_network,
    with_network,
)

__all__ = ["ChampionSearchAgent", "SearchSettings", "load_search_agent",
           "settings_without_network", "with_network"]
