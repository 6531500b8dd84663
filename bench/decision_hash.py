"""Hashes of what the agents decide, to prove a refactor changed no behaviour.

Run it before and after a change; every line must match. It records, from fixed seeds:

* greedy and standard decisions (``act`` one at a time and ``act_batch`` over all) on 2,000
  positions drawn from standard-vs-greedy games on ``crib_env.game.Game``;
* the champion's decisions on the same positions (``act`` and ``act_batch``);
* the expert's decisions in 500 of its own turns (expert vs standard games);
* ``champion-search``'s (the default settings) in three whole games against standard, its
  searched throws near the end included;
* ``rollout_values`` on 150 play positions for each rollout policy (lowest, tactics), with the
  show and with the opponent's plays read (``OpponentPlays``, ``miss=0.1``), and ``keep_pegging``
  on 150 discards;
* the JSON of ``crib evaluate --agent standard --opponent greedy --games 300 --seed 0`` less its
  timing keys.

Usage: ``PYTHONPATH=. python bench/decision_hash.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from agents.expert import ExpertAgent
from agents.greedy import GreedyAgent
from agents.registry import make_agent
from agents.rollout import (
    POLICY_LOWEST,
    POLICY_TACTICS,
    OpponentPlays,
    keep_pegging,
    rollout_values,
)
from agents.standard import StandardAgent
from crib_env.game import Game, Phase
from crib_env.observation import decode, encode

POSITIONS = 2000
EXPERT_DECISIONS = 500
SEARCH_GAMES = 3
ROLLOUT_POSITIONS = 150
VOLATILE = ("seconds", "games_per_second", "workers")


def digest(*arrays: object) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a)).tobytes())
    return h.hexdigest()[:16]


def positions() -> tuple[np.ndarray, np.ndarray, list]:
    """(observations, masks, [(view, history snapshot)] of play decisions) from seeded games."""
    obs, masks, plays, discards = [], [], [], []
    players = [StandardAgent(1), GreedyAgent(2)]
    for seed in itertools.count():
        game = Game(seed=seed, first_dealer=seed % 2)
        histories = [OpponentPlays(), OpponentPlays()]
        while not game.is_over and len(obs) < POSITIONS:
            seat = game.to_move
            o, m = encode(game, seat), game.legal_mask()
            obs.append(o)
            masks.append(m)
            view = decode(o)
            histories[seat].update(view)
            legal = [int(c) for c in np.flatnonzero(m)]
            if view.phase == Phase.PLAY and len(legal) > 1:
                plays.append((view, legal, histories[seat].arrays()))
            elif view.phase == Phase.DISCARD and len(view.hand) == 6:
                discards.append(view)
            game.step(int(players[(seat + seed) % 2].act(o, m)))
        if len(obs) >= POSITIONS:
            break
    return np.array(obs), np.array(masks), plays, discards


def decisions(agent, obs: np.ndarray, masks: np.ndarray) -> str:
    one = [int(agent.act(o, m)) for o, m in zip(obs, masks, strict=True)]
    batch = np.asarray(agent.act_batch(obs, masks)).astype(np.int64)
    return digest(np.array(one, dtype=np.int64), batch)


def own_cards(player, other, game: Game, seat: int):
    """Play ``game`` to its end with ``player`` in ``seat`` and ``other`` in the other seat,
    yielding ``player``'s cards."""
    while not game.is_over:
        to_move = game.to_move
        o, m = encode(game, to_move), game.legal_mask()
        card = int((player if to_move == seat else other).act(o, m))
        if to_move == seat:
            yield card
        game.step(card)


def expert_decisions() -> str:
    games = (own_cards(ExpertAgent(seed=seed), StandardAgent(seed + 1000),
                       Game(seed=10_000 + seed, first_dealer=seed % 2), seed % 2)
             for seed in itertools.count())
    chosen = list(itertools.islice(itertools.chain.from_iterable(games), EXPERT_DECISIONS))
    return digest(np.array(chosen, dtype=np.int64))


def search_decisions() -> str:
    """The default search's cards in ``SEARCH_GAMES`` whole games against standard (whole games, so
    the end of the game, where it also searches its throws, is reached)."""
    chosen = [card for seed in range(SEARCH_GAMES)
              for card in own_cards(make_agent("champion-search", seed=seed),
                                    StandardAgent(seed + 1000),
                                    Game(seed=20_000 + seed, first_dealer=seed % 2), seed % 2)]
    return f"{digest(np.array(chosen, dtype=np.int64))} ({len(chosen)} decisions)"


def rollouts(plays: list, discards: list) -> dict[str, str]:
    out = {}
    step = max(1, len(plays) // ROLLOUT_POSITIONS)
    chosen = plays[::step][:ROLLOUT_POSITIONS]
    for policy in (POLICY_LOWEST, POLICY_TACTICS):
        values = []
        for i, (view, legal, _) in enumerate(chosen):
            margin, win = rollout_values(view, legal, sims=60, seed=i, with_show=True,
                                         policy=policy)
            values += [margin, win]
        out[f"rollout_values policy {policy}"] = digest(*values)
    values = []
    for i, (view, legal, arrays) in enumerate(chosen):
        history = OpponentPlays()
        history.arrays = lambda arrays=arrays: arrays  # the snapshot taken at that turn
        margin, win = rollout_values(view, legal, sims=60, seed=i, with_show=True,
                                     history=history, miss=0.1)
        values += [margin, win]
    out["rollout_values read plays"] = digest(*values)
    for model in (True, False):
        values = []
        for i, view in enumerate(discards[:ROLLOUT_POSITIONS]):
            hand = tuple(sorted(view.hand))
            keeps = list(itertools.combinations(hand, 4))
            values.append(keep_pegging(hand, keeps, list(view.unseen), view.is_dealer, sims=40,
                                       seed=i, model=model))
        out[f"keep_pegging model={model}"] = digest(*values)
    return out


def evaluate_json() -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.json"
        subprocess.run([sys.executable, "-m", "crib_cli", "evaluate", "--agent", "standard",
                        "--opponent", "greedy", "--games", "300", "--seed", "0", "--json",
                        str(path)], check=True, capture_output=True)
        report = json.loads(path.read_text())
    for key in VOLATILE:
        report.pop(key, None)
    return hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()[:16]


def main() -> None:
    obs, masks, plays, discards = positions()
    print(f"positions {len(obs)} (obs {digest(obs, masks)}), play decisions {len(plays)}, "
          f"discards {len(discards)}")
    print("greedy", decisions(GreedyAgent(0), obs, masks))
    print("standard", decisions(StandardAgent(0), obs, masks))
    print("champion", decisions(make_agent("champion", seed=0), obs, masks))
    for name, value in rollouts(plays, discards).items():
        print(name, value)
    print("expert", expert_decisions())
    print("champion-search", search_decisions())
    print("crib evaluate --json", evaluate_json())


if __name__ == "__main__":
    main()
