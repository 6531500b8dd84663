"""The package layout: every import points down the layers, and no import cycle (type-only and
function-level imports included).

The layers, lowest first: ``crib_env`` (rules and environments) < ``agents`` (policies) <
``training`` (trainers, evaluation) < ``crib_play`` (the person-facing game: terminal, web page,
table talk) < ``crib_cli`` (the ``crib`` command). A module may import its own package and the
packages below it, never one above: at import time, under ``if TYPE_CHECKING:`` and inside
functions alike."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the project's packages, lowest layer first (the only direction imports may point is down)
PACKAGES = ("crib_env", "agents", "training", "crib_play", "crib_cli")
LAYER = {name: i for i, name in enumerate(PACKAGES)}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, name: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``source`` (the module ``name``), relative ones made
    absolute; ``from m import x`` gives both ``m`` and ``m.x`` (``x`` may be a submodule). Found
    with ``ast.walk``, so imports under ``if TYPE_CHECKING:`` and inside functions count."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[:len(package) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            found.append((node.lineno, base))
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return found


def upward_imports(source: str, name: str, is_package: bool = False) -> list[str]:
    """The imports of module ``name`` that point up the layers, as ``"name:line imports m"``."""
    own = LAYER[name.split(".")[0]]
    return sorted({f"{name}:{line} imports {module}"
                   for line, module in imported_names(source, name, is_package)
                   if LAYER.get(module.split(".")[0], -1) > own})


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """Modules of ours that ``path`` imports anywhere: at import time, for type checking (an ``if
    TYPE_CHECKING:`` block) or inside a function. A cycle through any of them is a cycle in the
    design, even where Python would not trip on it."""
    found = imported_names(path.read_text(), name, path.name == "__init__.py")
    return {m for _, m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    paths = _sources()
    return {name: _imports(path, name, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_type_only_and_lazy_imports_included():
    graph = import_graph()
    assert "training.eval_plans" in graph["training.batch_play"]  # the graph sees real imports
    assert "crib_cli.evaluate" in graph["crib_cli.main"]  # ... and those inside functions
    assert cycles(graph) == []


def test_the_direction_checker_finds_planted_upward_imports():
    """A synthetic agents module that reaches up three ways (at import time, for type checking
    and inside a function, once relatively): each is reported; imports down or sideways are not."""
    bad = """
from __future__ import annotations
from typing import TYPE_CHECKING
import numpy as np
from crib_env.cards import card_str
from . import base
from .learned import load_network
import training.evaluate
if TYPE_CHECKING:
    from crib_play.session import GameSession

def late():
    from crib_cli import main
    from ..training import files
"""
    found = upward_imports(bad, "agents.bad")
    assert {f.split(" imports ")[1] for f in found} == {
        "training.evaluate", "crib_play.session", "crib_play.session.GameSession", "crib_cli",
        "crib_cli.main", "training", "training.files"}
    assert "agents.bad:8 imports training.evaluate" in found  # at import time
    assert "agents.bad:10 imports crib_play.session" in found  # for type checking
    assert "agents.bad:13 imports crib_cli.main" in found  # inside a function
    assert "agents.bad:14 imports training.files" in found  # relative, inside a function
    assert upward_imports(bad, "crib_cli.bad") == []  # the top layer may import everything
    assert upward_imports("from crib_cli.main import app\n", "crib_play.x") == [
        "crib_play.x:1 imports crib_cli.main", "crib_play.x:1 imports crib_cli.main.app"]


def test_every_import_points_down_the_layers():
    sources = _sources()
    assert "crib_cli.main" in sources and "crib_play.talk" in sources  # every package is read
    found = [v for name, path in sorted(sources.items())
             for v in upward_imports(path.read_text(), name, path.name == "__init__.py")]
    assert found == []
