"""``crib odds`` on the command line: check the arguments, then build, look up or draw the win-odds
table (``training.odds``) and say what was done."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from agents.files import check_output_file
from crib_env.odds import DEFAULT_TABLE, load_table
from training.odds import build, endgame_cell, odds_report, plot


def odds_command(args: list[str], dealer: bool | None, json_out: bool, plot_path: Path | None,
                 traces: int, seed: int, output: Path | None, table_path: Path | None) -> None:
    """The ``crib odds`` command line (see the module docstring)."""
    console = Console()
    if args and args[0] == "build":
        if len(args) > 1:
            raise ValueError(f"`crib odds build` takes no scores, got {' '.join(args[1:])}")
        option = "--output" if output is not None else "--table"
        out = check_output_file(output or table_path or DEFAULT_TABLE, option)  # before the build
        table = build(traces, seed, out)
        console.print(f"wrote {out}: {traces:,} traces, seed {seed}, first dealer wins "
                      f"{100 * table.win[0, 0, 1]:.2f}% at 0-0, max stderr "
                      f"{100 * table.header['max_stderr']:.3f} pp")
        return
    if len(args) not in (0, 2):
        raise ValueError(f"expected SCORE OPPONENT_SCORE (or `build`), got {' '.join(args)!r}")
    scores = []
    names = ("SCORE", "OPPONENT_SCORE")[:len(args)]
    for name, text in zip(names, args, strict=True):
        if not text.isdigit():
            raise ValueError(f"{name} must be a whole number of points, got {text!r}")
        scores.append(int(text))
    if not scores and plot_path is None:
        raise ValueError("give SCORE OPPONENT_SCORE --dealer|--pone, `build`, or --plot PATH")
    if scores and dealer is None:
        raise ValueError("say who deals next: --dealer (SCORE's side) or --pone")
    if plot_path is not None:
        check_output_file(plot_path, "--plot")
    table = load_table(table_path)
    for name, value in zip(names, scores, strict=True):
        if value > table.target:
            raise ValueError(f"{name} must be in 0..{table.target}, got {value}")
    if scores:
        report = odds_report(table, scores[0], scores[1], bool(dealer))
        if json_out:
            print(json.dumps(report))
        else:
            role = "dealing next" if dealer else "opponent dealing next"
            console.print(f"{scores[0]} to {scores[1]}, {role}: win {100 * report['win_probability']:.1f}% "
                          f"(± {100 * report['stderr']:.2f} pp; {table.header['strategy']}, "
                          f"{table.header['traces']:,} traces)")
            if endgame_cell(table, *scores):
                console.print("note: near the end the table assumes standard's neutral play; the real "
                              "agent plays for the win there and its odds differ by up to about 5 pp "
                              "(BENCHMARKS.md, Win odds)")
    if plot_path is not None:
        plot(table, plot_path)
        if not json_out:
            console.print(f"wrote {plot_path}")
