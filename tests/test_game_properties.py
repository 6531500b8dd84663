"""Property tests: invariants of the rules engine over random games with random legal play."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crib_env.cards import VALUE
from crib_env.game import GAME_OVER, Game, IllegalActionError, Phase
from crib_env.observation import OBS_SIZE, decode, encode
from crib_env.scoring import EVENT_KINDS

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
targets = st.sampled_from([31, 61, 121])


def check_cards(game: Game) -> None:
    """Hands, discards (the crib), played cards and the starter are disjoint: 13 cards of the deal;
    the other 39 are the unseen stock. Each player's six cards are the ones dealt."""
    starter = game.starter if game.starter is not None else game.record.starter
    groups = [game.hands[0], game.hands[1], game.discards[0], game.discards[1], game.played[0],
              game.played[1], [starter]]
    dealt = [c for group in groups for c in group]
    assert len(dealt) == len(set(dealt)) == 13
    assert all(0 <= c < 52 for c in dealt)
    stock = set(range(52)) - set(dealt)
    assert len(stock) == 39 and stock.isdisjoint(dealt)
    for p in (0, 1):
        assert sorted(game.hands[p] + game.discards[p] + game.played[p]) == sorted(
            game.record.hands[p])
        assert len(game.discards[p]) <= 2
    if game.phase == Phase.PLAY:
        assert sorted(game.crib) == sorted(game.discards[0] + game.discards[1])
        assert len(game.crib) == 4 and game.starter is not None
        for p in (0, 1):
            assert len(game.hands[p]) + len(game.played[p]) == 4
    if game.phase == Phase.DISCARD:
        assert game.starter is None and game.crib == [] and game.played == [[], []]


def check_count(game: Game) -> None:
    assert game.count == sum(VALUE[c] for c in game.sequence) <= 31
    if game.phase == Phase.PLAY:
        assert game.count < 31  # 31 resets at once
        assert game.legal_actions(), "the player to move can always lay a card"


def check_observation(game: Game, player: int) -> None:
    obs = encode(game, player)
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    view = decode(obs)
    opp = 1 - player
    assert sorted(view.hand) == sorted(game.hands[player])
    assert sorted(view.discards) == sorted(game.discards[player])
    assert view.starter == game.starter
    assert sorted(view.played_own) == sorted(game.played[player])
    assert sorted(view.played_opp) == sorted(game.played[opp])
    assert list(view.sequence) == game.sequence
    assert view.count == game.count and view.phase == game.phase
    assert view.is_dealer == (game.dealer == player)
    assert (view.own_score, view.opp_score) == (game.scores[player], game.scores[opp])
    assert view.target == game.target
    assert view.opp_cards_left == len(game.hands[opp])
    assert view.opp_said_go == game.said_go[opp]
    # Only what the player may know: the opponent's hand and discards and the stock stay unseen.
    hidden = set(game.hands[opp]) | set(game.discards[opp])
    if game.starter is None:
        hidden.add(game.record.starter)
    assert hidden <= set(view.unseen)
    assert np.array_equal(encode(game, player, out=np.ones(OBS_SIZE, np.float32)), obs)


def expected_next_mover(mover: int, after: Game) -> int:
    """Who must move after ``mover`` laid a card (docs/RULES.md section 6), from the state after the move."""
    other = 1 - mover
    if not after.sequence:  # the count restarted (31 or a go): the other player leads if they can
        return other if after.hands[other] else mover
    return other if after.can_play(other) else mover


