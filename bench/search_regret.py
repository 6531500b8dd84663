"""How much chance to win each play agent gives away, measured against an oracle that sees the
opponent's cards: a quick way to compare search settings before paying for 2,000-game matches.

Games of a driver (the champion by default) against the expert are played on ``crib_env.game.Game``.
At each of the driver's play decisions with two or more legal cards, every candidate agent is
asked what it would lay, from the same observation (each keeps its own memory of the deal, fed
every observation of the driver's seat). The oracle values every legal card by the exact solve of
the rest of the play with the opponent's real cards (``agents.search.sampling.solved_values``,
one "sample": the truth), the show counted and the board read from the win-odds table. A
candidate's regret at a decision is the oracle's best value less the oracle's value of the
candidate's card; the table gives the mean regret (in chance to win, per decision) with its
standard error, and each candidate's mean difference from the first one with the paired standard
error. The oracle plays both seats perfectly with both hands known, so it is a yardstick for
reading and sampling, not the game's true value.

    PYTHONPATH=. python bench/search_regret.py --games 40 \\
        --agents champion-search champion-search:sims=384 champion-search:floor=1 expert champion
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from numba import njit

from agents.endgame import win_table
from agents.opponent_model import opponent_cards
from agents.registry import make_agent
from agents.rollout import _card_bits, play_position
from agents.search.discard import _discard_both, discard_position
from agents.search.sampling import solved_values
from agents.search.solve import new_stack, solve
from crib_env.fast import set_deal
from crib_env.game import Game, Phase
from crib_env.observation import decode, encode
from training.eval_plans import game_plan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402


def oracle_values(game: Game, seat: int, observation: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Each legal card's chance to win for ``seat`` with the opponent's real cards."""
    view = decode(observation)
    other = 1 - seat
    laid = opponent_cards(view).played
    kept = np.array([[*laid, *game.hands[other]]], dtype=np.int64)
    discards = np.array([game.discards[other]], dtype=np.int64)
    return solved_values(play_position(view), legal.astype(np.int64), kept, discards, laid.size,
                         win_table(view.target))[:, 0]


@njit(cache=True)
def _throw_oracle(position, mine, theirs, their_throw, throws, starters, wins):
    out = np.zeros(throws.shape[0])
    stack = new_stack()
    for t in range(throws.shape[0]):
        for starter in starters:
            stack[0, :] = position
            set_deal(stack, 0, _card_bits(mine), _card_bits(theirs), starter)
            _discard_both(stack, throws[t], their_throw)
            out[t] += solve(stack, wins)
    return out / starters.size


def throw_oracle(game: Game, seat: int, six: list[int], theirs: list[int],
                 their_throw: list[int]) -> dict[frozenset, float]:
    """Each throw's chance to win for ``seat`` with the opponent's real six cards and throw,
    averaged over every starter the two hands leave."""
    throws = np.array(list(itertools.combinations(six, 2)), dtype=np.int64)
    dealt = set(six) | set(theirs)
    starters = np.array([c for c in range(52) if c not in dealt], dtype=np.int64)
    position = discard_position(game.scores[seat], game.scores[1 - seat], game.target,
                                game.dealer == seat)
    values = _throw_oracle(position, np.array(six, dtype=np.int64),
                           np.array(theirs, dtype=np.int64), np.array(their_throw, dtype=np.int64),
                           throws, starters, win_table(game.target))
    return {frozenset(map(int, t)): float(v) for t, v in zip(throws, values, strict=True)}


def throw_of(agent, game: Game) -> frozenset:
    """The two cards ``agent`` throws from ``game``'s position (the first of its discards)."""
    probe = game.clone()
    seat = probe.to_move
    cards = []
    for _ in range(2):
        card = int(agent.act(encode(probe, seat), probe.legal_mask()))
        cards.append(card)
        probe.step(card)
    return frozenset(cards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["champion-search", "expert", "champion"])
    parser.add_argument("--driver", default="champion")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    driver, opponent = make_agent(args.driver, seed=1), make_agent(args.opponent, seed=2)
    candidates = [make_agent(name, seed=3) for name in args.agents]
    regrets: list[list[float]] = [[] for _ in candidates]
    throw_regrets: list[list[float]] = [[] for _ in candidates]
    seconds = np.zeros(len(candidates))
    calls = 0
    for index in range(args.games):
        plan = game_plan(args.seed, index)
        seat = plan.agent_seat
        for agent in (driver, opponent, *candidates):
            agent.reset()
        game = Game(seed=plan.game_seed, first_dealer=plan.first_dealer, deals=plan.deals)
        pending = None  # the seat's throws this deal, valued once the opponent has thrown
        while not game.is_over:
            if pending is not None and game.phase == Phase.PLAY:
                six, position_game, throws = pending
                oracle = throw_oracle(position_game, seat, six, game.kept[1 - seat] +
                                      game.discards[1 - seat], game.discards[1 - seat])
                best = max(oracle.values())
                for i, thrown in enumerate(throws):
                    throw_regrets[i].append(best - oracle[thrown])
                pending = None
            obs, mask = encode(game, game.to_move), game.legal_mask()
            if (game.to_move == seat and game.phase == Phase.DISCARD
                    and not game.discards[seat]):
                pending = (list(game.hands[seat]), game.clone(),
                           [throw_of(agent, game) for agent in candidates])
            if game.to_move != seat:
                game.step(int(opponent.act(obs, mask)))
                continue
            legal = np.flatnonzero(mask)
            scored = game.phase == Phase.PLAY and legal.size > 1
            oracle = oracle_values(game, seat, obs, legal) if scored else None
            calls += 1
            for i, agent in enumerate(candidates):
                started = time.perf_counter()
                card = int(agent.act(obs, mask))
                seconds[i] += time.perf_counter() - started
                if oracle is not None:
                    regrets[i].append(float(oracle.max() - oracle[np.flatnonzero(legal == card)[0]]))
            game.step(int(driver.act(obs, mask)))
        print(f"game {index + 1}/{args.games}: {len(regrets[0])} decisions", flush=True)
    cpu = cpu_model()
    print(f"\n{cpu}, load {os.getloadavg()[0]:.2f}; {args.games} games of {args.driver} vs "
          f"{args.opponent}, seed {args.seed}; ms/act over all {calls} of the seat's decisions")
    for title, table in (("play decisions with a choice", regrets), ("throws", throw_regrets)):
        r = np.asarray(table)
        n = r.shape[1]
        print(f"\n{title}: {n}")
        print(f"{'agent':<44}{'regret %':>10}{'± se':>8}{'vs first':>10}{'± se':>8}"
              f"{'ms/act':>9}")
        for i, name in enumerate(args.agents):
            diff = r[i] - r[0]
            print(f"{name:<44}{100 * r[i].mean():>10.3f}{100 * r[i].std() / np.sqrt(n):>8.3f}"
                  f"{100 * diff.mean():>10.3f}{100 * diff.std() / np.sqrt(n):>8.3f}"
                  f"{1e3 * seconds[i] / max(1, calls):>9.1f}")


if __name__ == "__main__":
    main()
