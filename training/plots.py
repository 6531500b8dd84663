"""``crib plot RUN_DIR``: a run's learning curves (win rate by training steps and by wall time,
and points per game, against each evaluation opponent, with 95% intervals) drawn from
``RUN_DIR/evals.jsonl`` to a PNG."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def read_evals(run_dir: Path) -> list[dict[str, Any]]:
    """The evaluation lines of a run, oldest first; raises if the run has none.

    A crash can cut the last line short, and a resumed run then appends its next line to the cut
    one. Such lines are skipped (a complete evaluation appended to a cut one is kept), with a
    warning on stderr saying how many; a file with no readable line at all is an error."""
    if not Path(run_dir).is_dir():
        raise FileNotFoundError(f"no run folder at {run_dir}")
    path = Path(run_dir) / "evals.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{run_dir} has no evals.jsonl: is it a run folder written by "
                                f"crib train?")
    return read_eval_file(path)


def read_eval_file(path: Path) -> list[dict[str, Any]]:
    """The evaluation lines of one ``evals.jsonl``-format file, oldest first (see
    ``read_evals``)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no evaluation file at {path}")
    lines, skipped = [], []
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        line = _evaluation(text)
        if line is None:
            skipped.append(number)
            line = _evaluation_after_a_cut(text)
        if line is not None:
            lines.append(line)
    if not lines:
        if skipped:
            raise ValueError(f"{path} holds no complete evaluation line ({len(skipped)} cut or "
                             f"unreadable)")
        raise ValueError(f"{path} holds no evaluations yet")
    if skipped:
        shown = ", ".join(map(str, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
        print(f"warning: {path}: skipped {len(skipped)} line{'s' if len(skipped) > 1 else ''} "
              f"that {'are' if len(skipped) > 1 else 'is'} not a complete evaluation (line "
              f"{shown}; cut by a crash?)", file=sys.stderr)
    # A resumed run may repeat a step; keep the last line for each.
    by_step = {line["step"]: line for line in lines}
    return [by_step[s] for s in sorted(by_step)]


def merge_evals(*sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluation lines of several files as one curve: the lines of a step are joined (each
    opponent's result from the last source that has it; the first wall time given)."""
    by_step: dict[int, dict[str, Any]] = {}
    for lines in sources:
        for line in lines:
            merged = by_step.setdefault(line["step"], {"step": line["step"], "results": {}})
            merged.setdefault("wall_seconds", line.get("wall_seconds"))
            merged["results"].update(line["results"])
    return [by_step[s] for s in sorted(by_step)]


def _evaluation(text: str) -> dict[str, Any] | None:
    """One line of evals.jsonl, or None if it is not a whole evaluation."""
    try:
        line = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(line, dict) or not isinstance(line.get("step"), int) \
            or not isinstance(line.get("results"), dict):
        return None
    return line


def _evaluation_after_a_cut(text: str) -> dict[str, Any] | None:
    """The complete evaluation that ends ``text`` after a cut-off start, if there is one."""
    decoder = json.JSONDecoder()
    start = text.find("{", 1)
    while start != -1:
        try:
            line, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            line, end = None, -1
        if end == len(text.rstrip()) and _evaluation(text[start:end]) is not None:
            return line
        start = text.find("{", start + 1)
    return None


def plot_run(run_dir: Path, output: Path | None = None, extra: Sequence[Path] = ()) -> Path:
    """Draw the curves of ``run_dir`` to ``output`` (default ``RUN_DIR/curves.png``), with the
    evaluations of the ``extra`` files (same format: an opponent too slow to evaluate during the
    run, measured afterwards on its saved networks) on the same axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.files import check_output_file, save_figure

    run_dir = Path(run_dir)
    output = check_output_file(output if output is not None else run_dir / "curves.png",
                               "--output")
    evals = merge_evals(read_evals(run_dir), *(read_eval_file(path) for path in extra))
    opponents = sorted({o for line in evals for o in line["results"]})
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.5))
    ax_win, ax_wall, ax_pts = axes
    panels = ((ax_win, "step", "win_rate"), (ax_wall, "wall_seconds", "win_rate"),
              (ax_pts, "step", "points_per_game"))
    for opponent in opponents:
        rows = [line for line in evals if opponent in line["results"]]
        for ax, x_key, key in panels:
            xs = [(line.get(x_key) or 0) / (60 if x_key == "wall_seconds" else 1) for line in rows]
            results = [line["results"][opponent] for line in rows]
            ys = [r[key] for r in results]
            lo = [r[f"{key}_ci95"][0] for r in results]
            hi = [r[f"{key}_ci95"][1] for r in results]
            line, = ax.plot(xs, ys, marker="o", ms=3, label=f"vs {opponent}")
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15)
    for ax in (ax_win, ax_wall):
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set(ylabel="win rate")
    ax_win.set(title="win rate (95% CI) by training steps", xlabel="training steps")
    ax_wall.set(title="win rate by training wall time", xlabel="minutes of training")
    ax_pts.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax_pts.set(title="points per game: final margin (95% CI)", xlabel="training steps",
               ylabel="points")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(run_dir.name, fontsize=9)
    fig.tight_layout()
    save_figure(fig, output, dpi=110)
    plt.close(fig)
    return output


def plot_command(run_dir: Path, output: Path | None = None, extra: Sequence[Path] = ()) -> Path:
    path = plot_run(run_dir, output, extra)
    print(f"wrote {path}")
    return path
