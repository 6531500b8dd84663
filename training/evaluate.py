"""Head-to-head evaluation of two agents: the library behind ``crib evaluate`` and training's
periodic evaluations.

``evaluate(agent, opponent, games, seed)`` plays ``games`` full games (no env wrapper, for speed)
and returns an
``EvaluationReport``: wins, win rate with a Wilson 95% interval, mean final margin (agent minus
opponent) with a 95% interval, skunks, points per deal by role, discard regret against the exact
analyzer, and throughput.

Two engines play the games: when both agents are stateless (``agents.base.Agent``), the games of a
block are played together on the compiled core (``training.batch_play``: one encode call per turn
for all of them, one ``act_batch`` per side, e.g. one forward pass of a network); otherwise one at
a time through ``crib_env.game.Game`` + ``observation.encode``. The report names the engine.

How games are laid out (all of it a function of ``seed`` and the game index, never of ``workers``):

* Plain mode: game ``i`` has its own engine seed; the agent deals first in even games and the
  opponent in odd ones, and the seats (player 0 / 1) alternate every two games.
* Duplicate mode (``duplicate=True``): games ``2k`` and ``2k + 1`` play the same pre-drawn deal
  sequence (scripted deals, then the same engine seed for any deal past them) with the seats
  swapped. Player 0 deals first in both, so whatever cards and role the agent had in one game the
  opponent has in the other: the luck of the deal cancels in each pair and the intervals are
  computed over pairs.
* Games run in fixed blocks of ``BLOCK_GAMES`` games. Each block builds its own agents, seeded from
  ``(seed, side, block)``, and resets them before every game; workers only decide which process
  plays which block, so the same seed gives the same report for any ``workers`` (and on Ray:
  ``training.ray_backend.RayPool`` runs the same blocks as Ray tasks). Agent *objects*
  (rather than spec strings) are deep-copied per block, and a ``rng`` attribute holding a numpy
  ``Generator`` or ``random.Random`` is reseeded the same way; with ``workers > 1`` they must be
  picklable.

Every figure in the report except ``seconds``, ``games_per_second`` and ``workers`` is
reproducible (``VOLATILE_KEYS``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from crib_env.cards import DECK
from crib_env.game import DEFAULT_TARGET, Game, ScriptedDeal
from crib_env.observation import encode

from .batch_play import is_stateless, play_games
from .stats import mean_interval, wilson_interval

ENGINES = ("auto", "fast", "game")
BLOCK_GAMES = 20  # games per unit of work (even, so duplicate pairs never straddle two blocks)
SCRIPTED_DEALS = 40  # deals drawn up front per duplicate pair; a game rarely needs more than 25
VOLATILE_KEYS = ("seconds", "games_per_second", "workers")  # the only report keys that vary
SIDES = ("agent", "opponent")
ROLES = ("dealer", "pone")
# Per side and role: summed points of completed deals by category, and how many deals.
_PEG, _HAND, _CRIB, _HEELS, _DEALS = range(5)

AgentRef = str | Agent


# -- seeds and game plans --

def derive_seed(seed: int, *keys: int | str) -> int:
    """A 63-bit seed from ``seed`` and ``keys`` (stable across runs, processes and platforms)."""
    text = ":".join(str(k) for k in (seed, *keys))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True, slots=True)
class GamePlan:
    """How game ``index`` of an evaluation is set up: the engine seed, the agent's seat (player 0
    or 1), the first dealer (a seat) and any scripted deals (by seat)."""

    index: int
    game_seed: int
    agent_seat: int
    first_dealer: int
    deals: tuple[ScriptedDeal, ...] = ()

    @property
    def agent_deals_first(self) -> bool:
        return self.first_dealer == self.agent_seat


def draw_deals(seed: int, count: int = SCRIPTED_DEALS) -> tuple[ScriptedDeal, ...]:
    """``count`` random deals (six cards to each seat and a starter, 13 distinct cards each)."""
    rng = random.Random(seed)
    deals = []
    for _ in range(count):
        cards = rng.sample(DECK, 13)
        deals.append(ScriptedDeal((tuple(cards[0:6]), tuple(cards[6:12])), cards[12]))
    return tuple(deals)


def game_plan(seed: int, index: int, duplicate: bool = False) -> GamePlan:
    """The set-up of game ``index`` (see the module docstring for the layout)."""
    if duplicate:
        pair = index // 2
        agent_seat = index % 2  # the second game of a pair swaps the seats ...
        # ... over the same deals, with player 0 dealing first in both games.
        return GamePlan(index, derive_seed(seed, "pair", pair), agent_seat, 0,
                        draw_deals(derive_seed(seed, "deals", pair)))
    agent_seat = (index // 2) % 2
    agent_first = index % 2 == 0
    first_dealer = agent_seat if agent_first else 1 - agent_seat
    return GamePlan(index, derive_seed(seed, "game", index), agent_seat, first_dealer)


def play_game(agent: Agent, opponent: Agent, plan: GamePlan,
              target: int = DEFAULT_TARGET) -> Game:
    """Reset both agents and play one game to the end as ``plan`` says; returns the finished game
    (its ``records`` hold the cards dealt, discards and points of every deal)."""
    players: list[Agent] = [opponent, opponent]
    players[plan.agent_seat] = agent
    for player in {id(p): p for p in players}.values():
        player.reset()
    game = Game(target=target, seed=plan.game_seed, first_dealer=plan.first_dealer,
                deals=plan.deals)
    while not game.is_over:
        seat = game.to_move
        mask = game.legal_mask()
        card = players[seat].act(encode(game, seat), mask)
        try:
            game.step(int(card))
        except ValueError as err:  # IllegalActionError: a bug in the agent, say whose
            side = SIDES[0] if seat == plan.agent_seat else SIDES[1]
            name = getattr(players[seat], "name", type(players[seat]).__name__)
            raise type(err)(f"{side} {name!r} chose an illegal card in game {plan.index}: "
                            f"{err}") from err
    return game


# -- one game's figures --

@dataclass(slots=True)
class GameResult:
    """What the report needs from one finished game (small, so it pickles cheaply)."""

    index: int
    agent_deals_first: bool
    agent_score: int
    opponent_score: int
    skunk: bool
    double_skunk: bool
    deals: int
    #: role_points[side][role] = [pegging, hand, crib, heels, completed deals]
    role_points: list[list[list[int]]]
    #: regret[side] = [summed regret, discards analyzed]
    regret: list[list[float]]
    #: the game as ``training.record`` writes it, when the evaluation records games
    record: dict[str, Any] | None = None
    #: the agent's win probability added per deal (``deal_win_probability``): [as dealer, dealer
    #: deals, as pone, pone deals]; None without the win-odds table
    winprob: list[float] | None = None

    @property
    def agent_won(self) -> bool:
        return self.agent_score > self.opponent_score

    @property
    def margin(self) -> int:
        return self.agent_score - self.opponent_score


RegretFn = Callable[[Sequence[int], Sequence[int], bool], float]


def game_result(game: Game, plan: GamePlan, regret_fn: RegretFn | None = None) -> GameResult:
    """Summarise a finished game from the agent's side of ``plan``."""
    seat = plan.agent_seat
    role_points = [[[0] * 5 for _ in ROLES] for _ in SIDES]
    regret = [[0.0, 0.0] for _ in SIDES]
    for record in game.records:
        for player in (0, 1):
            side = 0 if player == seat else 1
            is_dealer = player == record.dealer
            if regret_fn is not None and len(record.discards[player]) == 2:
                regret[side][0] += regret_fn(record.hands[player], record.discards[player],
                                             is_dealer)
                regret[side][1] += 1
            if not record.completed:  # a deal cut short by the game's end would bias the means
                continue
            acc = role_points[side][0 if is_dealer else 1]
            acc[_PEG] += record.pegging[player]
            acc[_HAND] += record.hand[player]
            if is_dealer:
                acc[_CRIB] += record.crib
                acc[_HEELS] += record.heels
            acc[_DEALS] += 1
    winprob = deal_win_probability(game, seat)
    return GameResult(
        index=plan.index,
        agent_deals_first=plan.agent_deals_first,
        agent_score=game.scores[seat],
        opponent_score=game.scores[1 - seat],
        skunk=game.skunk,
        double_skunk=game.double_skunk,
        deals=len(game.records),
        role_points=role_points,
        regret=regret,
        winprob=winprob,
    )


