"""The compiled core's own API (``crib_env.fast``) and the vectorized env (``crib_env.vector``)."""

from __future__ import annotations

import numpy as np
import pytest
from play_sequences import random_count_sequences

from crib_env import fast
from crib_env.cards import parse_card, parse_cards
from crib_env.game import IllegalActionError, Phase
from crib_env.observation import OBS_SIZE, decode, encode
from crib_env.rules import last_card_points
from crib_env.scoring import score_hand, score_play, score_without_starter
from crib_env.vector import CribbageVectorEnv


def scripted_row(hand0: str, hand1: str, starter: str, dealer: int = 0, target: int = 121):
    S = fast.new_state(1)
    fast.init_game(S, 0, 1, target, dealer, True)
    S[0, fast.DEAL_NO] = 0
    fast.set_deal(S, 0, fast.bits_of(parse_cards(hand0)), fast.bits_of(parse_cards(hand1)),
                  parse_card(starter))
    return S


def new_games(n: int) -> fast.GameBatch:
    return fast.GameBatch(n).reset(seed=42)


def play(S, cards: str) -> None:
    for card in parse_cards(cards):
        assert fast.step_game(S, 0, card) == fast.OK, card


# -- rules worked through the kernels ----------------------------------------------------------

def test_his_heels_pays_the_dealer_two_when_the_starter_is_cut():
    S = scripted_row("AC 2C 3C 4C 5C 6C", "AD 2D 3D 4D 5D 6D", "JH", dealer=0)
    play(S, "AD 2D AC 2C")  # pone (player 1) discards first, then the dealer
    assert S[0, fast.STARTER] == parse_card("JH")
    assert S[0, fast.SCORE] == 2 and S[0, fast.HEELS_PTS] == 2
    assert S[0, fast.PHASE] == fast.P_PLAY and S[0, fast.TO_MOVE] == 1  # pone leads


def test_heels_can_win_the_game():
    S = scripted_row("AC 2C 3C 4C 5C 6C", "AD 2D 3D 4D 5D 6D", "JH", dealer=0, target=121)
    S[0, fast.SCORE] = 120
    play(S, "AD 2D AC 2C")
    assert S[0, fast.PHASE] == fast.P_GAME_OVER and S[0, fast.WINNER] == 0
    assert S[0, fast.SCORE] == 121  # capped


def go_deal():
    """Dealer 0 keeps AC 2C 3C 4C, pone 1 keeps TD JD QD KD, starter 5S, crib 9S 9H 9D 8D."""
    S = scripted_row("AC 2C 3C 4C 9S 9H", "TD JD QD KD 9D 8D", "5S", dealer=0)
    play(S, "9D 8D 9S 9H")
    return S


def test_go_is_said_automatically_and_pegged_by_the_last_player():
    S = go_deal()
    play(S, "TD AC JD 2C")  # count 23: pone's queen and king would pass 31
    assert S[0, fast.COUNT] == 23 and S[0, fast.SAID_GO + 1] == 1 and S[0, fast.TO_MOVE] == 0
    play(S, "3C 4C")  # 2-3-4 is a run of three; the dealer is then out of cards: go for 1
    assert S[0, fast.SCORE] == 4 and S[0, fast.PEG] == 4
    assert S[0, fast.COUNT] == 0 and S[0, fast.TO_MOVE] == 1  # pone leads the next sequence
    assert S[0, fast.SAID_GO + 1] == 0


def test_a_card_past_31_is_refused_and_changes_nothing():
    S = go_deal()
    play(S, "TD AC JD 2C")
    S[0, fast.TO_MOVE] = 1  # pretend pone were to move at 23 with QD KD
    before = S.copy()
    assert fast.legal_bits(S, 0) == 0
    assert fast.step_game(S, 0, parse_card("QD")) == fast.ERR_NOT_LEGAL
    assert fast.step_game(S, 0, parse_card("3C")) == fast.ERR_NOT_LEGAL  # not pone's card
    assert (S == before).all()


