"""The rules engine (crib_env.game) on constructed deals: docs/RULES.md sections 3-6, 8-10.

Every deal below is scripted by player: with ``first_dealer=0`` player 0 deals and player 1 (pone)
leads. Card-by-card comments give the running count.
"""

from __future__ import annotations

import random

import pytest

from crib_env.cards import RANK, parse_card, parse_cards
from crib_env.game import (
    CUT_FOR_DEAL,
    GAME_OVER,
    PLAY,
    SAID_GO,
    SHOW,
    DealRecord,
    Game,
    IllegalActionError,
    Phase,
)
from crib_env.scoring import (
    DOUBLE_PAIR_ROYAL,
    FIFTEEN,
    GO,
    HEELS,
    LAST_CARD,
    RUN,
    THIRTY_ONE,
)

DEALER, PONE = 0, 1


def scripted(p0: str, p1: str, starter: str) -> dict:
    return {"hands": {"player_0": parse_cards(p0), "player_1": parse_cards(p1)},
            "starter": parse_card(starter)}


def new_game(p0: str, p1: str, starter: str, target: int = 121, **kwargs) -> Game:
    """A game whose first deal is scripted; player 0 deals."""
    return Game(target=target, first_dealer=DEALER, deals=[scripted(p0, p1, starter)], **kwargs)


def discard(game: Game, pone_cards: str, dealer_cards: str) -> None:
    """Pone lays away first, then the dealer (one card per step)."""
    for card in parse_cards(pone_cards):
        game.step(card, player=game.pone)
    for card in parse_cards(dealer_cards):
        game.step(card, player=game.dealer)


def play(game: Game, cards: str) -> None:
    for card in parse_cards(cards):
        game.step(card)


def entries(game: Game, *kinds: str) -> list[tuple[str, int | None, int]]:
    return [(e.kind, e.player, e.points) for e in game.log if e.kind in kinds]


def play_out(game: Game) -> None:
    """Play the lowest legal card until the play is over (for tests that are about the show)."""
    while game.phase == Phase.PLAY:
        game.step(game.legal_actions()[0])


def record_total(records: list[DealRecord], player: int) -> int:
    return sum(r.points(player) for r in records)


# A deal with a go in each count sequence (pone 1 = TC AS 6C KH, dealer 0 = JD 5D 7S 9H).
GO_DEAL = ("JD 5D 7S 9H 4C 8C", "TC AS 6C KH 2C 3C", "QS")


def test_go_point_to_the_player_who_laid_the_last_card_and_the_other_leads():
    game = new_game(*GO_DEAL, single_deal=True)
    discard(game, "2C 3C", "4C 8C")
    assert game.phase == Phase.PLAY and game.to_move == PONE  # pone leads
    play(game, "TC JD AS 5D")  # 10, 20, 21, 26: neither the 6C, KH nor the 7S, 9H fits
    assert entries(game, SAID_GO, GO) == [(SAID_GO, PONE, 0), (GO, DEALER, 1)]
    assert game.count == 0 and game.sequence == []
    assert game.to_move == PONE  # pone did not lay the last card, so pone leads
    assert game.scores == [1, 0]


def test_nothing_spans_a_reset_5_go_6_7_is_no_run():
    game = new_game(*GO_DEAL, single_deal=True)
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD AS 5D")  # ... 5 at 26, go
    play(game, "6C 7S")  # 6, 13: 5-6-7 would be a run without the reset
    assert RUN not in {e.kind for e in game.log}
    assert game.scores == [1, 0]


def test_go_when_the_opponent_is_out_of_cards_and_the_last_card():
    game = new_game(*GO_DEAL, single_deal=True)
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD AS 5D 6C 7S KH")  # 6, 13, 23: dealer's 9H does not fit, pone has none left
    assert entries(game, GO)[-1] == (GO, PONE, 1)
    assert game.to_move == DEALER and game.count == 0  # dealer leads the 9H alone
    play(game, "9H")
    assert entries(game, LAST_CARD) == [(LAST_CARD, DEALER, 1)]
    assert game.record.pegging == [2, 1]  # dealer: go + last card; pone: go