@lru_cache(maxsize=1)
def _odds_table() -> Any:
    from crib_env.odds import OddsTableError, default_table

    try:
        return default_table()
    except OddsTableError:
        return None  # reported as unavailable, never guessed


def deal_win_probability(game: Game, seat: int) -> list[float] | None:
    """For each deal, the change in ``seat``'s chance to win from the win-odds table: from the
    deal's start (scores, who deals) to the next deal's start, or to 1 / 0 when the deal ends the
    game. Summed by role: [as dealer, dealer deals, as pone, pone deals]. Under the table's own
    strategy (standard vs standard) each deal's change averages zero, so the mean says how much
    win probability a side adds per deal over that level, and in which role. None without the
    table or for a target other than the table's."""
    table = _odds_table()
    if table is None or game.target != table.target:
        return None
    out = [0.0, 0.0, 0.0, 0.0]
    scores = [0, 0]
    for record in game.records:
        before = table.win_probability(scores[seat], scores[1 - seat], record.dealer == seat)
        for player in (0, 1):
            scores[player] = min(scores[player] + record.points(player), game.target)
        if max(scores) >= game.target:
            after = 1.0 if scores[seat] >= game.target else 0.0
        else:  # the next deal is dealt by this deal's pone
            after = table.win_probability(scores[seat], scores[1 - seat], record.dealer != seat)
        role = 0 if record.dealer == seat else 2
        out[role] += after - before
        out[role + 1] += 1
    return out


