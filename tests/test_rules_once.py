"""Each scoring rule once: nothing outside ``crib_env`` restates a count limit, a count sum or a
point value.

``crib_env.rules`` states every rule of the count and of scoring once (the limits and the points as
named constants, the rules as small functions); ``crib_env`` derives its scorer, events, tables and
kernels from it. The packages above it (``agents``, ``training``, ``crib_play``, ``crib_cli``) call
those functions. This test reads every module of those packages with ``ast`` and fails, naming
``file:line``, on any of:

* **a count limit written out**: the int 15 or 31 as an operand of a comparison, an arithmetic
  operator or an augmented assignment (``count <= 31``, ``31 - count``, ``x in (15, 31)``). Not as
  the exponent or base of ``**`` (``2**31 - 1`` is a seed bound) and not in plain data (a tuple of
  table values, a default argument), where the number is no rule;
* **a count limit by name**: ``COUNT_LIMIT``, ``MAX_COUNT`` or ``FIFTEEN_COUNT`` (with or without
  leading underscores, bare or as an attribute) in a comparison or arithmetic: the name is right
  but the rule around it (``count + value <= COUNT_LIMIT``) is restated. Call ``rules.fits`` /
  ``rules.count_restarts`` instead;
* **a count sum**: a card's counting value (a subscript of ``VALUE``, ``VALUE_ARRAY`` or a
  ``_VALUE`` copy) added or subtracted (``count + VALUE[card]``, ``total += _VALUE[c]``): the
  running count is ``rules.count_after``;
* **a point value next to a score**: a literal 1, 2, 4, 5, 6 or 12 (the points the rules pay)
  added to, subtracted from, compared with or assigned by ``+=`` / ``-=`` to a name that says it
  holds points (``points``, ``pts``, ``gain``, ``peg``...), or given as the points of a
  ``ScoreEvent``. The points are ``rules``' named constants.

Lines in ``ALLOWED`` are skipped, each with its reason. ``test_checker_*`` plant each kind of
violation in a small source string, so the check itself is shown to fail when it should.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("agents", "training", "crib_play", "crib_cli")

LIMIT_LITERALS = {15, 31}
LIMIT_NAMES = {"COUNT_LIMIT", "MAX_COUNT", "FIFTEEN_COUNT"}
VALUE_NAMES = {"VALUE", "VALUE_ARRAY"}
POINT_LITERALS = {1, 2, 4, 5, 6, 12}
#: identifiers that say they hold points (matched as whole words of a snake_case name)
POINT_WORDS = {"points", "point", "pts", "gain", "peg", "pegged", "pegs"}

#: ``(path, line text stripped)`` -> why the line may stay; none so far
ALLOWED: dict[tuple[str, str], str] = {}


def _identifier(node: ast.AST) -> str | None:
    """The bare name of a ``Name`` or the attribute of an ``Attribute``, leading ``_`` dropped."""
    if isinstance(node, ast.Name):
        return node.id.lstrip("_")
    if isinstance(node, ast.Attribute):
        return node.attr.lstrip("_")
    return None


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _is_limit(node: ast.AST) -> bool:
    if _int(node) in LIMIT_LITERALS:
        return True
    if _identifier(node) in LIMIT_NAMES:
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):  # ``count in (15, 31)``
        return any(_is_limit(e) for e in node.elts)
    return False


def _is_value(node: ast.AST) -> bool:
    """A card's counting value: ``VALUE[c]``, ``VALUE_ARRAY[c]``, ``_VALUE[c]``."""
    return isinstance(node, ast.Subscript) and _identifier(node.value) in VALUE_NAMES


def _says_points(node: ast.AST) -> bool:
    name = _identifier(node)
    if name is None and isinstance(node, ast.Subscript):
        name = _identifier(node.value)
    if name is None:
        return False
    return bool(POINT_WORDS & set(name.lower().split("_")))


def _operands(node: ast.AST) -> list[ast.AST] | None:
    """The operands of a comparison, an arithmetic operator or an augmented assignment (None for
    anything else); ``**`` has none that count (``2**31`` is no rule)."""
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Pow):
        return [node.left, node.right]
    if isinstance(node, ast.AugAssign):
        return [node.target, node.value]
    return None


