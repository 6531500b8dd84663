"""The package is complete when installed: the wheel, installed in a fresh venv and run from a
folder outside the repository, finds the champion, the win-odds table and the web page.

Slow tier (``make test-slow``): it builds the wheel from this checkout (``pip wheel --no-deps``,
with the running interpreter's setuptools when it has one, so no build download is needed) and
installs it with ``--no-deps`` into a new venv. The dependencies (torch, numba, fastapi...) are not
installed again: the venv sees the running interpreter's site-packages as a plain path (a ``.pth``
line, which runs none of that folder's own ``.pth`` files, so the project's editable install there
is not seen), behind the venv's own site-packages, where the wheel's packages are.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("crib_env", "agents", "training", "crib_play", "crib_cli")
SKIPPED = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}

pytestmark = pytest.mark.slow


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What the wheel's build must not see: caches, venvs, earlier builds, runs and the runs'
    output root (the shipped checkpoints are in ``agents/checkpoints``)."""
    skipped = {n for n in names if n in SKIPPED or n.endswith(".egg-info")}
    if Path(folder) == ROOT:
        skipped |= {n for n in names if n in ("checkpoints", "runs", "build", "dist")}
    return skipped


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(crib, env, folder)``: the installed ``crib`` script, the environment to run it with and
    an empty working folder outside the repository."""
    base = tmp_path_factory.mktemp("wheel")
    source, dist = base / "source", base / "dist"
    # pip builds in the tree it is given: a copy, so no build/ of an earlier build (with files
    # since removed) goes into the wheel and the checkout is left as it was
    shutil.copytree(ROOT, source, ignore=_not_source)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist), str(source)]
    if importlib.util.find_spec("setuptools") is not None:
        build.insert(4, "--no-build-isolation")
    subprocess.run(build, check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = dist.glob("crib_rl-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)  # ensurepip
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], check=True, capture_output=True, text=True)
                .stdout.strip())
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(deps)))
    folder = base / "work"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(HOME=str(base / "home"), XDG_DATA_HOME=str(base / "data"), PYTHONNOUSERSITE="1")
    where = subprocess.run([str(python), "-c", "import agents, crib_cli, crib_env, crib_play, "
                            "training; print('\\n'.join(m.__file__ for m in (agents, crib_cli, "
                            "crib_env, crib_play, training)))"], cwd=folder, env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    assert len(where) == len(PACKAGES) and all(Path(p).is_relative_to(site) for p in where), where
    return venv / "bin" / "crib", env, folder


def _crib(installed, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    crib, env, folder = installed
    out = subprocess.run([str(crib), *args], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out


def test_the_wheel_holds_everything_the_command_needs(installed):
    crib, _, _ = installed
    site = next(crib.parent.parent.glob("lib/python*/site-packages"))
    for name in ("champion", "exit_default_gen3", "distilled", "scratch"):
        for file in ("meta.json", "policy.safetensors"):
            assert (site / "agents" / "checkpoints" / name / file).is_file(), (name, file)
    assert list((site / "crib_env" / "data").glob("*.npz")), "no win-odds table"
    assert (site / "crib_play" / "static" / "index.html").is_file()
    assert not (site / "checkpoints").exists() and not (site / "tests").exists()


def test_installed_evaluate_finds_the_champion(installed):
    _, _, folder = installed
    report = folder / "champion.json"
    out = _crib(installed, "evaluate", "--agent", "champion", "--opponent", "greedy", "--games",
                "2", "--json", str(report))
    assert "champion" in out.stdout and "greedy" in out.stdout
    data = json.loads(report.read_text())
    assert data["agent"] == "champion" and data["opponent"] == "greedy" and data["games"] == 2
    assert 0 <= data["wins"] <= 2


def test_installed_odds_reads_the_packaged_table(installed):
    out = _crib(installed, "odds", "95", "100", "--dealer")
    assert "95 to 100, dealing next: win" in out.stdout
    data = json.loads(_crib(installed, "odds", "95", "100", "--dealer", "--json").stdout)
    assert data["score"] == 95 and data["opponent_score"] == 100 and data["dealer"] is True
    assert 0.4 < data["win_probability"] < 0.65


def test_installed_analyze_ranks_the_throws(installed):
    out = _crib(installed, "analyze", "5H", "5D", "JS", "6C", "7C", "KD", "--dealer")
    best = next(line for line in out.stdout.splitlines() if "│  1 │" in line)
    assert "6C 7C" in best and "5H 5D JS KD" in best and "+17.81" in best


def test_installed_serve_returns_the_page(installed):
    crib, env, folder = installed
    port = _free_port()
    server = subprocess.Popen([str(crib), "serve", "--port", str(port)], cwd=folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, page, error = time.monotonic() + 300, None, None
        while page is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    assert response.status == 200
                    page = response.read().decode()
            except OSError as err:
                error = err
                time.sleep(0.5)
        assert page is not None, (error, server.poll())
        assert "<html" in page.lower()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