def exact_regret_fn() -> RegretFn | None:
    """Expected points a discard gives away against the best one by the exact analyzer
    (``agents.analysis.analyze_discards``), or None while that analyzer is not available."""
    try:
        from agents.analysis import analyze_discards
    except ImportError:
        return None

    # Duplicate mode deals every hand twice, so a small cache halves the analyzer's work there.
    @lru_cache(maxsize=1024)
    def regrets(hand: tuple[int, ...], dealer: bool) -> dict[frozenset[int], float]:
        options = analyze_discards(hand, dealer)
        best = float(options[0].net)
        return {frozenset(o.discard): max(0.0, best - float(o.net)) for o in options}

    def regret(hand: Sequence[int], discard: Sequence[int], dealer: bool) -> float:
        by_discard = regrets(tuple(sorted(hand)), dealer)
        try:
            return by_discard[frozenset(discard)]
        except KeyError:
            raise ValueError(f"discard {sorted(discard)} is not one of the analyzer's options "
                             f"for hand {sorted(hand)}") from None

    return regret


# -- blocks of games (the unit of work for a process) --

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
    agent = copy.deepcopy(ref)
    rng = getattr(agent, "rng", None)
    if isinstance(rng, np.random.Generator):
        agent.rng = np.random.default_rng(seed)
    elif isinstance(rng, random.Random):
        agent.rng = random.Random(seed)
    return agent


@dataclass(frozen=True, slots=True)
class _Block:
    number: int
    start: int
    stop: int
    agent: AgentRef
    opponent: AgentRef
    seed: int
    duplicate: bool
    target: int
    regret: bool
    engine: str
    record: bool = False


def _game_record(game: Game, plan: GamePlan, block: _Block,
                 actions: Sequence[int] | None = None) -> dict[str, Any]:
    from .record import game_record

    names = [_agent_name(block.opponent)] * 2
    names[plan.agent_seat] = _agent_name(block.agent)
    return game_record(game, names, plan.first_dealer, actions,
                       evaluation={"index": plan.index, "seed": block.seed,
                                   "agent_seat": plan.agent_seat, "engine": block.engine})


def _run_block(block: _Block, on_game: Callable[[int], None] | None = None) -> list[GameResult]:
    agent = _instantiate(block.agent, derive_seed(block.seed, "agent", block.number))
    opponent = _instantiate(block.opponent, derive_seed(block.seed, "opponent", block.number))
    regret_fn = exact_regret_fn() if block.regret else None
    plans = [game_plan(block.seed, index, block.duplicate)
             for index in range(block.start, block.stop)]
    if block.engine == "fast":  # the block's games together on the compiled core
        trace: list[list[int]] | None = [] if block.record else None
        games = play_games(agent, opponent, plans, block.target, trace=trace)
        if on_game is not None:
            on_game(len(games))
        results = [game_result(game, plan, regret_fn)
                   for game, plan in zip(games, plans, strict=True)]
        if trace is not None:  # the compiled core keeps no log: the record replays the moves
            for result, game, plan, actions in zip(results, games, plans, trace, strict=True):
                result.record = _game_record(game, plan, block, actions)
        return results
    results = []
    for plan in plans:
        game = play_game(agent, opponent, plan, block.target)
        results.append(game_result(game, plan, regret_fn))
        if block.record:
            results[-1].record = _game_record(game, plan, block)
        if on_game is not None:
            on_game(1)
    return results


