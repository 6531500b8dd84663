"""Evaluation games played together on the compiled rules core (``crib_env.fast``).

``play_games(agent, opponent, plans)`` plays every game of ``plans`` (``eval_plans.GamePlan``) at once:
row ``b`` of one ``crib_env.fast`` state array is game ``b``. On each turn one compiled call encodes
the observation of the player to move in every row, and each side acts on all of its rows in one
call (``act_rows``). The rules, the observation vector and the mask are those of the plain engine
(``tests/test_fast_differential.py``); scripted deals are dealt as scripted, and any deal past them
comes from each row's own stream, so past its scripted deals a game here and a game through
``Game`` with the same plan go different ways.

A side is either an agent without per-game memory (``per_row.is_stateless``: it acts on all its
rows with ``act_batch`` where it has one, else ``act`` row by row, one object for all games) or a
``per_row.PerRowAgent``: one copy of an agent that remembers per row, fed that row's observations
in order, so it decides as it would playing the game alone. Each game comes back as a plain
``Game`` in its final state whose ``records`` hold every deal, which is what
``eval_report.game_result`` reads.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from crib_env import fast
from crib_env.cards import N_CARDS
from crib_env.game import DEFAULT_TARGET, DealRecord, Game, ScriptedDeal
from crib_env.observation import OBS_SIZE

from .eval_plans import GamePlan
from .per_row import PerRowAgent, is_stateless

#: a side's time choosing cards in one game: [seconds, decisions]
SideClock = list[float]
#: ``on_turn(S, live, observations, masks, actions)`` of ``play_games``
TurnHook = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


def act_rows(agent: Any, rows: np.ndarray, observations: np.ndarray,
             masks: np.ndarray) -> np.ndarray:
    """One card for each of ``rows`` (game rows; ``observations[i]`` and ``masks[i]`` are row
    ``rows[i]``'s): a ``PerRowAgent``'s copies one by one, else ``agent.act_batch`` if it has one,
    else ``agent.act`` on each row."""
    if isinstance(agent, PerRowAgent):
        return agent.act_rows(rows, observations, masks)
    batch = getattr(agent, "act_batch", None)
    if batch is not None:
        return np.asarray(batch(observations, masks), dtype=np.int64)
    return np.array([agent.act(o, m) for o, m in zip(observations, masks, strict=True)],
                    dtype=np.int64)


def _start_scripted_deal(S: np.ndarray, b: int, deal: ScriptedDeal) -> None:
    fast.set_deal(S, b, fast.bits_of(deal.hands[0]), fast.bits_of(deal.hands[1]), deal.starter)


@contextmanager
def torch_single_thread() -> Iterator[None]:
    """Run torch on one thread while games play in this process, then restore the setting.

    A side's forward pass covers one step's rows (a few hundred at most), where a second thread
    gains little alone (a hand-reader chunk of 200 games: 35 s on two threads, 38 s on one) and
    two processes side by side each with two threads fight over the cores (5 minutes a chunk each,
    37 s on one thread).
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


@torch_single_thread()
def play_games(agent: Any, opponent: Any, plans: Sequence[GamePlan],
               target: int = DEFAULT_TARGET,
               trace: list[list[int]] | None = None,
               clock: list[list[SideClock]] | None = None,
               on_game: Callable[[int], None] | None = None,
               on_turn: TurnHook | None = None) -> list[Game]:
    """Play the games of ``plans`` together (see the module docstring); each side is stateless or
    a ``PerRowAgent``. Returns the finished games in plan order. An illegal card raises
    ``ValueError`` naming the side and the game. ``trace``, if given, is filled with one list per
    plan: every card played or discarded in that game, in order (what ``training.record``
    replays; the returned games keep no log). ``on_turn(S, live, observations, masks, actions)``,
    if given, sees each turn before it is stepped: the live rows, their movers' observations and
    masks, and the cards chosen (``actions[live]``). ``clock``, if given, is filled with one
    ``[agent [seconds, decisions], opponent [seconds, decisions]]`` per plan: a per-row side's
    calls are timed one by one, a batch call's time is shared equally by its rows. ``on_game(1)``
    is told as each game ends (a progress bar)."""
    for side, player in (("agent", agent), ("opponent", opponent)):
        if not (isinstance(player, PerRowAgent) or is_stateless(player)):
            raise ValueError(f"{side} {getattr(player, 'name', player)!r} keeps memory between "
                             f"decisions (stateless is not True): play it as a "
                             f"training.per_row.PerRowAgent, one copy per game")
    if isinstance(agent, PerRowAgent) and agent is opponent:
        raise ValueError("one PerRowAgent cannot play both sides: each row's copy would play "
                         "both seats of its game")
    per_row_clocks = []
    for player in {id(agent): agent, id(opponent): opponent}.values():
        if isinstance(player, PerRowAgent):
            player.reset_rows(range(len(plans)))
            player.clock = {} if clock is not None else None
            per_row_clocks.append(player)
        else:
            player.reset()
    if clock is not None:
        clock[:] = [[[0.0, 0], [0.0, 0]] for _ in plans]
    n = len(plans)
    S = fast.new_state(n)
    for b, plan in enumerate(plans):
        # single-deal rows stop after each show, so each deal is recorded before the next starts
        fast.init_game(S, b, plan.game_seed, target, plan.first_dealer, True)
        if plan.deals:
            S[b, fast.DEAL_NO] = 0  # the scripted deal replaces the random one just dealt
            _start_scripted_deal(S, b, plan.deals[0])
    agent_seats = np.array([plan.agent_seat for plan in plans], dtype=np.int64)
    records: list[list[DealRecord]] = [[] for _ in plans]
    games: list[Game | None] = [None] * n
    observations = np.zeros((n, OBS_SIZE), dtype=np.float32)
    masks = np.zeros((n, N_CARDS), dtype=np.int8)
    actions = np.empty(n, dtype=np.int64)
    errors = np.zeros(n, dtype=np.int64)
    if trace is not None:
        trace[:] = [[] for _ in plans]
    while True:
        for b in np.flatnonzero(S[:, fast.PHASE] >= fast.P_DEAL_OVER):
            if games[b] is not None:
                continue
            records[b].append(fast.deal_record(S, b))
            if S[b, fast.PHASE] == fast.P_GAME_OVER:
                game = fast.to_game(S, b)
                game.records = records[b]
                games[b] = game
                if on_game is not None:
                    on_game(1)
                continue
            number = len(records[b])
            if number < len(plans[b].deals):
                S[b, fast.DEALER] = 1 - S[b, fast.DEALER]
                _start_scripted_deal(S, b, plans[b].deals[number])
            else:
                fast.next_deal(S, b)
        live = np.flatnonzero(S[:, fast.PHASE] <= fast.P_PLAY)
        if live.size == 0:
            break
        movers = S[:, fast.TO_MOVE].copy()
        fast.legal_masks(S, masks)
        fast.encode_batch(S, movers, observations)
        actions.fill(-1)
        agent_turn = movers[live] == agent_seats[live]
        for who, player, rows in ((0, agent, live[agent_turn]), (1, opponent, live[~agent_turn])):
            if not rows.size:
                continue
            started = time.perf_counter()
            actions[rows] = act_rows(player, rows, observations[rows], masks[rows])
            if clock is not None and not isinstance(player, PerRowAgent):
                share = (time.perf_counter() - started) / rows.size
                for b in rows.tolist():
                    clock[b][who][0] += share
                    clock[b][who][1] += 1
        # step_batch reads a negative action as "no move in this row": in a live row it is an
        # illegal card (cards past 51 step_batch reports itself)
        negative = live[actions[live] < 0]
        if on_turn is not None and not negative.size:
            on_turn(S, live, observations[live], masks[live], actions)
        fast.step_batch(S, actions, errors)
        errors[negative] = fast.ERR_NOT_LEGAL
        bad = np.flatnonzero(errors)
        if trace is not None and not bad.size:
            for b, card in zip(live.tolist(), actions[live].tolist(), strict=True):
                trace[b].append(card)
        if bad.size:
            b = int(bad[0])
            side = "agent" if movers[b] == agent_seats[b] else "opponent"
            player = agent if side == "agent" else opponent
            raise ValueError(f"{side} {getattr(player, 'name', type(player).__name__)!r} chose an "
                             f"illegal card in game {plans[b].index}: card {int(actions[b])} is "
                             f"not legal for the player to move")
    if clock is not None:
        for player in per_row_clocks:
            who = 0 if player is agent else 1
            for b, (seconds, decisions) in player.clock.items():
                clock[b][who] = [seconds, decisions]
            player.clock = None
    return games  # type: ignore[return-value]  # every row has finished
