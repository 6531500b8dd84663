"""The README cannot rot: every `crib ...` command in its code blocks runs, with tiny budgets.

Each command is taken from README.md's ```bash blocks as written (comments stripped), then made
small: `--games N` becomes at most 4 games, `--sims N` at most 20 simulations (and `crib review`
gets 20 simulations a throw and a search of 4 deals a play), a training config is replaced by a
copy with a budget of a few hundred steps, `<run>` is the run folder the README's own train
command made. The
interactive commands (`crib play`, `crib serve`) are checked with `--help`; commands that start a
Ray (`--ray`, `crib sweep`) run in the slow tier, their `--help` in the quick one. Every command
runs in process (typer's CliRunner) from one scratch folder (configs, sweeps and checkpoints
linked in, read only by the commands) and must exit 0. The README's Python blocks run too (the SB3
one with a tiny `learn`), and every relative link in README.md, BENCHMARKS.md and docs/ must name
a file that exists.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_GAMES = 4
TINY_STEPS = 512
TINY_SIMS = 20


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def readme_commands() -> list[str]:
    """The `crib ...` lines of README.md's bash blocks, in order, without their comments."""
    commands = []
    for block in code_blocks(README.read_text(), "bash"):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith("crib "):
                commands.append(line)
    return commands


def crib_app():
    """The `crib` command's Typer app, found from the console script that pyproject.toml names."""
    text = (ROOT / "pyproject.toml").read_text()
    target = re.search(r'^crib\s*=\s*"([\w.]+):(\w+)"', text, flags=re.M)
    assert target, "pyproject.toml: no `crib = \"module:function\"` script"
    module = importlib.import_module(target.group(1))
    apps = [v for v in vars(module).values() if isinstance(v, typer.Typer)]
    assert len(apps) == 1, f"{target.group(1)}: expected one typer.Typer app, found {len(apps)}"
    return apps[0]


def tiny_config(source: Path, folder: Path) -> Path:
    """A copy of a training config with a budget of TINY_STEPS steps and 4-game evaluations."""
    data = yaml.safe_load(source.read_text())
    algo = data.get("algo", "ppo")
    assert algo in ("ppo", "dmc"), f"README trains {source.name} (algo {algo}): give it a tiny form here"
    data.setdefault("train", {}).update(total_timesteps=TINY_STEPS, n_envs=2, progress_bar=False)
    data.setdefault("eval", {}).update(every=TINY_STEPS, games=MAX_GAMES, final_games=0, at_start=False)
    if algo == "ppo":
        data.setdefault("ppo", {}).update(n_steps=64, batch_size=64, n_epochs=1)
        data.setdefault("selfplay", {})["snapshot_every"] = 128
    else:
        data.setdefault("dmc", {}).update(samples_per_update=64, batch_size=32)
    path = folder / "tiny_configs" / source.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def shrink(command: str, work: Path) -> list[str]:
    """The README command as arguments, with tiny budgets (see the module docstring)."""
    args = shlex.split(command)[1:]
    out = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--games":
            out += [arg, str(min(int(args[i + 1]), MAX_GAMES))]
            i += 2
            continue
        if arg == "--sims":
            out += [arg, str(min(int(args[i + 1]), TINY_SIMS))]
            i += 2
            continue
        if arg == "--config" and args[0] == "train":
            out += [arg, str(tiny_config(ROOT / args[i + 1], work))]
            i += 2
            continue
        if "<run>" in arg:
            runs = sorted((work / "runs").glob("*__*"), key=lambda p: p.stat().st_mtime)
            assert runs, f"{command}: no run folder yet (the README trains before it uses <run>)"
            arg = arg.replace("<run>", runs[-1].name)
        out.append(arg)
        i += 1
    if args[0] == "review":  # a review of a whole game: a few simulations and a small search
        if "--sims" not in out:
            out += ["--sims", str(TINY_SIMS)]
        if "--agent" not in out:
            out += ["--agent", "champion-search:sims=4"]
    return out


def is_interactive(command: str) -> bool:
    return command.split()[1] in ("play", "serve")


def needs_ray(command: str) -> bool:
    return " --ray" in command or command.split()[1] == "sweep"


def run_crib(args: list[str], work: Path, monkeypatch) -> tuple[int, str]:
    """`crib ARGS` in process (one import of torch and numba for all of them), from ``work``."""
    from crib_cli.main import _bare_option
    from training.ray_backend import LOCAL

    monkeypatch.chdir(work)
    # as `crib` itself does: a bare --ray means a local Ray
    result = CliRunner().invoke(crib_app(), _bare_option(args, "--ray", LOCAL))
    output = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        output += "".join(traceback.format_exception(result.exception))
    return result.exit_code, output


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    for name in ("configs", "sweeps", "checkpoints"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def test_the_readme_shows_commands():
    commands = readme_commands()
    assert len(commands) >= 10, commands
    subcommands = {c.split()[1] for c in commands}
    assert {"train", "evaluate", "play", "serve", "odds", "analyze"} <= subcommands


def test_every_readme_command_runs(work, monkeypatch):
    """In README order, so `--resume`, `<run>` and `crib replay FILE` find what earlier lines made."""
    failures = []
    for command in readme_commands():
        if is_interactive(command) or needs_ray(command):
            args = [command.split()[1], "--help"]
        else:
            args = shrink(command, work)
        code, output = run_crib(args, work, monkeypatch)
        if code != 0:
            failures.append(f"{command}\n  ran: crib {shlex.join(args)}\n  exit {code}: {output[-1500:]}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.slow  # each starts a local Ray (10-30 s on 2 busy cores)
@pytest.mark.parametrize("command", [c for c in readme_commands() if needs_ray(c)])
def test_readme_ray_commands_run(command, tmp_path, monkeypatch):
    for name in ("configs", "sweeps", "checkpoints"):
        (tmp_path / name).symlink_to(ROOT / name)
    if "--ray auto" in command or re.search(r"--ray \S+:\d+", command):
        pytest.skip("needs a running cluster (`ray start`)")
    args = shrink(command, tmp_path)
    if args[0] == "sweep":
        args += ["--samples", "1", "--output-dir", str(tmp_path / "sweep")]
    code, output = run_crib(args, tmp_path, monkeypatch)
    assert code == 0, output[-2000:]


def test_readme_python_blocks_run(tmp_path):
    for block in code_blocks(README.read_text(), "python"):
        code = block
        if "MaskablePPO(" in block:  # the same calls on a budget of one tiny rollout
            assert 'MaskablePPO("MlpPolicy", env).learn(10_000)' in block, "update the tiny form here"
            tiny = 'MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1).learn(64)'
            code = block.replace('MaskablePPO("MlpPolicy", env).learn(10_000)', tiny)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert result.returncode == 0, f"{block}\n{result.stderr[-2000:]}"


def markdown_files() -> list[Path]:
    return [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)  # links in code are not links
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            missing.append(target)
    assert not missing, f"{page.relative_to(ROOT)}: links to nothing: {missing}"