@contextmanager
def _torch_single_thread() -> Iterator[None]:
    """Run torch on one thread while games play in this process, then restore the setting.

    Policies run one observation at a time, where torch's thread pool only adds overhead: on 2 busy
    cores a small checkpoint played 4x faster with one thread than with two.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _init_worker() -> None:
    # One thread per process: the workers already fill the cores (matters for torch policies).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool suitable for ``evaluate(..., pool=...)``. It uses "spawn" processes, which are safe
    when the caller has torch threads running (a trainer)."""
    _check_count("workers", workers)
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker)


# -- the report --

def _r(x: float) -> float:
    return round(float(x), 6)


@dataclass
class EvaluationReport:
    """The result of ``evaluate``. ``to_dict()`` is the JSON of ``crib evaluate --json``."""

    agent: str
    opponent: str
    games: int
    seed: int
    duplicate: bool
    target: int
    wins: int
    losses: int
    win_rate: float
    win_rate_ci95: tuple[float, float]
    points_per_game: float  # mean final margin, agent minus opponent
    points_per_game_ci95: tuple[float, float]
    #: duplicate mode: the win-rate interval over pairs (Wilson treats games as independent,
    #: which is conservative when the deals are shared); None in plain mode
    win_rate_ci95_paired: tuple[float, float] | None
    mean_score: float
    mean_opponent_score: float
    skunks_given: int
    skunks_taken: int
    double_skunks_given: int
    double_skunks_taken: int
    first_dealer_wins: int  # games won by whichever side dealt first
    deals_per_game: float
    #: per_deal[side][role] = {"pegging", "hand", "crib", "heels", "total", "deals"}: mean points
    #: per completed deal (a deal cut short by the game's end is left out)
    per_deal: dict[str, dict[str, dict[str, float]]]
    #: mean expected points lost per discard against the exact analyzer, by side; None if the
    #: analyzer is unavailable or regret was switched off
    discard_regret: dict[str, float] | None
    #: the agent's mean win probability added per deal by role (``deal_win_probability``):
    #: {"dealer", "pone", "all"}; None without the win-odds table
    winprob_per_deal: dict[str, float] | None = None
    engine: str = "game"  # "fast" (compiled core, games interleaved) or "game" (plain engine)
    seconds: float = 0.0
    games_per_second: float = 0.0
    workers: int = 1
    margins: list[int] = field(default_factory=list, repr=False)  # per game, in index order
    #: per game, in index order, when ``evaluate(record_games=True)`` (``training.record``)
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_dict(self, volatile: bool = True) -> dict[str, Any]:
        """JSON-ready dict; ``volatile=False`` leaves out the timing keys (``VOLATILE_KEYS``)."""
        out: dict[str, Any] = {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "win_rate": _r(self.win_rate),
            "win_rate_ci95": [_r(v) for v in self.win_rate_ci95],
            "points_per_game": _r(self.points_per_game),
            "points_per_game_ci95": [_r(v) for v in self.points_per_game_ci95],
            "win_rate_ci95_paired": (None if self.win_rate_ci95_paired is None
                                     else [_r(v) for v in self.win_rate_ci95_paired]),
            "seed": self.seed,
            "duplicate": self.duplicate,
            "target": self.target,
            "engine": self.engine,
            "mean_score": _r(self.mean_score),
            "mean_opponent_score": _r(self.mean_opponent_score),
            "skunks_given": self.skunks_given,
            "skunks_taken": self.skunks_taken,
            "double_skunks_given": self.double_skunks_given,
            "double_skunks_taken": self.double_skunks_taken,
            "first_dealer_wins": self.first_dealer_wins,
            "deals_per_game": _r(self.deals_per_game),
            "per_deal": {side: {role: {k: _r(v) for k, v in values.items()}
                                for role, values in roles.items()}
                         for side, roles in self.per_deal.items()},
            "discard_regret": (None if self.discard_regret is None
                               else {k: _r(v) for k, v in self.discard_regret.items()}),
            "winprob_per_deal": (None if self.winprob_per_deal is None
                                 else {k: _r(v) for k, v in self.winprob_per_deal.items()}),
        }
        if volatile:
            out.update(seconds=_r(self.seconds), games_per_second=_r(self.games_per_second),
                       workers=self.workers)
        return out

    def to_json(self, volatile: bool = True) -> str:
        return json.dumps(self.to_dict(volatile), indent=2)

    def tables(self) -> list[Any]:
        """Rich tables: the summary and the points per deal by role."""
        from rich.table import Table

        mode = "duplicate" if self.duplicate else "seats alternating"
        summary = Table(title=f"{self.agent} vs {self.opponent}: {self.games} games "
                              f"(seed {self.seed}, {mode}, to {self.target}, {self.engine} engine)",
                        show_header=False, title_justify="left")
        summary.add_column("figure", style="bold")
        summary.add_column("value", justify="right")
        lo, hi = self.win_rate_ci95
        summary.add_row("wins - losses", f"{self.wins} - {self.losses}")
        summary.add_row("win rate (Wilson 95%)", f"{self.win_rate:.1%}  [{lo:.1%}, {hi:.1%}]")
        if self.win_rate_ci95_paired is not None:
            plo, phi = self.win_rate_ci95_paired
            summary.add_row("win rate (95%, over pairs)", f"[{plo:.1%}, {phi:.1%}]")
        lo, hi = self.points_per_game_ci95
        summary.add_row("points per game (margin, 95%)",
                        f"{self.points_per_game:+.2f}  [{lo:+.2f}, {hi:+.2f}]")
        summary.add_row("mean score", f"{self.mean_score:.1f} - {self.mean_opponent_score:.1f}")
        summary.add_row("skunks given / taken", f"{self.skunks_given} / {self.skunks_taken}")
        summary.add_row("double skunks given / taken",
                        f"{self.double_skunks_given} / {self.double_skunks_taken}")
        summary.add_row("first dealer won", f"{self.first_dealer_wins / self.games:.1%}")
        summary.add_row("deals per game", f"{self.deals_per_game:.1f}")
        if self.discard_regret is None:
            summary.add_row("discard regret", "n/a (exact analyzer unavailable)")
        else:
            summary.add_row("discard regret (points per discard)",
                            f"{self.discard_regret['agent']:.3f} / "
                            f"{self.discard_regret['opponent']:.3f}")
        if self.winprob_per_deal is None:
            summary.add_row("win probability added per deal", "n/a (no win-odds table)")
        else:
            w = self.winprob_per_deal
            summary.add_row("win chance added per deal (dealer / pone / all)",
                            f"{w['dealer']:+.2%} / {w['pone']:+.2%} / {w['all']:+.2%}")
        summary.add_row("games per second",
                        f"{self.games_per_second:.1f} ({self.workers} worker"
                        f"{'s' if self.workers != 1 else ''})")

        roles = Table(title="points per completed deal, by role", title_justify="left")
        for column in ("side", "role", "pegging", "hand", "crib", "heels", "total", "deals"):
            roles.add_column(column, justify="left" if column in ("side", "role") else "right")
        for side, name in zip(SIDES, (self.agent, self.opponent), strict=True):
            for role in ROLES:
                v = self.per_deal[side][role]
                dealer = role == "dealer"
                roles.add_row(f"{side} ({name})", role, f"{v['pegging']:.2f}", f"{v['hand']:.2f}",
                              f"{v['crib']:.2f}" if dealer else "",
                              f"{v['heels']:.2f}" if dealer else "",
                              f"{v['total']:.2f}", str(int(v["deals"])))
        return [summary, roles]

    def print(self, console: Any = None) -> None:
        from rich.console import Console

        console = console or Console()
        for table in self.tables():
            console.print(table)


