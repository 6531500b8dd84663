"""The compiled-kernel cache can never run stale code after an edit to a table it freezes."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# 5H 5S 5D JC with the 5C starter: the 29 hand. fast.show_points (crib_env/core/score_kernels.py)
# reads scoring.RANK_POINTS, a table from another file that numba freezes into the compiled kernel.
PROBE = """
import crib_env.fast as fast
from crib_env.cards import parse_card, parse_cards
bits = 0
for c in parse_cards("5H 5S 5D JC"):
    bits |= 1 << c
print(fast.show_points(bits, parse_card("5C"), False))
"""


def _run(tree: Path) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tree, capture_output=True, text=True,
                         env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, timeout=600)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def test_editing_a_frozen_table_in_another_file_recompiles(tmp_path):
    for package in ("crib_env", "agents"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert _run(tmp_path) == 29
    cache = tmp_path / "crib_env" / "core" / "__pycache__"
    assert list(cache.glob("score_kernels.*.nbi")), "no kernel cached"
    assert _run(tmp_path) == 29  # from the cache
    # Make every pair worth nothing: an edit in scoring.py, not in the file where the kernel lives.
    scoring = tmp_path / "crib_env" / "scoring.py"
    scoring.write_text(scoring.read_text() + "\nRANK_POINTS[:] = 0\n")
    assert _run(tmp_path) == 1  # only his nobs is left


def test_kernels_in_subpackages_are_covered(tmp_path, monkeypatch):
    """crib_env/testing holds kernels too: its sources feed the digest and its caches are
    dropped with the rest."""
    from crib_env import kernel_cache

    package = tmp_path / "pkg"
    (package / "testing" / "__pycache__").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    (package / "core.py").write_text("X = 1\n")
    (package / "testing" / "check.py").write_text("Y = 1\n")
    stale = package / "testing" / "__pycache__" / "check.replay-1.py311.nbi"
    stale.write_text("")
    monkeypatch.setattr(kernel_cache, "package_dirs", lambda names: [package] if names == ("pkg",) else [])
    assert kernel_cache.invalidate_stale_kernels("pkg")  # no digest yet: everything goes
    assert not stale.exists()
    stale.write_text("")
    assert not kernel_cache.invalidate_stale_kernels("pkg")  # nothing changed: the cache stays
    assert stale.exists()
    (package / "testing" / "check.py").write_text("Y = 2\n")
    assert kernel_cache.invalidate_stale_kernels("pkg")
    assert not stale.exists()


def test_a_package_above_registers_its_kernels_and_an_edit_below_drops_them(tmp_path, monkeypatch):
    """A package that builds on another (as agents on crib_env) calls invalidate_stale_kernels for
    itself with the other as a feed: an edit in the feed drops the upper package's kernels, and
    the feed's own cache is its own business; kernel_cache names no package above crib_env."""
    from crib_env import kernel_cache

    folders = {name: tmp_path / name for name in ("upper", "lower")}
    for folder in folders.values():
        (folder / "__pycache__").mkdir(parents=True)
        (folder / "m.py").write_text("X = 1\n")
    upper_stale = folders["upper"] / "__pycache__" / "m.k-1.py311.nbc"
    lower_cached = folders["lower"] / "__pycache__" / "m.k-1.py311.nbc"
    monkeypatch.setattr(kernel_cache, "package_dirs",
                        lambda names: [folders[n] for n in names if n in folders])
    assert kernel_cache.invalidate_stale_kernels("upper", feeds=("lower",))  # no digest yet
    upper_stale.write_text("")
    lower_cached.write_text("")
    assert not kernel_cache.invalidate_stale_kernels("upper", feeds=("lower",))
    (folders["lower"] / "m.py").write_text("X = 2\n")
    assert kernel_cache.invalidate_stale_kernels("upper", feeds=("lower",))
    assert not upper_stale.exists() and lower_cached.exists()
    source = Path(kernel_cache.__file__).read_text()
    assert "agents" not in source and "training" not in source
