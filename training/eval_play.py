"""Running an evaluation's games: the agents of each block, the compiled core, and the workers.

Games run in fixed blocks of ``BLOCK_GAMES`` games (``Block``). Each block builds its own agents,
seeded from ``(seed, side, block)``; workers only decide which process plays which block, so the
same seed gives the same games for any ``workers`` (and on Ray: ``training.ray_backend.RayPool``
runs the same blocks as Ray tasks). Agent *objects* (rather than spec strings) are deep-copied per
block, and a ``rng`` attribute holding a numpy ``Generator`` or ``random.Random`` is reseeded the
same way (``per_row.copy_with_seed``); with ``workers > 1`` they must be picklable.

A block's games are played together on the compiled core (``training.batch_play``: one encode
call per turn for all of them, one call per side). A side that keeps memory between decisions
(``per_row.is_stateless`` false: the expert, ``champion-search``) plays as a
``per_row.PerRowAgent``: one copy per game, seeded from ``(seed, side, "game", game index)``, so
its games do not depend on the blocks either; its time per decision is measured (a report's
``ms_per_decision``), as is the other side's. ``play_game`` plays one game through
``crib_env.game.Game`` (teachers' recordings, ``training.distill``; tests against the core).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from agents.base import Agent
from agents.endgame import near_the_end
from crib_env.game import DEFAULT_TARGET, HAND_SIZE, Game, Phase
from crib_env.observation import encode

from .batch_play import play_games
from .eval_plans import SIDES, GamePlan, derive_seed, game_plan
from .eval_report import GameResult, exact_regret_fn, game_result
from .per_row import PerRowAgent, copy_with_seed, is_stateless

BLOCK_GAMES = 20  # games per unit of work (even, so duplicate pairs never straddle two blocks)

AgentRef = str | Agent


def check_count(option: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``option`` unless ``value`` is a positive whole number."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{option} must be a positive whole number, got {value!r}")


@dataclass(frozen=True)
class Opening:
    """The first part of a game played by ``agent`` in both seats: it hands the game to the two
    players at the first deal that starts with either of them within ``need`` points of the
    target (a recording of the end of the game alone, ``distill.opening``)."""

    agent: Agent
    need: int

    def over(self, game: Game) -> bool:
        """Whether the game has come to the deal where the players take over."""
        return (game.phase == Phase.DISCARD and all(len(h) == HAND_SIZE for h in game.hands)
                and near_the_end(game.target - game.scores[0], game.target - game.scores[1],
                                 self.need))


def play_game(agent: Agent, opponent: Agent, plan: GamePlan,
              target: int = DEFAULT_TARGET, clock: list[list[float]] | None = None,
              opening: Opening | None = None) -> Game:
    """Reset both agents and play one game to the end as ``plan`` says; returns the finished game
    (its ``records`` hold the cards dealt, discards and points of every deal). ``clock``, if
    given, gets each side's seconds spent choosing and decisions made: ``[[agent seconds, agent
    decisions], [opponent seconds, opponent decisions]]``, added to what it holds. ``opening``:
    its agent plays both seats until it hands the game over, and the two players play the rest
    (their decisions alone reach ``clock``)."""
    players: list[Agent] = [opponent, opponent]
    players[plan.agent_seat] = agent
    for player in {id(p): p for p in players}.values():
        player.reset()
    game = Game(target=target, seed=plan.game_seed, first_dealer=plan.first_dealer,
                deals=plan.deals)
    if opening is not None:
        opening.agent.reset()
        while not game.is_over and not opening.over(game):
            game.step(int(opening.agent.act(encode(game, game.to_move), game.legal_mask())))
    while not game.is_over:
        seat = game.to_move
        mask = game.legal_mask()
        observation = encode(game, seat)
        started = time.perf_counter()
        card = players[seat].act(observation, mask)
        if clock is not None:
            side = clock[0 if seat == plan.agent_seat else 1]
            side[0] += time.perf_counter() - started
            side[1] += 1
        try:
            game.step(int(card))
        except ValueError as err:  # IllegalActionError: a bug in the agent, say whose
            side = SIDES[0] if seat == plan.agent_seat else SIDES[1]
            name = getattr(players[seat], "name", type(players[seat]).__name__)
            raise type(err)(f"{side} {name!r} chose an illegal card in game {plan.index}: "
                            f"{err}") from err
    return game


def build_agent(spec: str, seed: int | None = None) -> Agent:
    """``agents.registry.make_agent`` with errors that name the spec: an unknown name, a missing
    path, or a checkpoint that cannot be read all raise ``ValueError``."""
    from agents.registry import make_agent

    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a name or a checkpoint path, got {spec!r}")
    try:
        return make_agent(spec, seed=seed)
    except ValueError:
        raise  # make_agent's and the loader's own messages name the spec and what was expected
    except FileNotFoundError as err:  # e.g. a folder that holds no checkpoint files
        raise ValueError(f"agent {spec!r}: {err}") from err
    except ImportError as err:
        raise ValueError(f"agent {spec!r} is not available: {err}") from err
    except Exception as err:  # a loader's failure on a corrupt file can be of any type
        raise ValueError(f"agent {spec!r}: cannot read checkpoint {spec}: "
                         f"{type(err).__name__}: {err}") from err


def _instantiate(ref: AgentRef, seed: int) -> Agent:
    if isinstance(ref, str):
        return build_agent(ref, seed=seed)
    return copy_with_seed(ref, seed)


@dataclass(frozen=True, slots=True)
class Block:
    """Games ``start`` to ``stop`` (exclusive) of an evaluation: the unit of work of a process or
    a Ray task (``training.ray_backend``), picklable."""

    number: int
    start: int
    stop: int
    agent: AgentRef
    opponent: AgentRef
    seed: int
    duplicate: bool
    target: int
    regret: bool
    record: bool = False


def _side_player(ref: AgentRef, block: Block, side: str, plans: Sequence[GamePlan]) -> Any:
    """The block's player for ``side``: one object for a stateless agent, else a copy per game."""
    agent = _instantiate(ref, derive_seed(block.seed, side, block.number))
    if is_stateless(agent):
        return agent
    return PerRowAgent(agent, lambda b: derive_seed(block.seed, side, "game", plans[b].index))