def _agent_name(ref: AgentRef) -> str:
    if isinstance(ref, str):
        return ref.strip()
    return str(getattr(ref, "name", type(ref).__name__))


def summarize(results: Sequence[GameResult], agent: str, opponent: str, seed: int,
              duplicate: bool, target: int, regret: bool) -> EvaluationReport:
    """Build the report from per-game results (in index order)."""
    n = len(results)
    margins = [r.margin for r in results]
    wins = sum(r.agent_won for r in results)
    win_rate = wins / n
    limits = (-float(target), float(target))
    if duplicate:
        # Games 2k and 2k+1 share their deals: the pair, not the game, is the independent unit.
        pair_margins = [(margins[i] + margins[i + 1]) / 2 for i in range(0, n, 2)]
        pair_wins = [(results[i].agent_won + results[i + 1].agent_won) / 2 for i in range(0, n, 2)]
        points, lo, hi = mean_interval(pair_margins, limits)
        _, wlo, whi = mean_interval(pair_wins, (0.0, 1.0))
        paired: tuple[float, float] | None = (wlo, whi)
    else:
        points, lo, hi = mean_interval(margins, limits)
        paired = None

    per_deal: dict[str, dict[str, dict[str, float]]] = {}
    for s, side in enumerate(SIDES):
        per_deal[side] = {}
        for ro, role in enumerate(ROLES):
            sums = [sum(r.role_points[s][ro][k] for r in results) for k in range(5)]
            deals = sums[_DEALS]
            mean = [x / deals if deals else 0.0 for x in sums[:_DEALS]]
            per_deal[side][role] = {"pegging": mean[_PEG], "hand": mean[_HAND],
                                    "crib": mean[_CRIB], "heels": mean[_HEELS],
                                    "total": sum(mean), "deals": float(deals)}

    discard_regret = None
    if regret and any(r.regret[0][1] for r in results):
        discard_regret = {}
        for s, side in enumerate(SIDES):
            count = sum(r.regret[s][1] for r in results)
            discard_regret[side] = math.fsum(r.regret[s][0] for r in results) / count

    winprob_per_deal = None
    if results and all(r.winprob is not None for r in results):
        sums = [math.fsum(r.winprob[k] for r in results) for k in range(4)]
        winprob_per_deal = {"dealer": sums[0] / max(sums[1], 1), "pone": sums[2] / max(sums[3], 1),
                            "all": (sums[0] + sums[2]) / max(sums[1] + sums[3], 1)}

    return EvaluationReport(
        agent=agent, opponent=opponent, games=n, seed=seed, duplicate=duplicate, target=target,
        wins=wins, losses=n - wins, win_rate=win_rate,
        win_rate_ci95=wilson_interval(wins, n),
        points_per_game=points, points_per_game_ci95=(lo, hi),
        win_rate_ci95_paired=paired,
        mean_score=sum(r.agent_score for r in results) / n,
        mean_opponent_score=sum(r.opponent_score for r in results) / n,
        skunks_given=sum(r.skunk and r.agent_won for r in results),
        skunks_taken=sum(r.skunk and not r.agent_won for r in results),
        double_skunks_given=sum(r.double_skunk and r.agent_won for r in results),
        double_skunks_taken=sum(r.double_skunk and not r.agent_won for r in results),
        first_dealer_wins=sum(r.agent_won == r.agent_deals_first for r in results),
        deals_per_game=sum(r.deals for r in results) / n,
        per_deal=per_deal,
        discard_regret=discard_regret,
        winprob_per_deal=winprob_per_deal,
        margins=margins,
    )


