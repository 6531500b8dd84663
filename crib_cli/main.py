"""The ``crib`` command line. Each command is a thin shell over a library function; the
command modules beside this one print what the library returns (the only package that imports
``crib_play``: see tests/test_module_layout.py)."""

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
    score: Annotated[tuple[int, int] | None, typer.Option(
        help="YOURS THEIRS: add each throw's chance to win from this board position (the rest "
             "of the deal simulated, then the win-odds table)")] = None,
    sims: Annotated[int | None, typer.Option(
        help="with --score: simulations of the rest of the deal per throw (default 2000)")] = None,
    seed: Annotated[int, typer.Option(help="with --score: seed of the simulations", min=0)] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Rank all 15 discards of a six-card hand by exact expected value."""
    from crib_cli.analyze import print_analysis

    _run(lambda: print_analysis(cards, dealer=dealer, score=score, sims=sims, seed=seed,
                                json_out=json_out))


@app.command()
def evaluate(
    agent: Annotated[str, typer.Option(help="agent name or checkpoint path")],
    opponent: Annotated[str, typer.Option(help="opponent name or checkpoint path")] = "standard",
    games: Annotated[int, typer.Option(help="games to play")] = 1000,
    seed: Annotated[int, typer.Option(help="seed: same seed, same report", min=0)] = 0,
    json_path: Annotated[Path | None, typer.Option("--json", help="write the report here")] = None,
    duplicate: Annotated[bool, typer.Option(help="play each deal sequence from both seats")] = False,
    workers: Annotated[int, typer.Option(help="worker processes")] = 1,
    record: Annotated[Path | None, typer.Option(
        help="write every game here, one JSON line each (crib replay reads it)")] = None,
    ray: Annotated[str | None, typer.Option(
        help="play on Ray: bare --ray starts a local Ray with --workers CPUs, --ray auto joins "
             "this machine's cluster, --ray HOST:PORT another (needs the optional 'ray' extra)")] = None,
) -> None:
    """Play AGENT against OPPONENT and report win rate and points per game with 95% intervals."""
    from crib_cli.evaluate import evaluate_command

    _run(lambda: evaluate_command(agent, opponent, games=games, seed=seed, json_path=json_path,
                                  duplicate=duplicate, workers=workers, record_path=record,
                                  ray=ray))


@app.command()
def tournament(
    agents: Annotated[str, typer.Option(help="comma-separated agent names or checkpoint paths")],
    games: Annotated[int, typer.Option(help="games per pairing")] = 200,
    seed: Annotated[int, typer.Option(min=0)] = 0,
    output: Annotated[Path, typer.Option(help="folder for the heatmap and JSON")] = Path("runs/tournament"),
    workers: Annotated[int, typer.Option()] = 1,
    ray: Annotated[str | None, typer.Option(
        help="play on Ray: bare --ray starts a local Ray with --workers CPUs, --ray auto joins "
             "this machine's cluster, --ray HOST:PORT another (needs the optional 'ray' extra)")] = None,
) -> None:
    """Round robin between agents: win-rate matrix, heatmap PNG and ratings."""
    from crib_cli.tournament import tournament_command

    _run(lambda: tournament_command([a for a in agents.split(",") if a], games=games, seed=seed,
                                    output=output, workers=workers, ray=ray))


@app.command()
def train(
    config: Annotated[Path, typer.Option(help="YAML run config")],
    output_dir: Annotated[Path | None, typer.Option(help="root folder for runs")] = None,
    resume: Annotated[bool, typer.Option(help="continue the latest checkpoint of this run")] = False,
    ray: Annotated[str | None, typer.Option(
        help="record a distillation's (algo distill or exit) games as Ray tasks: bare --ray "
             "starts a local Ray, --ray auto joins this machine's cluster, --ray HOST:PORT "
             "another (needs the optional 'ray' extra)")] = None,
    overrides: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE",
        help="change one field of the config, KEY=VALUE with a dotted KEY (repeatable): "
             "--set train.total_timesteps=200000 --set seed=3")] = None,
) -> None:
    """Train an agent from a YAML config (algo ppo, dmc, distill or exit)."""
    from crib_cli.train import train_command

    _run(lambda: train_command(config, output_dir=output_dir, resume=resume, ray=ray,
                               overrides=overrides or ()))


@app.command()
def sweep(
    config: Annotated[Path, typer.Option(help="YAML run config every trial starts from")],
    space: Annotated[Path, typer.Option(help="YAML search space (see sweeps/example.yaml)")],
    samples: Annotated[int | None, typer.Option(help="trials to draw (default: the space's)")] = None,
    ray: Annotated[str | None, typer.Option(
        help="Ray address: leave out for a local Ray on every core, 'auto' for this machine's "
             "cluster, or HOST:PORT")] = None,
    output_dir: Annotated[Path | None, typer.Option(help="root folder for sweeps")] = None,
    resume: Annotated[bool, typer.Option(help="continue the interrupted sweep of this space")] = False,
) -> None:
    """Search training settings on Ray Tune, each trial a crib train run (optional 'ray' extra)."""
    from crib_cli.sweep import sweep_command

    _run(lambda: sweep_command(config, space, samples=samples, address=ray,
                               output_dir=output_dir, resume=resume))


@app.command()
def plot(
    run_dir: Annotated[Path, typer.Argument(help="a run folder written by crib train")],
    output: Annotated[Path | None, typer.Option(help="PNG path (default RUN_DIR/curves.png)")] = None,
    evals: Annotated[list[Path] | None, typer.Option(
        help="more evaluations to draw, in evals.jsonl's format (repeatable): e.g. a slow "
             "opponent measured afterwards on the run's saved networks")] = None,
) -> None:
    """Draw a run's learning curves to a PNG."""
    from training.plots import plot_command

    _run(lambda: plot_command(run_dir, output=output, extra=evals or ()))


