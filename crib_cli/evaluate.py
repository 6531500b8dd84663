"""``crib evaluate`` on the command line: run the evaluation, print its report as rich tables, write
its JSON and recorded games. The library (``training.evaluate``) prints nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.eval_plans import ROLES, SIDES
from training.eval_report import EvaluationReport
from training.evaluate import evaluate
from training.limits import check_games


def report_tables(report: EvaluationReport) -> list[Any]:
    """Rich tables of ``report``: the summary and the points per deal by role."""
    from rich.table import Table

    mode = "duplicate" if report.duplicate else "seats alternating"
    summary = Table(title=f"{report.agent} vs {report.opponent}: {report.games} games "
                          f"(seed {report.seed}, {mode}, to {report.target})",
                    show_header=False, title_justify="left")
    summary.add_column("figure", style="bold")
    summary.add_column("value", justify="right")
    lo, hi = report.win_rate_ci95
    summary.add_row("wins - losses", f"{report.wins} - {report.losses}")
    summary.add_row("win rate (Wilson 95%)", f"{report.win_rate:.1%}  [{lo:.1%}, {hi:.1%}]")
    if report.win_rate_ci95_paired is not None:
        plo, phi = report.win_rate_ci95_paired
        summary.add_row("win rate (95%, over pairs)", f"[{plo:.1%}, {phi:.1%}]")
    lo, hi = report.points_per_game_ci95
    summary.add_row("points per game (margin, 95%)",
                    f"{report.points_per_game:+.2f}  [{lo:+.2f}, {hi:+.2f}]")
    summary.add_row("mean score", f"{report.mean_score:.1f} - {report.mean_opponent_score:.1f}")
    summary.add_row("skunks given / taken", f"{report.skunks_given} / {report.skunks_taken}")
    summary.add_row("double skunks given / taken",
                    f"{report.double_skunks_given} / {report.double_skunks_taken}")
    summary.add_row("first dealer won", f"{report.first_dealer_wins / report.games:.1%}")
    summary.add_row("deals per game", f"{report.deals_per_game:.1f}")
    if report.discard_regret is None:
        summary.add_row("discard regret", "n/a (exact analyzer unavailable)")
    else:
        summary.add_row("discard regret (points per discard)",
                        f"{report.discard_regret['agent']:.3f} / "
                        f"{report.discard_regret['opponent']:.3f}")
    if report.winprob_per_deal is None:
        summary.add_row("win probability added per deal", "n/a (no win-odds table)")
    else:
        w = report.winprob_per_deal
        summary.add_row("win chance added per deal (dealer / pone / all)",
                        f"{w['dealer']:+.2%} / {w['pone']:+.2%} / {w['all']:+.2%}")
        d = report.winprob_per_decision
        summary.add_row("win chance added per decision (discard / card laid)",
                        f"{d['discard']:+.3%} / {d['play']:+.3%}")
    if report.ms_per_decision is not None:
        t = report.ms_per_decision
        summary.add_row("time per decision (agent / opponent)",
                        f"{t['agent']:.1f} ms / {t['opponent']:.1f} ms")
    summary.add_row("games per second",
                    f"{report.games_per_second:.1f} ({report.workers} worker"
                    f"{'s' if report.workers != 1 else ''})")

    roles = Table(title="points per completed deal, by role", title_justify="left")
    for column in ("side", "role", "pegging", "hand", "crib", "heels", "total", "deals"):
        roles.add_column(column, justify="left" if column in ("side", "role") else "right")
    for side, name in zip(SIDES, (report.agent, report.opponent), strict=True):
        for role in ROLES:
            v = report.per_deal[side][role]
            dealer = role == "dealer"
            roles.add_row(f"{side} ({name})", role, f"{v['pegging']:.2f}", f"{v['hand']:.2f}",
                          f"{v['crib']:.2f}" if dealer else "",
                          f"{v['heels']:.2f}" if dealer else "",
                          f"{v['total']:.2f}", str(int(v["deals"])))
    return [summary, roles]


def print_report(report: EvaluationReport, console: Any = None) -> None:
    """Print ``report``'s tables to ``console`` (a new rich console by default)."""
    from rich.console import Console

    console = console or Console()
    for table in report_tables(report):
        console.print(table)


def evaluate_command(agent: str, opponent: str, games: int, seed: int = 0,
                     json_path: Path | None = None, duplicate: bool = False,
                     workers: int = 1, record_path: Path | None = None,
                     ray: str | None = None) -> EvaluationReport:
    """``crib evaluate``: run ``evaluate`` with a progress bar, print the tables, write the JSON
    and, with ``record_path``, every game as one JSON line (``training.record``). ``ray``: play the
    blocks as Ray tasks (``training.ray_backend``; ``"local"`` starts a Ray with ``workers`` CPUs,
    ``"auto"`` or an address joins a cluster); the report is the same."""
    from rich.console import Console

    from agents.files import atomic_write_text, check_output_file

    if json_path is not None:
        json_path = check_output_file(json_path, "--json")  # before any game is played
    if record_path is not None:
        record_path = check_output_file(record_path, "--record")
    check_games(games)
    pool = None
    if ray is not None:
        from training.ray_backend import RayPool

        pool = RayPool(ray, num_cpus=workers)
    try:
        report = evaluate(agent, opponent, games=games, seed=seed, duplicate=duplicate,
                          workers=workers, progress=True, pool=pool,
                          record_games=record_path is not None)
        if pool is not None:
            report.workers = pool.workers
    finally:
        if pool is not None:
            pool.shutdown()
    console = Console()
    print_report(report, console)
    if json_path is not None:
        atomic_write_text(json_path, report.to_json() + "\n")
        console.print(f"wrote {json_path}")
    if record_path is not None:
        from training.record import write_records

        count = write_records(record_path, report.records)
        console.print(f"recorded {count} games to {record_path} (crib replay {record_path})")
    return report