def play_random_game(seed: int, target: int, check_every_step: bool = True) -> Game:
    rng = random.Random(seed ^ 0x5EED)
    game = Game(target=target, seed=seed)
    scores = list(game.scores)
    steps = 0
    while not game.is_over:
        legal = game.legal_actions()
        assert np.flatnonzero(game.legal_mask()).tolist() == legal
        mover, phase, deal = game.to_move, game.phase, len(game.records)
        if phase == Phase.DISCARD:  # pone lays away two cards, then the dealer two
            assert mover == (game.pone if len(game.discards[game.pone]) < 2 else game.dealer)
        game.step(rng.choice(legal), player=mover)
        steps += 1
        assert steps < 2000
        # scores never fall and never pass the target
        assert all(scores[p] <= game.scores[p] <= target for p in (0, 1))
        scores = list(game.scores)
        # turns
        if phase == Phase.PLAY and game.phase == Phase.PLAY and len(game.records) == deal:
            assert game.to_move == expected_next_mover(mover, game)
        elif len(game.records) == deal + 1 and not game.is_over:
            assert game.to_move == game.pone and game.phase == Phase.DISCARD  # pone discards first
        if phase == Phase.DISCARD and game.phase == Phase.PLAY and len(game.records) == deal:
            assert game.to_move == game.pone  # pone leads
        if check_every_step and not game.is_over:
            check_cards(game)
            check_count(game)
            for player in (0, 1):
                check_observation(game, player)
        assert sum(e.kind == GAME_OVER for e in game.log) == int(game.is_over)
    return game


@PROPERTY_SETTINGS
@given(seed=seeds, target=targets)
def test_random_games_keep_every_invariant(seed, target):
    game = play_random_game(seed, target)
    # the game ended exactly once, on the target
    assert game.winner in (0, 1) and game.scores[game.winner] == target
    assert game.scores[1 - game.winner] < target
    assert [e.kind for e in game.log].count(GAME_OVER) == 1 and game.log[-1].kind == GAME_OVER
    assert game.legal_actions() == [] and not game.legal_mask().any()
    try:
        game.step(game.hands[game.to_move][0] if game.hands[game.to_move] else 0)
    except IllegalActionError as err:
        assert "game is over" in str(err)
    else:
        raise AssertionError("a step after the end of the game was accepted")
    check_observation(game, 0)
    check_observation(game, 1)


@PROPERTY_SETTINGS
@given(seed=seeds, target=targets)
def test_scores_match_the_deal_records_and_the_log(seed, target):
    game = play_random_game(seed, target, check_every_step=False)
    for player in (0, 1):
        assert sum(r.points(player) for r in game.records) == game.scores[player]
        logged = sum(e.points for e in game.log if e.player == player and e.kind in EVENT_KINDS)
        assert logged == game.scores[player]
    assert all(r.completed for r in game.records[:-1])
    dealers = [r.dealer for r in game.records]
    assert all(a != b for a, b in zip(dealers[:-1], dealers[1:], strict=True))  # alternates
    for record in game.records[:-1]:  # the last deal's points may be capped at the target
        assert 0 <= record.hand[0] <= 29 and 0 <= record.hand[1] <= 29
        assert 0 <= record.crib <= 29 and record.heels in (0, 2)
        assert record.heels == 2 * (record.starter % 13 == 10)  # heels: a jack starter


@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_single_deal_games_stop_after_the_show(seed):
    rng = random.Random(seed)
    game = Game(seed=seed, single_deal=True)
    while game.phase in (Phase.DISCARD, Phase.PLAY):
        game.step(rng.choice(game.legal_actions()))
    assert game.phase == Phase.DEAL_OVER and len(game.records) == 1
    record = game.records[0]
    assert record.completed and game.hands == [[], []]
    assert sum(record.points(p) for p in (0, 1)) == sum(game.scores)
    dealer = game.dealer
    game.next_deal()
    assert game.dealer == 1 - dealer and game.phase == Phase.DISCARD


@settings(max_examples=15, deadline=None)
@given(seed=seeds, steps=st.integers(min_value=0, max_value=60))
def test_clone_is_independent_and_replays_identically(seed, steps):
    rng = random.Random(seed)
    game = Game(seed=seed)
    for _ in range(steps):
        if game.is_over:
            break
        game.step(rng.choice(game.legal_actions()))
    copy = game.clone()
    snapshot = (game.scores[:], [h[:] for h in game.hands], len(game.log), game.phase)
    moves = random.Random(seed + 1)
    trace = []
    while not copy.is_over and len(trace) < 40:
        card = moves.choice(copy.legal_actions())
        trace.append(card)
        copy.step(card)
    assert (game.scores, game.hands, len(game.log), game.phase) == snapshot
    for card in trace:
        game.step(card)
    assert game.scores == copy.scores and game.hands == copy.hands and game.log == copy.log
