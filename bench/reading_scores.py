"""How well does each reader know the opponent's hand? The search's weighting against networks.

``champion-search`` plays games against an opponent; at each play decision it searches, the
chance that the opponent holds each unseen card is read four ways and scored against the cards it
really holds (log-loss per unseen card, and how often the n cards rated likeliest are held when
the opponent holds n, as ``training.hand_reader`` scores a reader):

* **uniform**: each unseen card at the ratio of the opponent's cards to the unseen ones;
* **kept as standard keeps**: the search's draws of the opponent's cards (its six kept as an
  expected-value player keeps them, the cards it laid this deal among them) with equal weights;
* **the search**: the same draws weighted as the search weights them (the opponent model's
  likelihood of each of the opponent's plays this deal, the two styles mixed);
* **reader** (with ``--reader``): a ``HandReader`` fitted on hidden cards
  (``python -m training.hand_reader fit``).

The draws' chances are smoothed by 1% of the uniform reader's (a card never drawn is not
impossible). The draws are extra, with their own random stream: the search's own decisions are
those it makes without them.

    PYTHONPATH=. python bench/reading_scores.py --games 60 --draws 512 --reader runs/hrm/reader
        --rows runs/reading_rows.npz

``--rows`` keeps the searched decisions' rows, so another reader is scored on them later without
playing the games again.
"""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch

from agents.opponent_model import opponent_cards
from agents.reader import HandReader, load_reader_state, uniform_probabilities, unseen_cards
from agents.registry import make_agent
from agents.search.agent import ChampionSearchAgent
from agents.search.sampling import draw_opponents
from crib_env.cards import N_CARDS
from training.batch_play import play_games
from training.eval_plans import derive_seed, game_plan
from training.hand_reader import HeldCardsRecorder, reading_scores
from training.per_row import PerRowAgent

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model  # noqa: E402

#: the share of the uniform reader's chances mixed into the draws' (never-drawn cards)
SMOOTHING = 0.01


class ReadingSearch(ChampionSearchAgent):
    """``champion-search`` that also keeps, at each play decision it searches, the chances its
    draws give each card with and without the search's weights, by the observation's bytes."""

    # class attributes: every game's copy (a deep copy of one prototype) adds to the same record
    draws = 512
    kept: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def play_values(self, view, legal: np.ndarray) -> np.ndarray:
        opponent = opponent_cards(view)
        seed = derive_seed(len(self.kept), "reading")
        kept, discards = draw_opponents(opponent, self.draws, seed, self.settings.model,
                                        not view.is_dealer, self._tables)
        # the search's own call below recomputes the styles' evidence from its own draws
        weights = self._weights(view, kept, discards)
        laid = opponent.played.size
        held = kept[:, laid:laid + opponent.held]
        chances = []
        for w in (np.ones(len(kept)), weights):
            p = np.zeros(N_CARDS)
            np.add.at(p, held, np.repeat(w[:, None], held.shape[1], axis=1))
            chances.append(p / w.sum())
        self.kept[self.observation.tobytes()] = (chances[0], chances[1])
        return super().play_values(view, legal)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.observation = observation
        return super().act(observation, action_mask)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", default="champion-search")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--draws", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reader", type=Path, help="a HandReader folder to score beside")
    parser.add_argument("--rows", type=Path, help="an .npz file for the searched decisions' rows: "
                        "written after the games, or read instead of playing them if it exists")
    args = parser.parse_args()
    reader = None
    if args.reader:
        reader = HandReader()
        try:
            reader.load_state_dict(load_reader_state(args.reader))
        except ValueError as err:
            parser.error(f"--reader: {err}")
    settings = f"{args.search} against {args.opponent}, {args.games} games, seed {args.seed}, " \
               f"{args.draws} draws"
    if args.rows and not args.rows.exists() and not os.access(args.rows.parent, os.W_OK):
        parser.error(f"--rows {args.rows}: its folder is missing or cannot be written")
    if args.rows and args.rows.exists():
        try:
            with np.load(args.rows) as saved:
                recorded = str(saved["settings"])
                obs, held, equal, weighted = (saved[k] for k in ("obs", "held", "equal",
                                                                 "weighted"))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
            parser.error(f"--rows {args.rows}: not a file of searched rows ({err})")
        if recorded != settings:
            parser.error(f"--rows {args.rows} holds {recorded}, not {settings}")
    else:
        obs, held, equal, weighted = searched_rows(args)
        if args.rows:
            np.savez_compressed(args.rows, settings=settings, obs=obs, held=held, equal=equal,
                                weighted=weighted)
    o, h = torch.from_numpy(obs), torch.from_numpy(held)
    uniform = uniform_probabilities(o)
    rows = {"uniform": uniform}
    for name, chances in (("kept as standard keeps, equal weights", equal),
                          ("the search's weights", weighted)):
        drawn = torch.from_numpy(chances)
        rows[name] = (1 - SMOOTHING) * drawn * unseen_cards(o) + SMOOTHING * uniform
    if reader is not None:
        with torch.no_grad():
            rows[f"reader {args.reader}"] = reader.probabilities(o)
    print(f"# {settings}: {len(obs):,} searched play decisions with the opponent holding a card; "
          f"CPU {cpu_model()}, load {os.getloadavg()[0]:.1f}")
    print("| reader | log-loss per unseen card | held among the n likeliest |")
    print("|---|---|---|")
    for name, probs in rows.items():
        scored = reading_scores(probs, h, o)
        print(f"| {name} | {scored['log_loss']:.4f} | {scored['top_n_held']:.1%} |")


def searched_rows(args: argparse.Namespace) -> tuple[np.ndarray, ...]:
    """Play the games; at each play decision the search searched with the opponent holding a
    card: the observation, the opponent's held cards, and the draws' chances of each card with
    equal weights and with the search's."""
    base = make_agent(args.search, seed=args.seed)
    if not isinstance(base, ChampionSearchAgent):
        raise SystemExit(f"--search {args.search} is not a champion-search")
    ReadingSearch.draws = args.draws
    kept = ReadingSearch.kept
    search = PerRowAgent(ReadingSearch(base.policy, base.settings, seed=args.seed),
                         lambda b: derive_seed(args.seed, "game", b))
    rival = make_agent(args.opponent, seed=derive_seed(args.seed, "opponent"))
    if not getattr(rival, "stateless", True):
        rival = PerRowAgent(rival, lambda b: derive_seed(args.seed, "rival", b))
    plans = [game_plan(args.seed, index) for index in range(args.games)]
    recorder = HeldCardsRecorder(np.array([p.agent_seat for p in plans], dtype=np.int64))
    play_games(search, rival, plans, on_turn=recorder)
    obs = np.concatenate(recorder.obs)
    held = np.concatenate(recorder.held).astype(np.float32)
    searched = np.array([o.tobytes() in kept for o in obs])
    obs, held = obs[searched], held[searched]
    equal, weighted = (np.stack([kept[x.tobytes()][i] for x in obs]).astype(np.float32)
                       for i in range(2))
    return obs, held, equal, weighted


if __name__ == "__main__":
    main()