def _game_record(game: Game, plan: GamePlan, block: Block,
                 actions: Sequence[int] | None = None) -> dict[str, Any]:
    from .record import game_record

    names = [agent_name(block.opponent)] * 2
    names[plan.agent_seat] = agent_name(block.agent)
    return game_record(game, names, plan.first_dealer, actions,
                       evaluation={"index": plan.index, "seed": block.seed,
                                   "agent_seat": plan.agent_seat})


def run_block(block: Block, on_game: Callable[[int], None] | None = None) -> list[GameResult]:
    """Play ``block``'s games together on the compiled core; ``on_game(n)`` is told as games
    finish."""
    plans = [game_plan(block.seed, index, block.duplicate)
             for index in range(block.start, block.stop)]
    agent = _side_player(block.agent, block, "agent", plans)
    opponent = _side_player(block.opponent, block, "opponent", plans)
    regret_fn = exact_regret_fn() if block.regret else None
    trace: list[list[int]] | None = [] if block.record else None
    # timed where a side decides one game at a time (a search: what its cost per decision is);
    # with batch sides alone a decision's time is a share of one call, so none is reported
    timed = any(isinstance(p, PerRowAgent) for p in (agent, opponent))
    clock: list[list[list[float]]] | None = [] if timed else None
    games = play_games(agent, opponent, plans, block.target, trace=trace, clock=clock,
                       on_game=on_game)
    results = [game_result(game, plan, regret_fn) for game, plan in zip(games, plans, strict=True)]
    if clock is not None:
        for result, game_clock in zip(results, clock, strict=True):
            result.decision_time = game_clock
    if trace is not None:  # the compiled core keeps no log: the record replays the moves
        for result, game, plan, actions in zip(results, games, plans, trace, strict=True):
            result.record = _game_record(game, plan, block, actions)
    return results


def _init_worker() -> None:
    # One thread per process: the workers already fill the cores (matters for torch policies).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool suitable for ``evaluate(..., pool=...)``. It uses "spawn" processes, which are safe
    when the caller has torch threads running (a trainer)."""
    check_count("workers", workers)
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker)


def agent_name(ref: AgentRef) -> str:
    """The name a report gives an agent spec or object."""
    if isinstance(ref, str):
        return ref.strip()
    return str(getattr(ref, "name", type(ref).__name__))



def run_blocks(blocks: Sequence[Block], workers: int, pool: Executor | None,
               on_games: Callable[[int], None]) -> list[GameResult]:
    """Every block's results, in game order: in this process when ``workers`` is 1 (and no
    ``pool``), else on ``pool`` or a process pool of ``workers``. ``on_games(n)`` is told as games
    finish (a progress bar)."""
    by_block: dict[int, list[GameResult]] = {}
    if pool is None and (workers == 1 or len(blocks) == 1):
        for block in blocks:
            by_block[block.number] = run_block(block, on_game=on_games)
    else:
        own = pool is None
        executor = process_pool(min(workers, len(blocks))) if own else pool
        try:
            futures = {executor.submit(run_block, block): block for block in blocks}
            for future in as_completed(futures):
                block = futures[future]
                by_block[block.number] = future.result()
                on_games(block.stop - block.start)
        finally:
            if own:
                executor.shutdown(cancel_futures=True)
    return [r for b in sorted(by_block) for r in by_block[b]]