# -- the library function --

def _check_count(option: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{option} must be a positive whole number, got {value!r}")


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
    engine: str = "auto",
    record_games: bool = False,
) -> EvaluationReport:
    """Play ``games`` games of ``agent`` against ``opponent`` and report from the agent's side.

    ``agent`` / ``opponent``: a spec for ``agents.registry.make_agent`` (a name or a checkpoint
    path) or an ``Agent`` object. ``duplicate`` needs an even ``games``. ``workers > 1`` spreads
    blocks of games over processes (or over ``pool`` if given, e.g. one pool for a whole
    tournament); the report is the same for any ``workers``. ``regret`` computes discard regret
    with the exact analyzer (costs time per deal). ``progress`` shows a progress bar on stderr.
    ``engine``: ``"fast"`` plays each block's games together on the compiled core
    (``training.batch_play``; both agents must be stateless), ``"game"`` one at a time through
    ``crib_env.game.Game``, ``"auto"`` (default) the first where it can. The two engines deal
    different random cards, so each gives its own (reproducible) report; it is named in the report.
    ``record_games`` keeps every game as a ``training.record`` record in ``report.records``
    (off: no cost to the games).
    Raises ``ValueError`` naming the problem for bad counts and unknown or unreadable agents.
    """
    _check_count("games", games)
    _check_count("workers", workers)
    _check_count("target", target)
    if duplicate and games % 2:
        raise ValueError(f"games must be even with duplicate (each deal sequence is played twice, "
                         f"seats swapped), got {games}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    stateless = []
    for ref in (agent, opponent):
        if isinstance(ref, str):
            ref = build_agent(ref, seed=0)  # fail here, with a clear message, not in a worker
        elif not callable(getattr(ref, "act", None)) or not callable(getattr(ref, "reset", None)):
            raise ValueError(f"agent must be a spec string or have act() and reset(), got {ref!r}")
        stateless.append(is_stateless(ref))
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    if engine == "fast" and not all(stateless):
        side = SIDES[stateless.index(False)]
        raise ValueError(f"engine 'fast' interleaves games, so both agents must be stateless; the "
                         f"{side} keeps memory between decisions (use engine 'game' or 'auto')")
    if engine == "auto":
        engine = "fast" if all(stateless) else "game"

    blocks = [_Block(b, start, min(start + BLOCK_GAMES, games), agent, opponent, seed, duplicate,
                     target, regret, engine, record_games)
              for b, start in enumerate(range(0, games, BLOCK_GAMES))]
    from tqdm.auto import tqdm

    started = time.perf_counter()
    by_block: dict[int, list[GameResult]] = {}
    with tqdm(total=games, desc=f"{_agent_name(agent)} vs {_agent_name(opponent)}", unit="game",
              disable=not progress, leave=False, dynamic_ncols=True) as bar:
        if pool is None and (workers == 1 or len(blocks) == 1):
            with _torch_single_thread():
                for block in blocks:
                    by_block[block.number] = _run_block(block, on_game=bar.update)
        else:
            own = pool is None
            executor = process_pool(min(workers, len(blocks))) if own else pool
            try:
                futures = {executor.submit(_run_block, block): block for block in blocks}
                for future in as_completed(futures):
                    block = futures[future]
                    by_block[block.number] = future.result()
                    bar.update(block.stop - block.start)
            finally:
                if own:
                    executor.shutdown(cancel_futures=True)
    seconds = time.perf_counter() - started

    results = [r for b in sorted(by_block) for r in by_block[b]]
    report = summarize(results, _agent_name(agent), _agent_name(opponent), seed, duplicate,
                       target, regret)
    report.engine = engine
    report.seconds = seconds
    report.games_per_second = games / seconds if seconds > 0 else math.inf
    report.workers = workers
    if record_games:
        report.records = [r.record for r in results]
    return report


def evaluate_command(agent: str, opponent: str, games: int, seed: int = 0,
                     json_path: Path | None = None, duplicate: bool = False,
                     workers: int = 1, engine: str = "auto",
                     record_path: Path | None = None,
                     ray: str | None = None) -> EvaluationReport:
    """``crib evaluate``: run ``evaluate`` with a progress bar, print the tables, write the JSON
    and, with ``record_path``, every game as one JSON line (``training.record``). ``ray``: play the
    blocks as Ray tasks (``training.ray_backend``; ``"local"`` starts a Ray with ``workers`` CPUs,
    ``"auto"`` or an address joins a cluster); the report is the same."""
    from rich.console import Console

    from .files import atomic_write_text, check_output_file

    if json_path is not None:
        json_path = check_output_file(json_path, "--json")  # before any game is played
    if record_path is not None:
        record_path = check_output_file(record_path, "--record")
    pool = None
    if ray is not None:
        from .ray_backend import RayPool

        pool = RayPool(ray, num_cpus=workers)
    try:
        report = evaluate(agent, opponent, games=games, seed=seed, duplicate=duplicate,
                          workers=workers, progress=True, engine=engine, pool=pool,
                          record_games=record_path is not None)
        if pool is not None:
            report.workers = pool.workers
    finally:
        if pool is not None:
            pool.shutdown()
    console = Console()
    report.print(console)
    if json_path is not None:
        atomic_write_text(json_path, report.to_json() + "\n")
        console.print(f"wrote {json_path}")
    if record_path is not None:
        from .record import write_records

        count = write_records(record_path, report.records)
        console.print(f"recorded {count} games to {record_path} (crib replay {record_path})")
    return report


__all__ = ["BLOCK_GAMES", "VOLATILE_KEYS", "EvaluationReport", "GamePlan", "GameResult",
           "build_agent", "derive_seed", "draw_deals", "evaluate", "evaluate_command",
           "exact_regret_fn", "game_plan", "game_result", "play_game", "process_pool", "summarize"]