def test_the_other_player_keeps_laying_after_a_go_and_takes_the_go_point():
    game = new_game("KD 5H 6H 7H 2D 3D", "TC 9C AC 8C 2S 3S", "QS", single_deal=True)
    discard(game, "2S 3S", "2D 3D")
    play(game, "TC KD 9C")  # 10, 20, 29: the dealer's 5H 6H 7H do not fit
    assert entries(game, SAID_GO) == [(SAID_GO, DEALER, 0)]
    assert game.to_move == PONE  # pone plays on
    play(game, "AC")  # 30: the 8C does not fit
    assert entries(game, GO) == [(GO, PONE, 1)]
    assert game.to_move == DEALER and game.count == 0


def test_thirty_one_after_a_go_pays_2_and_no_go():
    game = new_game("KD 5H 6H 7H 2D 3D", "TC 9C 2C 8C 2S 3S", "QS", single_deal=True)
    discard(game, "2S 3S", "2D 3D")
    play(game, "TC KD 9C 2C")  # 10, 20, 29 (dealer says go), 31
    assert entries(game, THIRTY_ONE, GO) == [(THIRTY_ONE, PONE, 2)]
    assert game.scores == [0, 2] and game.to_move == DEALER and game.count == 0


def test_thirty_one_pays_2_no_go_and_the_other_player_leads():
    game = new_game("QD TS 9D 8D 4S 4H", "KC AH 2C 3C 6S 6D", "5S", single_deal=True)
    discard(game, "6S 6D", "4S 4H")
    play(game, "KC QD AH TS")  # 10, 20, 21, 31 by the dealer
    assert entries(game, THIRTY_ONE, GO) == [(THIRTY_ONE, DEALER, 2)]
    assert game.count == 0 and game.sequence == [] and game.to_move == PONE
    play(game, "2C 9D 3C 8D")  # 2, 11, 14, 22: the dealer lays the last card
    assert entries(game, LAST_CARD, GO) == [(LAST_CARD, DEALER, 1)]
    assert game.record.pegging == [3, 0]


def test_last_card_that_makes_31_pays_only_the_2():
    game = new_game("9D 5S QS 3D AD 2D", "TC 7H KH 8C AS 2S", "4C", single_deal=True)
    discard(game, "AS 2S", "AD 2D")
    play(game, "TC 9D 7H 5S")  # 10, 19, 26, 31
    play(game, "KH QS 8C 3D")  # 10, 20, 28, 31 with the last card of the hand
    assert entries(game, THIRTY_ONE, LAST_CARD, GO) == [(THIRTY_ONE, DEALER, 2),
                                                        (THIRTY_ONE, DEALER, 2)]
    assert game.record.pegging == [4, 0]


def test_show_order_is_pone_hand_then_dealer_hand_then_crib():
    game = new_game(*GO_DEAL, single_deal=True)
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD AS 5D 6C 7S KH 9H")
    shows = [(e.player, e.detail, sorted(e.cards)) for e in game.log if e.kind == SHOW]
    assert shows == [(PONE, "hand", sorted(parse_cards("TC AS 6C KH"))),
                     (DEALER, "hand", sorted(parse_cards("JD 5D 7S 9H"))),
                     (DEALER, "crib", sorted(parse_cards("2C 3C 4C 8C")))]
    # pone TC AS 6C KH + QS: nothing; dealer JD 5D 7S 9H + QS: JD-5D, 5D-QS = 4;
    # crib 2C 3C 4C 8C + QS: 2-3-QS, 3-4-8 = 4 and the run 2-3-4 = 3, no flush (starter a spade)
    assert game.record.hand == [4, 0] and game.record.crib == 7
    assert game.phase == Phase.DEAL_OVER and game.record.completed
    assert game.scores == [2 + 4 + 7, 1]


