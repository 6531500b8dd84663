"""The compiled core agrees with the plain rules engine, move by move.

Size: 100,000 random games compared step by step (about 8.7 million moves and 730,000 deals, with
targets 121 / 61 / 31 / 15 so games also end on heels, mid-play and mid-show), in twenty chunks
of 5,000 (4-8 s of CPU each): the quick suite runs the first chunk, the slow tier
(``make test-slow``) the other nineteen. Plus exhaustive and 100,000-sample checks of the scorers and
100,000 games of invariants in the fast core. ``bench/bench_differential.py`` runs a million games.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from play_sequences import random_count_sequences

from crib_env import fast
from crib_env.game import Game, Phase
from crib_env.observation import OBS_SIZE, encode
from crib_env.scoring import score_play
from crib_env.testing import differential

DIFFERENTIAL_GAMES = 100_000
CHUNK_GAMES = 5_000  # one test each, so pytest-xdist spreads them
MIN_MOVES_A_GAME = 80  # a chunk of random games averages about 87 moves a game
SEED = 20_261_130


@pytest.fixture(scope="module")
def reference() -> differential.ReferenceGames:
    """A smaller sample for the checks of the comparison itself."""
    return differential.play_reference_games(4_000, seed=SEED)


@pytest.mark.parametrize("chunk", [0] + [pytest.param(c, marks=pytest.mark.slow)
                                         for c in range(1, DIFFERENTIAL_GAMES // CHUNK_GAMES)])
def test_fast_core_matches_plain_engine_after_every_move(chunk):
    games = differential.play_reference_games(CHUNK_GAMES, seed=SEED + chunk * CHUNK_GAMES)
    assert games.n_games == CHUNK_GAMES
    assert len(games.actions) > MIN_MOVES_A_GAME * CHUNK_GAMES
    assert differential.compare(games) == []


def test_games_end_everywhere_the_rules_allow(reference):
    """The sample reaches the endings that matter: mid-play, mid-show (incomplete deal records)
    and on the dealer's heels."""
    ends = reference.action_start[1:] - 1
    last_phase_rows = reference.trace[ends]
    assert (last_phase_rows[:, differential.TRACE_FIELDS.index("phase")] == int(Phase.GAME_OVER)).all()
    last_deal = reference.deal_start[1:] - 1
    completed = reference.records[last_deal, differential.DEAL_FIELDS.index("completed")]
    assert (completed == 0).any()  # some games end before the show is over
    heels = reference.records[:, differential.DEAL_FIELDS.index("heels")]
    assert (heels > 0).any()


def test_comparison_reports_a_planted_difference(reference):
    """The differential check can fail: change one expected score and one deal record."""
    planted = differential.ReferenceGames(**vars(reference))
    planted.trace = reference.trace.copy()
    planted.records = reference.records.copy()
    planted.trace[1234, 0] += 1
    planted.records[56, 3] += 2
    problems = differential.compare(planted)
    assert any("score0" in p for p in problems)
    assert any(p.startswith("deal row 56") for p in problems)


def test_replay_flags_an_illegal_recorded_move(reference):
    actions = reference.actions.copy()
    start = reference.action_start[7]
    actions[start] = next(c for c in range(52) if c not in reference.deals[7, :6])  # not in hand
    planted = differential.ReferenceGames(**{**vars(reference), "actions": actions})
    problems = differential.compare(planted)
    assert any("game 7: move 0" in p and "rejected" in p for p in problems)


def test_observations_match_encode_for_both_players_every_move():
    rng = random.Random(5)
    S = fast.new_state(1)
    out = np.zeros((2, OBS_SIZE), dtype=np.float32)
    moves = 0
    for i in range(50):
        game = Game(target=(121, 31)[i % 2], seed=i, first_dealer=i % 2)
        fast.load_game(S, 0, game)
        while True:
            for p in (0, 1):
                fast.encode_obs(S, 0, p, out[p])
                np.testing.assert_array_equal(out[p], encode(game, p))
            if game.is_over:
                break
            card = rng.choice(game.legal_actions())
            game.step(card)
            assert fast.step_game(S, 0, card) == fast.OK
            assert S[0, fast.DEAL_NO] == len(game.records)
            if S[0, fast.PHASE] == fast.P_DISCARD and S[0, fast.NDISC] + S[0, fast.NDISC + 1] == 0:
                fast.load_game(S, 0, game)  # a new random deal: take the plain engine's cards
            moves += 1
    assert moves > 3_000


def test_a_loaded_mid_game_state_plays_on_identically():
    """``load_game`` then the same moves: same scores and phase to the end of the deal."""
    rng = random.Random(11)
    S = fast.new_state(1)
    for i in range(300):
        game = Game(seed=1000 + i, single_deal=True)
        for _ in range(rng.randrange(0, 12)):
            game.step(rng.choice(game.legal_actions()))
        fast.load_game(S, 0, game)
        while game.phase not in (Phase.DEAL_OVER, Phase.GAME_OVER):
            card = rng.choice(game.legal_actions())
            game.step(card)
            assert fast.step_game(S, 0, card) == fast.OK
            assert [S[0, fast.SCORE], S[0, fast.SCORE + 1]] == game.scores
            assert S[0, fast.TO_MOVE] == game.to_move and S[0, fast.COUNT] == game.count
        assert S[0, fast.PHASE] == int(game.phase)
        assert S[0, fast.HAND_PTS] == game.record.hand[0]
        assert S[0, fast.CRIB_PTS] == game.record.crib


def test_show_scores_of_all_hands_match_the_rules_distribution():
    """All 12,994,800 hand + starter combinations, hand and crib rules (docs/RULES.md section 12)."""
    hand = fast.show_distribution(False)
    crib = fast.show_distribution(True)
    assert hand.sum() == crib.sum() == 12_994_800
    assert hand[[0, 2, 12, 24, 28, 29]].tolist() == [1009008, 2813796, 317340, 3680, 76, 4]
    assert crib[[0, 2, 12, 20, 28, 29]].tolist() == [1022208, 2839800, 310956, 7828, 76, 4]
    assert hand[[19, 25, 26, 27]].sum() == 0
    assert round(float((np.arange(30) * hand).sum() / hand.sum()), 4) == 4.7692
    assert round(float((np.arange(30) * crib).sum() / crib.sum()), 4) == 4.7348


def test_pegging_points_match_score_play_on_100000_sequences():
    rng = np.random.default_rng(3)
    S = fast.new_state(1)
    for seq, count in random_count_sequences(rng, 100_000):
        S[0, fast.SEQ:fast.SEQ + len(seq)] = seq
        S[0, fast.SEQ_LEN] = len(seq)
        S[0, fast.COUNT] = count
        assert fast.peg_points(S, 0) == score_play(seq), seq


def test_100000_random_games_end_with_one_winner_on_the_target():
    scores, winners, first, moves = fast.random_games(100_000, 7, 121)
    rows = np.arange(len(winners))
    assert (scores[rows, winners] == 121).all()
    assert (scores[rows, 1 - winners] < 121).all()
    assert 100 < moves / len(winners) < 200
    first_dealer_wins = float((winners == first).mean())
    assert 0.5 < first_dealer_wins < 0.6  # the first deal is an edge (docs/RULES.md section 13)
    again = fast.random_games(100_000, 7, 121)
    assert (again[0] == scores).all()  # same seed, same games
