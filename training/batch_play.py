"""Evaluation games played together on the compiled rules core (``crib_env.fast``).

``play_games(agent, opponent, plans)`` plays every game of ``plans`` (``eval_plans.GamePlan``) at once:
row ``b`` of one ``crib_env.fast`` state array is game ``b``. On each turn one compiled call encodes
the observation of the player to move in every row, and each side acts on all of its rows in one
call (``act_rows``: ``act_batch`` where the agent has it, e.g. one network forward pass for all
rows, else ``act`` row by row). The rules, the observation vector and the mask are those of the
plain engine (``tests/test_fast_differential.py``); only the random deals come from each row's own
stream, so a game here and a game through ``Game`` with the same plan are different games.

Only agents without per-game memory can play this way (``is_stateless``: an agent declares
``stateless = True`` when its action depends on the observation and its random stream alone):
games are interleaved, so an agent that remembers earlier observations would mix them up. Each
game comes back as a plain ``Game`` in its final state whose ``records`` hold every deal, which is
what ``eval_report.game_result`` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from crib_env import fast
from crib_env.cards import N_CARDS
from crib_env.game import DEFAULT_TARGET, DealRecord, Game, ScriptedDeal
from crib_env.observation import OBS_SIZE

from .eval_plans import GamePlan


def is_stateless(agent: Any) -> bool:
    """True if ``agent`` declares that it keeps no memory between decisions."""
    return bool(getattr(agent, "stateless", False))


def act_rows(agent: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """One card per row: ``agent.act_batch`` if it has one, else ``agent.act`` on each row."""
    batch = getattr(agent, "act_batch", None)
    if batch is not None:
        return np.asarray(batch(observations, masks), dtype=np.int64)
    return np.array([agent.act(o, m) for o, m in zip(observations, masks, strict=True)],
                    dtype=np.int64)


def _start_scripted_deal(S: np.ndarray, b: int, deal: ScriptedDeal) -> None:
    fast.set_deal(S, b, fast.bits_of(deal.hands[0]), fast.bits_of(deal.hands[1]), deal.starter)


def play_games(agent: Any, opponent: Any, plans: Sequence[GamePlan],
               target: int = DEFAULT_TARGET,
               trace: list[list[int]] | None = None) -> list[Game]:
    """Play the games of ``plans`` together (see the module docstring); both agents must be
    stateless. Returns the finished games in plan order. An illegal card raises ``ValueError``
    naming the side and the game. ``trace``, if given, is filled with one list per plan: every
    card played or discarded in that game, in order (what ``training.record`` replays; the
    returned games keep no log)."""
    for side, player in (("agent", agent), ("opponent", opponent)):
        if not is_stateless(player):
            raise ValueError(f"{side} {getattr(player, 'name', player)!r} keeps memory between "
                             f"decisions (stateless is not True), so it cannot play games "
                             f"interleaved on the compiled core")
    for player in {id(agent): agent, id(opponent): opponent}.values():
        player.reset()
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
        for player, rows in ((agent, live[agent_turn]), (opponent, live[~agent_turn])):
            if rows.size:
                actions[rows] = act_rows(player, observations[rows], masks[rows])
        # step_batch reads a negative action as "no move in this row": in a live row it is an
        # illegal card (cards past 51 step_batch reports itself)
        negative = live[actions[live] < 0]
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
    return games  # type: ignore[return-value]  # every row has finished
