"""Head-to-head evaluation of two agents: the library behind ``crib evaluate`` and training's
periodic evaluations.

``evaluate(agent, opponent, games, seed)`` plays ``games`` full games (no env wrapper, for speed)
and returns an ``EvaluationReport``: wins, win rate with a Wilson 95% interval, mean final margin
(agent minus opponent) with a 95% interval, skunks, points per deal by role, discard regret against
the exact analyzer, and throughput.

This module checks the arguments and composes three parts, each with one job:

* ``training.eval_plans``: who plays whom: each game's engine seed, seats, first dealer and (in
  duplicate mode) scripted deals, all a function of ``seed`` and the game index;
* ``training.eval_play``: running the games in blocks on the compiled core
  (``training.batch_play``; an agent that keeps memory plays one copy per game,
  ``training.per_row``), in this process, a process pool or on Ray (``training.ray_backend``);
* ``training.eval_report``: one game's figures and the report (its JSON is ``to_dict``).

The rich tables and ``crib evaluate`` itself are the command line's (``crib_cli.evaluate``).
Every figure in the report except the timing (``VOLATILE_KEYS``: ``seconds``,
``games_per_second``, ``workers``, ``ms_per_decision``) is reproducible: the same seed gives the
same report for any ``workers``, locally or on Ray.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor

from crib_env.game import DEFAULT_TARGET

from .eval_plans import SCRIPTED_DEALS, GamePlan, derive_seed, draw_deals, game_plan
from .eval_play import (
    BLOCK_GAMES,
    AgentRef,
    Block,
    agent_name,
    build_agent,
    check_count,
    play_game,
    process_pool,
    run_blocks,
)
from .eval_report import (
    VOLATILE_KEYS,
    EvaluationReport,
    GameResult,
    deal_win_probability,
    exact_regret_fn,
    game_result,
    summarize,
)
from .limits import check_games


def evaluate(
    agent: AgentRef,
    opponent: AgentRef,
    games: int,
    seed: int = 0,
    duplicate: bool = False,
    workers: int = 1,
    progress: bool = True,
    target: int = DEFAULT_TARGET,
    regret: bool = True,
    pool: Executor | None = None,
    record_games: bool = False,
) -> EvaluationReport:
    """Play ``games`` games of ``agent`` against ``opponent`` and report from the agent's side.

    ``agent`` / ``opponent``: a spec for ``agents.registry.make_agent`` (a name or a checkpoint
    path) or an ``Agent`` object. ``duplicate`` needs an even ``games``. ``workers > 1`` spreads
    blocks of games over processes (or over ``pool`` if given, e.g. one pool for a whole
    tournament); the report is the same for any ``workers``. ``regret`` computes discard regret
    with the exact analyzer (costs time per deal). ``progress`` shows a progress bar on stderr.
    The games of a block are played together on the compiled core; an agent that keeps memory
    between decisions (the expert, ``champion-search``) plays one copy per game, so it decides as
    it would playing each game alone.
    ``record_games`` keeps every game as a ``training.record`` record in ``report.records``
    (off: no cost to the games).
    Raises ``ValueError`` naming the problem for bad counts and unknown or unreadable agents.
    """
    check_count("games", games)
    check_games(games, "games")  # every result is kept for the report: bound the memory
    check_count("workers", workers)
    check_count("target", target)
    if duplicate and games % 2:
        raise ValueError(f"games must be even with duplicate (each deal sequence is played twice, "
                         f"seats swapped), got {games}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    for ref in (agent, opponent):
        if isinstance(ref, str):
            build_agent(ref, seed=0)  # fail here, with a clear message, not in a worker
        elif not callable(getattr(ref, "act", None)) or not callable(getattr(ref, "reset", None)):
            raise ValueError(f"agent must be a spec string or have act() and reset(), got {ref!r}")

    blocks = [Block(b, start, min(start + BLOCK_GAMES, games), agent, opponent, seed, duplicate,
                    target, regret, record_games)
              for b, start in enumerate(range(0, games, BLOCK_GAMES))]
    from tqdm.auto import tqdm

    started = time.perf_counter()
    with tqdm(total=games, desc=f"{agent_name(agent)} vs {agent_name(opponent)}", unit="game",
              disable=not progress, leave=False, dynamic_ncols=True) as bar:
        results = run_blocks(blocks, workers, pool, bar.update)
    seconds = time.perf_counter() - started

    report = summarize(results, agent_name(agent), agent_name(opponent), seed, duplicate,
                       target, regret)
    report.seconds = seconds
    report.games_per_second = games / seconds if seconds > 0 else math.inf
    report.workers = workers
    if record_games:
        report.records = [r.record for r in results]
    return report


__all__ = ["BLOCK_GAMES", "SCRIPTED_DEALS", "VOLATILE_KEYS", "EvaluationReport",
           "GamePlan", "GameResult", "build_agent", "deal_win_probability", "derive_seed",
           "draw_deals", "evaluate", "exact_regret_fn", "game_plan", "game_result", "play_game",
           "process_pool", "summarize"]