def violations(source: str, path: str = "<string>") -> list[str]:
    """``"path:line: what: text"`` for every line of ``source`` that restates a rule (see the module
    docstring), one entry per line."""
    tree = ast.parse(source)
    lines = source.splitlines()
    # An index such as ``S[b, PEG + 1]`` picks a column, it adds no points.
    in_index = {id(n) for sub in ast.walk(tree) if isinstance(sub, ast.Subscript)
                for n in ast.walk(sub.slice)}
    found: dict[int, str] = {}

    def report(node: ast.AST, what: str) -> None:
        text = lines[node.lineno - 1].strip()
        if (path, text) not in ALLOWED:
            found.setdefault(node.lineno, f"{path}:{node.lineno}: {what}: {text}")

    for node in ast.walk(tree):
        operands = _operands(node)
        if operands is not None:
            additive = isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(
                node.op, (ast.Add, ast.Sub))
            if any(_is_limit(o) for o in operands):
                report(node, "count limit")
            elif additive and any(_is_value(o) for o in operands):
                report(node, "count sum")
            elif ((isinstance(node, ast.Compare) or additive) and id(node) not in in_index
                  and any(_int(o) in POINT_LITERALS for o in operands)
                  and any(_says_points(o) for o in operands)):
                report(node, "point value")
        elif isinstance(node, ast.Call) and _identifier(node.func) == "ScoreEvent":
            given = node.args[1:2] + [k.value for k in node.keywords if k.arg == "points"]
            if any(_int(g) is not None for g in given):
                report(node, "point value of a ScoreEvent")
    return [found[line] for line in sorted(found)]


def _modules() -> list[Path]:
    return sorted(p for package in SCANNED for p in (ROOT / package).rglob("*.py"))


def test_no_rule_is_restated_outside_crib_env():
    found = [v for p in _modules()
             for v in violations(p.read_text(), p.relative_to(ROOT).as_posix())]
    assert not found, ("rules restated outside crib_env (use crib_env.rules):\n"
                       + "\n".join(found))


def test_the_scan_reads_every_package():
    for package in SCANNED:
        assert any(p.is_relative_to(ROOT / package) for p in _modules()), package


@pytest.mark.parametrize("line", [
    "ok = count + value <= 31",
    "room = 31 - count",
    "if count == 15:\n    pass",
    "five = count in (15, 31)",
    "ok = new_count < MAX_COUNT",
    "ok = n + v <= rules.COUNT_LIMIT",
    "ok = c <= _COUNT_LIMIT",
    "count = count + VALUE[card]",
    "total += _VALUE[c]",
    "after = count + VALUE_ARRAY[c] - 1",
    "points += 2",
    "gain = pts + 1",
    "won = peg_points == 12",
    "room = [31 - c for c in counts]",
    "e = ScoreEvent(HEELS, 2, (card,))",
    "e = ScoreEvent(kind=GO, points=1)",
])
def test_checker_flags_a_planted_restatement(line):
    assert len(violations(line)) == 1, line


@pytest.mark.parametrize("line", [
    "seed = int(rng.integers(2**31 - 1))",
    "splits = 15",
    "table = (116, 15, 1167, 31)",
    "def f(win_need: int = 31):\n    pass",
    "bonus = LOW_CARD_BONUS * _VALUE[card]",
    "ok = fits(count, VALUE[card])",
    "games = games + 2",
    "points = rules.FIFTEEN_POINTS + rules.GO_POINTS",
    "x = points / 4.0",
    "alpha = 0.15",
    "margin = S[0, PEG] - S[0, PEG + 1]",
])
def test_checker_leaves_unrelated_numbers_alone(line):
    assert violations(line) == [], line


def test_checker_names_file_and_line():
    (found,) = violations("a = 1\nb = count + VALUE[c]\n", "agents/x.py")
    assert re.match(r"agents/x\.py:2: count sum: b = count \+ VALUE\[c\]$", found)