@app.command()
def play(
    opponent: Annotated[str, typer.Option(help="agent name or checkpoint path")] = "standard",
    target: Annotated[int, typer.Option(help="points to win")] = 121,
    seed: Annotated[int | None, typer.Option(help="seed: same seed, same cut and deals",
                                             min=0)] = None,
    practice: Annotated[bool, typer.Option(help="count practice: claim your count first")] = False,
    record: Annotated[Path | None, typer.Option(help="append the finished game to this file")] = None,
    db: Annotated[Path | None, typer.Option(
        help="games file (SQLite; default in your data folder, printed at start)")] = None,
    player: Annotated[str | None, typer.Option(help="your player name (default: login name)")] = None,
) -> None:
    """Play a game against OPPONENT in the terminal (a game left unfinished is continued)."""
    from crib_play.terminal import play_command

    _run(lambda: play_command(opponent, target=target, seed=seed, practice=practice,
                              record_path=record, db_path=db, player=player))


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    record: Annotated[Path | None, typer.Option(help="append every finished game here")] = None,
    db: Annotated[Path | None, typer.Option(
        help="games file (SQLite; default in your data folder, printed at start)")] = None,
) -> None:
    """Serve the web page: play any agent in a browser, count practice, replays."""
    def start() -> None:
        if record is not None:
            from agents.files import check_output_file

            check_output_file(record, "--record")  # before the server starts
        try:
            from crib_play.server import serve_command
        except ImportError as err:  # fastapi / uvicorn come with the play extra
            raise ValueError(f"crib serve needs the play extra (pip install -e '.[play]'): "
                             f"{err}") from err
        serve_command(host=host, port=port, record_path=record, db_path=db)

    _run(start)


@app.command()
def stats(
    player: Annotated[str | None, typer.Option(help="only this player (default: every player)")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
    db: Annotated[Path | None, typer.Option(help="games file (default in your data folder)")] = None,
) -> None:
    """Your statistics by opponent: wins with intervals, skunks, points per deal, discard regret."""
    from crib_play.stats_report import stats_command

    _run(lambda: stats_command(db_path=db, player=player, json_out=json_out))


@app.command()
def replay(
    file: Annotated[Path, typer.Argument(help="recorded games (crib evaluate --record, crib play)")],
    game: Annotated[int, typer.Option(help="which game of the file, from 0")] = 0,
) -> None:
    """Show one recorded game move by move, both hands visible."""
    from crib_play.terminal import replay_command

    _run(lambda: replay_command(file, game=game))


@app.command()
def review(
    file: Annotated[Path, typer.Argument(help="recorded games (crib evaluate --record, crib play)")],
    game: Annotated[int, typer.Option(help="which game of the file, from 0")] = 0,
    seat: Annotated[int, typer.Option(help="whose decisions: 0 (players[0], the person in "
                                           "games of crib play and crib serve) or 1")] = 0,
    sims: Annotated[int, typer.Option(
        help="simulations of the rest of the deal per throw")] = 2000,
    agent: Annotated[str, typer.Option(
        help="the agent that values each play (champion-search, with settings after a colon)")]
        = "champion-search",
    seed: Annotated[int, typer.Option(help="seed of the simulations and the agent", min=0)] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="print the review as JSON")] = False,
) -> None:
    """Review a recorded game: each decision, the best choice, and the chance to win of each."""
    from crib_play.review_report import review_command

    _run(lambda: review_command(file, game=game, seat=seat, sims=sims, agent=agent, seed=seed,
                                json_out=json_out))


@app.command(context_settings={"allow_interspersed_args": True})
def odds(
    args: Annotated[list[str] | None, typer.Argument(
        help="SCORE OPPONENT_SCORE to look up, or `build` to make the table")] = None,
    dealer: Annotated[bool | None, typer.Option(
        "--dealer/--pone", help="SCORE's side deals next / the opponent deals next")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the lookup as JSON")] = False,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="write a heatmap PNG here")] = None,
    traces: Annotated[int, typer.Option(help="build: deal traces to record")] = 400_000,
    seed: Annotated[int, typer.Option(help="build: seed of the deals", min=0)] = 0,
    output: Annotated[Path | None, typer.Option(help="build: where to write the table")] = None,
    table: Annotated[Path | None, typer.Option(help="table file (default: the packaged one)")] = None,
) -> None:
    """Chance to win from a board position: `crib odds 95 100 --dealer`; `crib odds build`."""
    from crib_cli.odds import odds_command

    _run(lambda: odds_command(args or [], dealer, json_out, plot_path, traces, seed, output, table))


def _run(command) -> None:
    """Show bad input as one clear line and exit 2, instead of a traceback; a training stopped by
    SIGINT / SIGTERM (saved, see training.trainer) exits 130 / 143."""
    from training.interrupt import TrainingInterrupted

    try:
        command()
    except (ValueError, FileNotFoundError) as err:
        typer.secho(f"error: {err}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from err
    except TrainingInterrupted as err:
        raise typer.Exit(err.exit_code) from err
    except KeyboardInterrupt as err:
        typer.secho("interrupted", err=True, fg=typer.colors.RED)
        raise typer.Exit(130) from err


def _bare_option(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with ``value`` put after a bare ``option`` (one followed by nothing or by another
    option): click has no options whose value may be left out, and ``--ray`` alone means a local
    Ray."""
    out = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg == option and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append(value)
    return out


def main(argv: list[str] | None = None) -> None:
    import sys

    from training.ray_backend import LOCAL

    app(args=_bare_option(list(sys.argv[1:] if argv is None else argv), "--ray", LOCAL))


if __name__ == "__main__":
    main()