def test_last_card_then_the_show_pone_hand_dealer_hand_crib():
    S = go_deal()
    play(S, "TD AC JD 2C 3C 4C QD KD")  # pone plays on alone; KD is the last card (count 20)
    assert S[0, fast.PEG + 1] == 1
    # pone: 4 fifteens 8 + run of 4 + diamond flush 4 = 16; dealer: run of 5 + fifteen 2 + club
    # flush 4 = 11; crib: three nines 6 (a four-card flush would not count anyway)
    assert S[0, fast.HAND_PTS + 1] == 16 and S[0, fast.HAND_PTS] == 11 and S[0, fast.CRIB_PTS] == 6
    assert (S[0, fast.SCORE], S[0, fast.SCORE + 1]) == (4 + 11 + 6, 1 + 16)
    assert S[0, fast.PHASE] == fast.P_DEAL_OVER and S[0, fast.COMPLETED] == 1


def test_the_game_ends_mid_show_before_the_dealer_counts():
    S = go_deal()
    S[0, fast.SCORE + 1] = 110  # pone needs 11: pegging 1 + hand 16 gets there first
    S[0, fast.SCORE] = 119  # the dealer's own hand (11) would win, but is never counted
    play(S, "TD AC JD 2C 3C 4C")
    assert S[0, fast.PHASE] == fast.P_GAME_OVER and S[0, fast.WINNER] == 0  # the run + go win
    S = go_deal()
    S[0, fast.SCORE + 1] = 110
    S[0, fast.SCORE] = 100
    play(S, "TD AC JD 2C 3C 4C QD KD")
    assert S[0, fast.WINNER] == 1 and S[0, fast.SCORE + 1] == 121
    assert S[0, fast.SCORE] == 104 and S[0, fast.HAND_PTS] == 0 and S[0, fast.COMPLETED] == 0


def test_thirty_one_pays_two_never_the_go_and_the_other_player_leads():
    S = scripted_row("5C 5D 5H 6C 2S 3S", "TC TD TH KC 4S 7S", "AS", dealer=0)
    play(S, "4S 7S 2S 3S")
    play(S, "TC 5C TD 6C")  # 15 for 2, then 31 for 2
    assert S[0, fast.SCORE] == 4 and S[0, fast.COUNT] == 0 and S[0, fast.TO_MOVE] == 1
    play(S, "TH 5D KC 5H")  # 15 for 2, then the last card for 1 at 30
    assert S[0, fast.PEG] == 7 and S[0, fast.PEG + 1] == 0


def test_fast_games_wrapper_steps_random_games_to_the_end():
    games = new_games(16)
    moves = 0
    while not games.over.all():
        games.step(games.random_actions())
        moves += 1
    assert (games.scores.max(axis=1) == 121).all()
    assert (games.legal_masks() == 0).all()
    with pytest.raises(IllegalActionError, match="game is over"):
        games.step(np.zeros(16, dtype=np.int64))
    assert moves > 50


def test_fast_games_reject_an_illegal_card_by_row():
    games = new_games(3)
    actions = games.random_actions()
    held = fast.cards_of(games.state[1, fast.HAND + games.to_move[1]])
    actions[1] = next(c for c in range(52) if c not in held)
    with pytest.raises(IllegalActionError, match="game 1"):
        games.step(actions)


def test_clone_is_independent_and_replays_the_same_random_game():
    games = new_games(2)
    twin = games.clone()
    for _ in range(40):
        games.step(games.random_actions())
    assert (twin.state[:, fast.SCORE] == 0).all()
    for _ in range(40):
        twin.step(twin.random_actions())
    assert (twin.state == games.state).all()