def test_crib_four_card_flush_scores_nothing_but_five_card_flush_scores_5():
    # Crib 2H 4H 6H 8H: all even values, so no fifteen, pair or run; only a flush could score.
    for starter, crib_points in (("QS", 0), ("QH", 5)):
        game = new_game("2H 4H KC KD 3S 9S", "6H 8H AC 7D 5C TS", starter, single_deal=True)
        discard(game, "6H 8H", "2H 4H")
        play_out(game)
        assert game.phase == Phase.DEAL_OVER
        assert sorted(game.crib) == sorted(parse_cards("2H 4H 6H 8H"))
        assert game.record.crib == crib_points


def test_pone_wins_on_the_show_before_the_dealer_counts():
    # Pone holds 5C 5D 5H JS with starter 5S (29); the dealer 4C 4D 6C 6D (24).
    game = new_game("4C 4D 6C 6D KH QH", "5C 5D 5H JS 2C 9C", "5S", target=30)
    discard(game, "2C 9C", "KH QH")
    play(game, "JS 4C 5C 6C 5D 4D 5H 6D")
    assert game.record.pegging == [9, 1]
    assert 9 + 24 >= game.target  # the dealer's hand would have won had it been counted first
    assert game.phase == Phase.GAME_OVER and game.winner == PONE
    assert game.scores == [9, 30]
    assert [(e.player, e.detail) for e in game.log if e.kind == SHOW] == [(PONE, "hand")]
    assert game.record.hand == [0, 29] and not game.record.completed


def test_heels_wins_the_game():
    game = new_game(*GO_DEAL[:2], "JH", target=2)
    discard(game, "2C 3C", "4C 8C")
    assert entries(game, HEELS, GAME_OVER) == [(HEELS, DEALER, 2), (GAME_OVER, DEALER, 0)]
    assert game.phase == Phase.GAME_OVER and game.winner == DEALER and game.scores == [2, 0]
    assert game.record.heels == 2 and game.legal_actions() == []


def test_heels_pays_the_dealer_2_when_the_starter_is_a_jack():
    game = new_game(*GO_DEAL[:2], "JH")
    discard(game, "2C 3C", "4C 8C")
    assert game.scores == [2, 0] and game.record.heels == 2 and game.phase == Phase.PLAY


def test_pegging_out_ends_the_game_at_once_capped_at_the_target():
    game = new_game("4C 4D 6C 6D KH QH", "5C 5D 5H JS 2C 9C", "5S", target=2)
    discard(game, "2C 9C", "KH QH")
    play(game, "JS 4C 5C 6C")  # the 6C makes a run of 3 at 25: the dealer needed 2
    assert game.phase == Phase.GAME_OVER and game.winner == DEALER
    assert game.scores == [2, 0] and game.record.pegging == [2, 0]
    assert game.log[-1].kind == GAME_OVER
    assert sum(1 for e in game.log if e.kind == GAME_OVER) == 1
    assert len(game.hands[PONE]) == 2 and len(game.hands[DEALER]) == 2  # nothing more was played
    assert game.legal_actions() == [] and game.legal_mask().sum() == 0
    with pytest.raises(IllegalActionError, match="game is over"):
        game.step("5D")


def test_points_past_the_target_are_not_credited_in_the_play():
    game = new_game("4C 4D 6C 6D KH QH", "5C 5D 5H JS 2C 9C", "5S", target=4)
    discard(game, "2C 9C", "KH QH")
    play(game, "JS 4C 5C 6C 5D")  # 10, 14, 19, 25 (dealer: run of 3), 30 (pone: go)
    play(game, "4D 5H")  # 4, 9
    assert game.scores == [3, 1]
    play(game, "6D")  # 15 and a run of 3 for 5: the dealer needed 1
    assert game.scores == [4, 1] and game.winner == DEALER and game.record.pegging == [4, 1]
    scored = [e for e in game.log if e.points and e.kind != GAME_OVER]
    assert sum(e.points for e in scored if e.player == DEALER) == 4  # the log says what was pegged


