"""The ``crib`` command line. Each command is a thin shell over a library function."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Two-player cribbage: analyze hands, evaluate and train agents.")


@app.command()
def analyze(
    cards: Annotated[list[str], typer.Argument(help="six cards, e.g. 5H 5D JS 6C 7C KD")],
    dealer: Annotated[bool, typer.Option("--dealer/--pone", help="whose crib it is")] = True,
) -> None:
    """Rank all 15 discards of a six-card hand by exact expected value."""
    from agents.analysis import print_analysis

    _run(lambda: print_analysis(cards, dealer=dealer))


@app.command()
def evaluate(
    agent: Annotated[str, typer.Option(help="agent name or checkpoint path")],
    opponent: Annotated[str, typer.Option(help="opponent name or checkpoint path")] = "standard",
    games: Annotated[int, typer.Option(help="games to play")] = 1000,
    seed: Annotated[int, typer.Option(help="seed: same seed, same report")] = 0,
    json_path: Annotated[Path | None, typer.Option("--json", help="write the report here")] = None,
    duplicate: Annotated[bool, typer.Option(help="play each deal sequence from both seats")] = False,
    workers: Annotated[int, typer.Option(help="worker processes")] = 1,
    engine: Annotated[str, typer.Option(
        help="fast: games interleaved on the compiled core (stateless agents only); game: one "
             "at a time through the plain engine; auto: fast where possible")] = "auto",
) -> None:
    """Play AGENT against OPPONENT and report win rate and points per game with 95% intervals."""
    from training.evaluate import evaluate_command

    _run(lambda: evaluate_command(agent, opponent, games=games, seed=seed, json_path=json_path,
                                  duplicate=duplicate, workers=workers, engine=engine))


@app.command()
def tournament(
    agents: Annotated[str, typer.Option(help="comma-separated agent names or checkpoint paths")],
    games: Annotated[int, typer.Option(help="games per pairing")] = 200,
    seed: Annotated[int, typer.Option()] = 0,
    output: Annotated[Path, typer.Option(help="folder for the heatmap and JSON")] = Path("runs/tournament"),
    workers: Annotated[int, typer.Option()] = 1,
) -> None:
    """Round robin between agents: win-rate matrix, heatmap PNG and ratings."""
    from training.tournament import tournament_command

    _run(lambda: tournament_command([a for a in agents.split(",") if a], games=games, seed=seed,
                                    output=output, workers=workers))


@app.command()
def train(
    config: Annotated[Path, typer.Option(help="YAML run config")],
    output_dir: Annotated[Path | None, typer.Option(help="root folder for runs")] = None,
    resume: Annotated[bool, typer.Option(help="continue the latest checkpoint of this run")] = False,
) -> None:
    """Train an agent with MaskablePPO from a YAML config."""
    from training.trainer import train_command

    _run(lambda: train_command(config, output_dir=output_dir, resume=resume))


@app.command()
def plot(
    run_dir: Annotated[Path, typer.Argument(help="a run folder written by crib train")],
    output: Annotated[Path | None, typer.Option(help="PNG path (default RUN_DIR/curves.png)")] = None,
) -> None:
    """Draw a run's learning curves to a PNG."""
    from training.plots import plot_command

    _run(lambda: plot_command(run_dir, output=output))


@app.command(context_settings={"allow_interspersed_args": True})
def odds(
    args: Annotated[list[str] | None, typer.Argument(
        help="SCORE OPPONENT_SCORE to look up, or `build` to make the table")] = None,
    dealer: Annotated[bool | None, typer.Option(
        "--dealer/--pone", help="SCORE's side deals next / the opponent deals next")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the lookup as JSON")] = False,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="write a heatmap PNG here")] = None,
    traces: Annotated[int, typer.Option(help="build: deal traces to record")] = 400_000,
    seed: Annotated[int, typer.Option(help="build: seed of the deals")] = 0,
    output: Annotated[Path | None, typer.Option(help="build: where to write the table")] = None,
    table: Annotated[Path | None, typer.Option(help="table file (default: the packaged one)")] = None,
) -> None:
    """Chance to win from a board position: `crib odds 95 100 --dealer`; `crib odds build`."""
    from training.odds import odds_command

    _run(lambda: odds_command(args or [], dealer, json_out, plot_path, traces, seed, output, table))


def _run(command) -> None:
    """Show bad input as one clear line and exit 2, instead of a traceback."""
    try:
        command()
    except (ValueError, FileNotFoundError) as err:
        typer.secho(f"error: {err}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from err


def main() -> None:
    app()


if __name__ == "__main__":
    main()
