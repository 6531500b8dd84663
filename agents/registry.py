"""Resolve agent specs for the CLI: a scripted level's name, ``champion``, or a checkpoint path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .base import Agent, RandomAgent
from .renamed import RENAMED_PREFIX, SuitRenamedAgent

#: the names `crib evaluate --agent/--opponent` accepts (DESIGN.md contract), besides a path
AGENT_NAMES = ("random", "greedy", "standard", "expert", "champion", "champion-search")
#: the search agent's name; its settings may follow a colon (``champion-search:sims=64``)
SEARCH_NAME = "champion-search"
#: the checkpoints shipped with the package (package data of ``agents``, so they are found where the
#: package is installed, not beside a source tree); runs are written to ``checkpoints/`` instead
SHIPPED_CHECKPOINTS = Path(str(resources.files(__package__) / "checkpoints"))
CHAMPION_PATH = SHIPPED_CHECKPOINTS / "champion"
#: the last single network shipped as the champion (the champion is now a pool with it in):
#: expert iteration starts from it unless ``exit.start`` names another
PREVIOUS_CHAMPION_PATH = SHIPPED_CHECKPOINTS / "exit_default_gen3"
#: the network ``champion-search`` searches with unless ``net=`` names another: the expert
#: distilled (the champion before expert iteration). The search uses it above all as its model of
#: the opponent, and it predicts the expert's cards best of the shipped networks, so the search
#: over it beats the search over the stronger players (56.0% to 54.6% over exit_default_gen3)
SEARCH_NETWORK_PATH = SHIPPED_CHECKPOINTS / "distilled"


def network_path(name: str) -> Path:
    """The checkpoint folder a network's name gives: the shipped champion's for ``champion``,
    else the name read as a path."""
    return CHAMPION_PATH if name.strip() == "champion" else Path(name.strip())


def search_network(net: str) -> Path:
    """The checkpoint ``champion-search`` searches with: its ``net=`` setting (``champion`` for the
    shipped champion, else a path), else the default."""
    return network_path(net) if net.strip() else SEARCH_NETWORK_PATH


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent named by ``spec`` (a name in ``AGENT_NAMES``, ``champion-search`` with
    settings after a colon, or a checkpoint path; ``renamed:`` before any of them)."""
    name = spec.strip()
    if name.startswith(RENAMED_PREFIX):
        inner = name.removeprefix(RENAMED_PREFIX).strip()
        if not inner or inner.startswith(RENAMED_PREFIX):
            raise ValueError(f"agent {spec!r}: 'renamed:' takes one agent spec after it, "
                             f"e.g. renamed:expert")
        return SuitRenamedAgent(make_agent(inner, seed), seed)
    if name == "random":
        return RandomAgent(seed)
    if name == "greedy":
        from .greedy import GreedyAgent

        return GreedyAgent(seed)
    if name == "standard":
        from .standard import StandardAgent

        return StandardAgent(seed)
    if name == "expert":
        from .expert import ExpertAgent

        return ExpertAgent(seed)
    if name == SEARCH_NAME or name.startswith(SEARCH_NAME + ":"):
        from .search import SearchSettings, load_search_agent

        settings = SearchSettings.parse(name[len(SEARCH_NAME) + 1:])
        network = search_network(settings.net)
        if not network.exists():
            raise ValueError(f"agent {spec!r}: no checkpoint at {network}")
        return load_search_agent(network, settings, seed=seed)
    path = network_path(name)
    if name == "champion" or path.exists() or any(s in name for s in "/\\."):
        if not path.exists():
            raise ValueError(f"agent {spec!r}: no checkpoint at {path}")
        from .learned import load_learned_agent

        return load_learned_agent(path, seed=seed)
    raise ValueError(f"unknown agent {spec!r}: use one of {', '.join(AGENT_NAMES)} "
                     f"or a checkpoint path")