def test_to_game_round_trips_through_load_game():
    games = new_games(4)
    for _ in range(37):
        games.step(games.random_actions())
    for b in range(4):
        game = fast.to_game(games.state, b)
        S = fast.new_state(1)
        fast.load_game(S, 0, game)
        same = np.ones(fast.N_FIELDS, dtype=bool)
        same[[fast.RNG, fast.DEAL_NO, fast.FIRST_DEALER]] = False  # not carried by a Game copy
        assert (S[0, same] == games.state[b, same]).all()
        np.testing.assert_array_equal(games.observe(0)[b], encode(game, 0))


def test_playout_to_the_end_of_the_deal_stops_after_the_show():
    S = fast.new_state(64)
    for b in range(64):
        fast.init_game(S, b, b, 121, b % 2, False)
        fast.playout_random(S, b, True)
    phases = S[:, fast.PHASE]
    assert set(phases.tolist()) == {fast.P_DEAL_OVER}
    assert (S[:, fast.COMPLETED] == 1).all()
    dealt = S[:, fast.SCORE].sum() + S[:, fast.SCORE + 1].sum()
    assert dealt > 64 * 10  # a deal is worth about 16 points between random players


# -- the vectorized env ------------------------------------------------------------------------

def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


@pytest.mark.parametrize("episode", ["game", "deal"])
def test_vector_env_observations_equal_encode_of_the_same_position(episode):
    env = CribbageVectorEnv(8, episode=episode, target_score=61)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(300):
        for b in range(env.num_envs):
            game = fast.to_game(env.state, b)
            np.testing.assert_array_equal(obs[b], encode(game, int(env.seats[b])))
            np.testing.assert_array_equal(info["action_mask"][b], game.legal_mask())
            assert game.to_move == env.seats[b] and game.phase in (Phase.DISCARD, Phase.PLAY)
        obs, _, done, _, info = env.step(random_legal(env.action_masks(), rng))
        for b in np.flatnonzero(done):
            view = decode(info["final_obs"][b])
            assert view.phase in (Phase.DEAL_OVER, Phase.GAME_OVER)
            assert (view.own_score, view.opp_score) == tuple(info["final_scores"][b])


def test_vector_env_points_rewards_sum_to_the_final_margin():
    env = CribbageVectorEnv(32, reward="points")
    env.reset(seed=9)
    rng = np.random.default_rng(1)
    totals = np.zeros(env.num_envs)
    finished = []
    while len(finished) < 100:
        _, rewards, done, _, info = env.step(random_legal(env.action_masks(), rng))
        totals += rewards
        for b in np.flatnonzero(done):
            own, opp = info["final_scores"][b]
            finished.append((totals[b], own - opp))
            totals[b] = 0.0
    for total, margin in finished:
        assert total == margin


def test_vector_env_win_rewards_are_plus_minus_one_at_the_end_only():
    env = CribbageVectorEnv(16, reward="win", seat="player_1")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(3000):
        _, rewards, done, _, info = env.step(random_legal(env.action_masks(), rng))
        assert (rewards[~done] == 0).all()
        for b in np.flatnonzero(done):
            own, opp = info["final_scores"][b]
            assert rewards[b] == (1.0 if own == 121 else -1.0) and max(own, opp) == 121
            ends += 1
    assert (env.seats == 1).all() and ends > 100