def test_the_show_stops_at_the_target_and_the_log_sums_to_the_scores():
    # Pone needs 19 of the 29 hand: eight fifteens (16), then 3 of the double pair royal; no nobs.
    game = new_game("4C 4D 6C 6D KH QH", "5C 5D 5H JS 2C 9C", "5S", target=20)
    discard(game, "2C 9C", "KH QH")
    play(game, "JS 4C 5C 6C 5D 4D 5H 6D")
    assert game.scores == [9, 20] and game.winner == PONE and game.record.hand == [0, 19]
    after_show = game.log[[e.kind for e in game.log].index(SHOW) + 1:]
    assert [(e.kind, e.points) for e in after_show] == [(FIFTEEN, 2)] * 8 + [
        (DOUBLE_PAIR_ROYAL, 3), (GAME_OVER, 0)]
    for player in (0, 1):
        assert sum(e.points for e in game.log
                   if e.player == player and e.kind != GAME_OVER) == game.scores[player]


def test_next_deal_dealer_alternates():
    game = new_game(*GO_DEAL)
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD AS 5D 6C 7S KH 9H")
    assert game.phase == Phase.DISCARD and len(game.records) == 2
    assert game.dealer == PONE and game.records[1].dealer == PONE
    assert game.to_move == DEALER  # player 0 is pone now and discards first
    single = new_game(*GO_DEAL, single_deal=True)
    discard(single, "2C 3C", "4C 8C")
    play(single, "TC JD AS 5D 6C 7S KH 9H")
    single.next_deal()
    assert single.dealer == PONE and single.phase == Phase.DISCARD


def test_cut_for_deal_lower_card_deals_and_equal_ranks_cut_again():
    recut_seen = False
    for seed in range(300):
        game = Game(seed=seed)
        cuts = [e for e in game.log if e.kind == CUT_FOR_DEAL]
        assert len(cuts) % 2 == 0 and [e.player for e in cuts[:2]] == [0, 1]
        pairs = [(RANK[cuts[i].cards[0]], RANK[cuts[i + 1].cards[0]])
                 for i in range(0, len(cuts), 2)]
        assert all(a == b for a, b in pairs[:-1])  # every cut but the last was a tie
        last0, last1 = pairs[-1]
        assert last0 != last1
        assert game.dealer == (0 if last0 < last1 else 1)
        recut_seen |= len(pairs) > 1
    assert recut_seen


def test_first_dealer_skips_the_cut():
    game = Game(first_dealer=1, seed=3)
    assert game.dealer == 1 and not any(e.kind == CUT_FOR_DEAL for e in game.log)


@pytest.mark.parametrize(("loser", "skunk", "double"),
                         [(91, False, False), (90, True, False), (61, True, False),
                          (60, True, True)])
def test_skunk_flags_loser_at_90_or_less_double_at_60_or_less(loser, skunk, double):
    game = new_game(*GO_DEAL[:2], "JH")  # heels pays the dealer 2
    game.scores = [119, loser]  # an endgame position: the dealer needs 2
    discard(game, "2C 3C", "4C 8C")
    assert game.winner == DEALER and game.scores == [121, loser]
    assert game.skunk is skunk and game.double_skunk is double


def test_no_skunk_before_the_game_ends():
    game = Game(first_dealer=0, seed=1)
    assert game.winner is None and not game.skunk and not game.double_skunk


def test_deal_records_sum_to_the_scores_over_a_whole_game():
    rng = random.Random(5)
    game = Game(seed=5)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    assert max(game.scores) == 121 and game.scores[game.winner] == 121
    for player in (0, 1):
        assert record_total(game.records, player) == game.scores[player]
    assert all(r.completed for r in game.records[:-1])
    assert [r.dealer for r in game.records] == [(game.records[0].dealer + i) % 2
                                               for i in range(len(game.records))]


# ---------------------------------------------------------------------------------------------
# Illegal actions and bad scripts


def test_illegal_card_not_in_hand():
    game = new_game(*GO_DEAL)
    with pytest.raises(IllegalActionError, match="cannot discard 5D: not in hand"):
        game.step("5D")  # the dealer's card; pone discards first
    discard(game, "2C 3C", "4C 8C")
    with pytest.raises(IllegalActionError, match="cannot play 2C: not in hand"):
        game.step("2C")  # already in the crib


