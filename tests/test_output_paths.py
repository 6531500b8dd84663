"""Every output path is tried before the work (issue 27): for each option of each command that
writes, a path that cannot be written is refused at once, in one line naming the option and the
path as given (never a temporary file's name), and nothing is left behind."""

from __future__ import annotations

import os
import stat
import time

import pytest
from typer.testing import CliRunner

from agents import files
from crib_cli.main import app

runner = CliRunner()

#: (command line before the option, option, the kind of path it takes)
WRITERS = [
    (["evaluate", "--agent", "random", "--opponent", "random", "--games", "1000000"], "--json",
     "file"),
    (["evaluate", "--agent", "random", "--opponent", "random", "--games", "1000000"], "--record",
     "file"),
    (["play", "--opponent", "random"], "--record", "file"),
    (["serve", "--port", "1"], "--record", "file"),
    (["tournament", "--agents", "random,random", "--games", "1000000"], "--output", "folder"),
    (["train", "--config", "configs/smoke.yaml"], "--output-dir", "folder"),
    (["sweep", "--config", "configs/smoke.yaml", "--space", "sweeps/example.yaml"],
     "--output-dir", "folder"),
    (["odds", "build", "--traces", "400000"], "--output", "file"),
    (["odds", "--plot"], None, "file"),  # --plot takes the path itself
    (["plot", "RUN"], "--output", "file"),
]


def _bad_paths(tmp_path, kind):
    """What a careless user gives: a path under /proc (a folder where no file can be made,
    though permission bits say root may), a folder that does not exist under it, a path under a
    file, and a path of the wrong kind."""
    (tmp_path / "a_file").write_text("x")
    wrong = tmp_path / "a_file" if kind == "folder" else tmp_path
    return {"proc": "/proc/crib-x.out", "missing_under_proc": "/proc/no/such/folder/x.out",
            "under_a_file": str(tmp_path / "a_file" / "x.out"), "wrong_kind": str(wrong)}


@pytest.mark.parametrize("case", ["proc", "missing_under_proc", "under_a_file", "wrong_kind"])
@pytest.mark.parametrize(("args", "option", "kind"), WRITERS,
                         ids=[f"{a[0]}-{a[-1] if o is None else o}" for a, o, _ in WRITERS])
def test_an_unwritable_output_is_refused_before_any_work(tmp_path, monkeypatch, args, option,
                                                         kind, case):
    if not os.path.isdir("/proc") and case != "under_a_file":
        pytest.skip("needs /proc")
    (tmp_path / "RUN").mkdir()
    monkeypatch.chdir(tmp_path)
    for name in ("configs", "sweeps"):
        os.symlink(os.path.join(os.path.dirname(__file__), "..", name), name)
    bad = _bad_paths(tmp_path, kind)[case]
    line = [*args, *([option] if option else []), bad]
    started = time.perf_counter()
    result = runner.invoke(app, line)
    seconds = time.perf_counter() - started
    named = option or args[-1]
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {named}: "), result.output
    assert bad in result.output and ".tmp" not in result.output and files.PROBE_PREFIX not in \
        result.output
    assert result.output.count("\n") == 1
    assert seconds < 20  # a million games (or a table build, a training run) did not run first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["RUN", "a_file", "configs", "sweeps"]


def test_a_writable_path_passes_the_check_and_leaves_nothing(tmp_path):
    assert files.check_output_file(tmp_path / "new" / "x.json", "--json") == \
        tmp_path / "new" / "x.json"
    assert files.check_output_folder(tmp_path / "runs", "--output") == tmp_path / "runs"
    assert list(tmp_path.iterdir()) == []  # no probe left, no folder made


def test_an_existing_file_is_tried_without_being_changed(tmp_path):
    target = tmp_path / "games.jsonl"
    target.write_text("kept\n")
    files.check_output_file(target, "--record")
    assert target.read_text() == "kept\n"


def test_the_folder_check_names_the_path_given_not_the_probe(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".crib-probe-abc"))

    monkeypatch.setattr(files.tempfile, "mkstemp", refuse)
    with pytest.raises(ValueError) as err:
        files.check_output_file(tmp_path / "out.json", "--json")
    assert str(err.value) == (f"--json: cannot write {tmp_path / 'out.json'}: cannot create a "
                              f"file in {tmp_path} (Permission denied)")


# -- one file-mode policy --


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_every_writer_leaves_files_0644(tmp_path):
    files.atomic_write_text(tmp_path / "a.json", "{}")
    files.append_line(tmp_path / "b.jsonl", "{}")
    files.replace_folder(tmp_path / "ckpt", lambda f: (f / "meta.json").write_text("{}"))
    old = os.umask(0o077)  # even a tight umask gives the one policy
    try:
        files.atomic_write_text(tmp_path / "c.json", "{}")
        files.append_line(tmp_path / "d.jsonl", "{}")
    finally:
        os.umask(old)
    modes = {p.name: _mode(p) for p in (tmp_path / "a.json", tmp_path / "b.jsonl",
                                        tmp_path / "ckpt" / "meta.json", tmp_path / "c.json",
                                        tmp_path / "d.jsonl")}
    assert modes == dict.fromkeys(modes, files.FILE_MODE) and files.FILE_MODE == 0o644