def test_vector_env_plays_a_python_batch_opponent():
    calls = []

    def lowest_card(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        calls.append(len(obs))
        assert obs.shape == (len(masks), OBS_SIZE)
        return masks.argmax(axis=1)

    env = CribbageVectorEnv(6, opponent=lowest_card, reward="points")
    env.reset(seed=4)
    rng = np.random.default_rng(3)
    for _ in range(200):
        env.step(random_legal(env.action_masks(), rng))
    assert calls and max(calls) > 1  # batched, not one row at a time


def test_vector_env_is_reproducible_and_rejects_illegal_cards():
    runs = []
    for _ in range(2):
        env = CribbageVectorEnv(4, reward="points")
        obs, _ = env.reset(seed=123)
        rng = np.random.default_rng(5)
        seen = [obs]
        for _ in range(50):
            seen.append(env.step(random_legal(env.action_masks(), rng))[0])
        runs.append(np.stack(seen))
    np.testing.assert_array_equal(runs[0], runs[1])
    masks = env.action_masks()
    bad = random_legal(masks, rng)
    bad[2] = int(np.flatnonzero(~masks[2])[0])
    before = env.state.copy()
    with pytest.raises(IllegalActionError, match="row 2"):
        env.step(bad)
    assert (env.state == before).all()


def test_columns_by_name():
    games = new_games(3)
    assert (games.column("SCORE", 1) == games.scores[:, 1]).all()
    assert (games.column("NHAND", 0) == 6).all()
    with pytest.raises(ValueError, match="unknown column 'SCOREZ'"):
        games.column("SCOREZ")


# -- the shared scoring kernels (also used by agents.rollout) ----------------------------------

def test_sequence_points_match_score_play_at_any_offset():
    """``sequence_points`` scores the last of ``n`` cards starting anywhere in a buffer, and only
    ranks count: a card of rank r may be written as card id r (the rollout's hypothetical replies)."""
    rng = np.random.default_rng(11)
    buffer = np.full(24, 51, dtype=np.int64)
    for seq, count in random_count_sequences(rng, 5000):
        start = int(rng.integers(0, 24 - len(seq) + 1))
        buffer[start:start + len(seq)] = seq
        expected = score_play(seq)
        assert fast.sequence_points(buffer, start, len(seq), count) == expected, seq
        buffer[start:start + len(seq)] = [c % 13 for c in seq]
        assert fast.sequence_points(buffer, start, len(seq), count) == expected, seq


def test_show_points_and_five_rank_points_match_score_hand():
    rng = np.random.default_rng(12)
    for _ in range(3000):
        *hand, starter = (int(c) for c in rng.choice(52, 5, replace=False))
        crib = bool(rng.random() < 0.5)
        assert fast.show_points(fast.bits_of(hand), starter, crib) == score_hand(hand, starter, crib)
        # the ranks alone: fifteens, pairs and runs, in any order (the show less flush and nobs)
        suits = {c // 13 for c in hand}
        flush = 0 if len(suits) > 1 else 5 if starter // 13 in suits else 0 if crib else 4
        nobs = any(c % 13 == 10 and c // 13 == starter // 13 for c in hand)
        ranks = [c % 13 for c in (*hand, starter)]
        for order in (ranks, ranks[::-1], sorted(ranks)):
            assert fast.five_rank_points(*order) == score_hand(hand, starter, crib) - flush - nobs


def test_last_card_points_match_scoring_at_every_count():
    for count in range(32):
        assert fast.last_card_points(count) == last_card_points(count)


def test_show_points_over_equals_score_hand_summed_over_the_pool():
    rng = np.random.default_rng(5)
    for trial in range(300):
        cards = [int(c) for c in rng.permutation(52)]
        # flushes and jacks are rare in random fours: force some
        hand = (cards[:4] if trial % 3 else [c for c in cards if c // 13 == trial % 4][:4])
        pool = [c for c in cards if c not in hand][:int(rng.integers(1, 49))]
        rank_left = np.bincount([c % 13 for c in pool], minlength=13).astype(np.int64)
        suit_left = np.bincount([c // 13 for c in pool], minlength=4).astype(np.int64)
        expected = sum(score_hand(hand, s) for s in pool)
        assert fast.show_points_over(fast.bits_of(hand), rank_left, suit_left) == expected


def test_points_without_starter_equal_score_without_starter_on_all_270725_hands():
    hands = 0
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(b + 1, 52):
                for d in range(c + 1, 52):
                    bits = (1 << a) | (1 << b) | (1 << c) | (1 << d)
                    assert fast.points_without_starter(bits) == score_without_starter((a, b, c, d))
                    hands += 1
    assert hands == 270_725