def test_illegal_card_that_would_pass_31():
    game = new_game("KD 5H 6H 7H 2D 3D", "TC 9C AC 8C 2S 3S", "QS")
    discard(game, "2S 3S", "2D 3D")
    play(game, "TC KD 9C")  # 29, the dealer has said go
    assert game.legal_actions() == [parse_card("AC")]
    with pytest.raises(IllegalActionError, match="8C would take the count from 29 to 37, past 31"):
        game.step("8C")


def test_illegal_not_your_turn():
    game = new_game(*GO_DEAL)
    with pytest.raises(IllegalActionError, match="not player 0's turn: player 1 to move"):
        game.step("4C", player=DEALER)


def test_illegal_wrong_phase_after_the_deal_is_over():
    game = new_game(*GO_DEAL, single_deal=True)
    with pytest.raises(IllegalActionError, match="only allowed after a deal's show"):
        game.next_deal()
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD AS 5D 6C 7S KH 9H")
    assert game.phase == Phase.DEAL_OVER and game.legal_actions() == []
    with pytest.raises(IllegalActionError, match="deal is over"):
        game.step("TC")


def test_illegal_action_error_is_a_value_error_and_leaves_the_game_unchanged():
    game = new_game(*GO_DEAL)
    before = (list(game.hands[0]), list(game.hands[1]), game.to_move, len(game.log))
    with pytest.raises(ValueError):
        game.step("ZZ")
    with pytest.raises(ValueError):
        game.step(52)
    assert (list(game.hands[0]), list(game.hands[1]), game.to_move, len(game.log)) == before


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        (scripted("JD 5D 7S 9H 4C 8C", "TC AS 6C KH 2C 8C", "QS"), "duplicate cards 8C"),
        (scripted("JD 5D 7S 9H 4C 8C", "TC AS 6C KH 2C 3C", "8C"), "duplicate cards 8C"),
        (scripted("JD 5D 7S 9H 4C", "TC AS 6C KH 2C 3C", "QS"), "player_0 must be dealt 6"),
        (scripted("JD 5D 7S 9H 4C 8C", "TC AS 6C KH 2C 3C 4D", "QS"),
         "player_1 must be dealt 6"),
        ({"hands": {"player_0": parse_cards("JD 5D 7S 9H 4C 8C")}, "starter": 0},
         "needs player_0 and player_1"),
        ({"hands": {"player_0": ["JD", "5D", "7S", "9H", "4C", "8C"],
                    "player_1": ["TC", "AS", "6C", "KH", "2C", "XX"]}, "starter": "QS"},
         "'XX'"),
        ({"hands": {"player_0": [], "player_1": []}}, "'hands' and 'starter'"),
    ],
    ids=["dup-hands", "dup-starter", "short", "long", "missing-player", "bad-card", "no-starter"],
)
def test_scripted_deals_with_duplicates_or_wrong_sizes_are_rejected(deal, message):
    with pytest.raises(ValueError, match=message):
        Game(first_dealer=0, deals=[deal])


def test_scripted_deals_accept_text_and_are_used_in_order_then_random_deals_continue():
    deal = {"hands": {"player_0": "JD 5D 7S 9H 4C 8C", "player_1": "TC AS 6C KH 2C 3C"},
            "starter": "QS"}
    game = Game(first_dealer=0, deals=[deal], seed=9)
    assert sorted(game.hands[0]) == sorted(parse_cards("JD 5D 7S 9H 4C 8C"))
    assert game.record.starter == parse_card("QS")
    discard(game, "2C 3C", "4C 8C")
    assert game.starter == parse_card("QS")
    play(game, "TC JD AS 5D 6C 7S KH 9H")
    second = game.records[1]
    assert len(set(second.hands[0] + second.hands[1] + (second.starter,))) == 13


def test_play_log_names_each_card_laid():
    game = new_game(*GO_DEAL, single_deal=True)
    discard(game, "2C 3C", "4C 8C")
    play(game, "TC JD")
    assert [(e.player, e.cards) for e in game.log if e.kind == PLAY] == [
        (PONE, (parse_card("TC"),)), (DEALER, (parse_card("JD"),))]
