"""The expert with the win-odds table in its endgame against the expert with the per-deal model it
used before (paired games, python engine).

    .venv/bin/python bench/expert_odds.py --games 2000 --seed 0 --workers 2
    .venv/bin/python bench/expert_odds.py --endgame 1000 --seed 0

``--endgame PAIRS`` plays only the part of the game where the table is read: each pair starts from
a random board with both players within ``ENDGAME_NEED`` points of the target and a random dealer,
over the same pre-drawn deals, once with the table's expert in each seat. Each game lasts a few
deals, so the same CPU time gives several times the pairs of whole games.

The expert reads ``agents.endgame.win_table`` in two places once either side is near the target:
its endgame discards (``agents.endgame.choose_discard``) and the win filter on its pegging rollouts
(``agents.rollout.rollout_values`` with the show). For target 121 that function now returns the
win-odds table (``crib_env.odds``); before, it returned the module's model of a deal. The opponent
here is the expert with the model put back for its own decisions, nothing else changed. Duplicate
games (each deal sequence played from both seats); the report is ``crib evaluate``'s, from the
table's side.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents.endgame as endgame  # noqa: E402
import agents.rollout as rollout  # noqa: E402
import agents.standard as standard  # noqa: E402
from agents.endgame import DEALER_TOTAL, ENDGAME_NEED, PONE_TOTAL, _solve_win_table  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from crib_env.game import Game  # noqa: E402
from crib_env.observation import encode  # noqa: E402
from training.evaluate import derive_seed, draw_deals, evaluate  # noqa: E402
from training.stats import mean_interval  # noqa: E402

TARGET = 121  # the win-odds table's game
MODEL = _solve_win_table(TARGET, PONE_TOTAL, DEALER_TOTAL)
#: every module that looks ``win_table`` up by name when the expert decides
READERS = (endgame, rollout, standard)


@contextmanager
def model_table() -> Iterator[None]:
    """``win_table`` answers with the per-deal model (for ``TARGET``) while the block runs."""
    saved = [module.win_table for module in READERS]

    def model(target: int) -> np.ndarray:
        return MODEL if int(target) == TARGET else saved[0](target)

    for module in READERS:
        module.win_table = model
    try:
        yield
    finally:
        for module, original in zip(READERS, saved, strict=True):
            module.win_table = original


class ExpertWithModel(ExpertAgent):
    """The expert whose endgame reads the per-deal model instead of the win-odds table."""

    name = "expert (model)"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        with model_table():
            return super().act(observation, action_mask)


def play_from(players: list[ExpertAgent], scores: tuple[int, int], dealer: int, seed: int,
              deals: tuple) -> int:
    """The winner of a game that starts on ``scores`` with ``dealer`` to deal first."""
    for player in players:
        player.reset()
    game = Game(target=TARGET, seed=seed, first_dealer=dealer, deals=deals)
    game.scores[:] = scores  # no card has been laid: the board simply starts here
    game.prev_scores[:] = scores
    while not game.is_over:
        seat = game.to_move
        game.step(int(players[seat].act(encode(game, seat), game.legal_mask())))
    return int(game.winner)


def endgame_pairs(pairs: int, seed: int) -> None:
    """Paired endgames: the table's expert wins how many more than the model's, per pair."""
    rng = random.Random(seed)
    table, model = ExpertAgent(seed=seed), ExpertWithModel(seed=seed)
    diffs = []
    for pair in range(pairs):
        low = TARGET - ENDGAME_NEED
        scores = (rng.randrange(low, TARGET), rng.randrange(low, TARGET))
        dealer = rng.randrange(2)
        deals = draw_deals(derive_seed(seed, "endgame", pair))
        game_seed = derive_seed(seed, "endgame-game", pair)
        first = play_from([table, model], scores, dealer, game_seed, deals)
        second = play_from([model, table], scores, dealer, game_seed, deals)
        diffs.append((first == 0) + (second == 1) - 1)  # +1, 0 or -1 win over the pair
        if (pair + 1) % 50 == 0 or pair + 1 == pairs:
            mean, lo, hi = mean_interval(diffs, limits=(-1.0, 1.0))
            print(f"{pair + 1} pairs: table's expert wins {0.5 + mean / 2:.4f} of the games "
                  f"(95% over pairs {0.5 + lo / 2:.4f}-{0.5 + hi / 2:.4f}); pairs won by it "
                  f"{diffs.count(1)}, lost {diffs.count(-1)}, split {diffs.count(0)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--endgame", type=int, default=0, metavar="PAIRS",
                        help="play PAIRS paired endgames instead of whole games")
    args = parser.parse_args()
    if args.endgame:
        endgame_pairs(args.endgame, args.seed)
        return
    report = evaluate("expert", ExpertWithModel(), games=args.games, seed=args.seed,
                      duplicate=True, workers=args.workers, regret=False, engine="game")
    report.print()
    print(report.to_json(volatile=True))


if __name__ == "__main__":
    main()
