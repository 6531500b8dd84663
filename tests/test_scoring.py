"""Show and pegging scoring (docs/RULES.md sections 7, 8 and the worked cases of section 11)."""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest

from crib_env.cards import RANK, VALUE, parse_card, parse_cards
from crib_env.render import table_talk
from crib_env.scoring import (
    DOUBLE_PAIR_ROYAL,
    EVENT_KINDS,
    FIFTEEN,
    FLUSH,
    NOBS,
    PAIR,
    PAIR_ROYAL,
    RUN,
    THIRTY_ONE,
    ScoreEvent,
    hand_events,
    play_events,
    score_hand,
    score_hands,
    score_play,
    score_without_starter,
    show_score_distribution,
)


def hand(text: str) -> list[int]:
    return parse_cards(text)


# ---------------------------------------------------------------------------------------------
# Worked cases: pegging


def test_pegging_fifteen_and_pair_ad_7c_7h_scores_4():
    assert score_play(hand("AD 7C 7H")) == 4
    assert sorted(e.kind for e in play_events(hand("AD 7C 7H"))) == [FIFTEEN, PAIR]


def test_pegging_8_6_7_scores_a_run_of_3_at_count_21():
    seq = hand("8C 6D 7H")
    assert sum(VALUE[c] for c in seq) == 21
    assert score_play(seq) == 3
    assert [(e.kind, e.points) for e in play_events(seq)] == [(RUN, 3)]


def test_pegging_5_6_7_6_second_six_scores_nothing():
    assert score_play(hand("5C 6D 7H")) == 3
    assert score_play(hand("5C 6D 7H 6S")) == 0
    assert play_events(hand("5C 6D 7H 6S")) == []


def test_pegging_6_6_4_2_3_the_three_scores_a_run_of_3():
    seq = hand("6C 6D 4H 2S 3C")
    assert score_play(seq) == 3
    (event,) = play_events(seq)
    assert event.kind == RUN and sorted(RANK[c] for c in event.cards) == [1, 2, 3]


def test_pegging_2_5_go_6_7_no_run_across_a_reset():
    # After the go the count restarts: the 7 is scored on the sequence since the reset only.
    assert score_play(hand("2C 5D")) == 0
    assert score_play(hand("6H 7S")) == 0
    assert score_play(hand("5D 6H 7S")) == 3  # the same cards without the reset would be a run


def test_pegging_2_8_6_7_5_the_five_scores_a_run_of_4_at_count_28():
    seq = hand("2H 8C 6D 7H 5S")
    assert sum(VALUE[c] for c in seq) == 28
    assert score_play(seq) == 4
    assert [(e.kind, e.points, len(e.cards)) for e in play_events(seq)] == [(RUN, 4, 4)]


def test_pegging_5_5_5_third_five_scores_fifteen_and_pair_royal_8():
    seq = hand("5C 5D 5H")
    assert score_play(seq) == 8
    assert sorted((e.kind, e.points) for e in play_events(seq)) == [(FIFTEEN, 2), (PAIR_ROYAL, 6)]


# ---------------------------------------------------------------------------------------------
# Pegging rules, one each


def test_pegging_thirty_one_pays_2():
    seq = hand("KC QD 4H 7S")
    assert sum(VALUE[c] for c in seq) == 31
    assert score_play(seq) == 2
    assert [e.kind for e in play_events(seq)] == [THIRTY_ONE]


def test_pegging_thirty_one_with_a_pair_pays_both():
    assert score_play(hand("KC 9D 6H 6S")) == 2 + 2  # count 31, pair of sixes


def test_pegging_pair_royal_6_and_double_pair_royal_12():
    assert score_play(hand("3C 3D 3H")) == 6
    assert score_play(hand("3C 3D 3H 3S")) == 12
    assert [e.kind for e in play_events(hand("3C 3D 3H 3S"))] == [DOUBLE_PAIR_ROYAL]


def test_pegging_pairs_need_an_unbroken_same_rank_tail():
    assert score_play(hand("4C 4D 9H 4S")) == 0
    assert score_play(hand("9H 4C 4D 4S")) == 6


def test_pegging_pairs_go_by_rank_not_value_queen_king_is_no_pair():
    assert score_play(hand("QC KD")) == 0
    assert score_play(hand("TC JD")) == 0


def test_pegging_ace_is_low_only_no_queen_king_ace_run():
    assert score_play(hand("QC KD AH")) == 0
    assert score_play(hand("2C 3D AH")) == 3


def test_pegging_longest_run_counts_once():
    assert score_play(hand("3C 5D 4H 6S 2C")) == 5
    assert score_play(hand("AC 2D 3H 4S 5C")) == 5 + 2  # run of 5 and fifteen


def test_pegging_runs_of_the_last_cards_only_and_no_duplicates_inside():
    assert score_play(hand("4C 5D 4H 6S")) == 3  # the last three (5-4-6) are a run
    assert score_play(hand("4C 5D 6H 4S")) == 3  # 5-6-4


def test_pegging_flushes_never_score():
    assert score_play(hand("2H 9H KH")) == 0


def test_pegging_fifteen_on_the_first_two_cards():
    assert score_play(hand("TC 5D")) == 2


def test_play_events_total_equals_score_play_on_random_sequences():
    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        cards = rng.sample(range(52), rng.randint(1, 8))
        count = 0
        seq = []
        for c in cards:
            if count + VALUE[c] > 31:
                break
            seq.append(c)
            count += VALUE[c]
        assert sum(e.points for e in play_events(seq)) == score_play(seq), seq
        checked += 1


def test_pegging_errors_duplicates_empty_and_past_31():
    with pytest.raises(ValueError, match="duplicate"):
        score_play(hand("5C 5C"))
    with pytest.raises(ValueError, match="at least one card"):
        score_play([])
    with pytest.raises(ValueError, match="past 31"):
        score_play(hand("KC QD JH 2S"))
    with pytest.raises(ValueError, match="'5X'"):
        play_events(["5C", "5X"])


# ---------------------------------------------------------------------------------------------
# Worked cases: the show


def test_show_5s_6s_7s_7h_starter_kd_scores_10():
    assert score_hand(hand("5S 6S 7S 7H"), parse_card("KD")) == 10
    kinds = sorted(e.kind for e in hand_events(hand("5S 6S 7S 7H"), "KD"))
    assert kinds == [FIFTEEN, PAIR, RUN, RUN]


def test_show_tc_jd_qh_qs_starter_2c_scores_8():
    assert score_hand(hand("TC JD QH QS"), "2C") == 8


def test_show_4c_5d_5h_5s_starter_6c_scores_23():
    assert score_hand(hand("4C 5D 5H 5S"), "6C") == 23
    events = hand_events(hand("4C 5D 5H 5S"), "6C")
    assert sum(e.points for e in events if e.kind == FIFTEEN) == 8
    assert sum(e.points for e in events if e.kind == RUN) == 9
    assert sum(e.points for e in events if e.kind == PAIR_ROYAL) == 6


def test_show_4c_4d_5h_6s_starter_6c_scores_24():
    assert score_hand(hand("4C 4D 5H 6S"), "6C") == 24


def test_show_jack_of_spades_and_three_fives_starter_5s_scores_29():
    assert score_hand(hand("JS 5C 5D 5H"), "5S") == 29


def test_crib_2h_5h_9h_kh_starter_3c_scores_4_fifteens_only_no_flush():
    assert score_hand(hand("2H 5H 9H KH"), "3C", crib=True) == 4
    assert FLUSH not in {e.kind for e in hand_events(hand("2H 5H 9H KH"), "3C", crib=True)}


def test_hand_2h_5h_9h_kh_starter_3c_scores_8_with_the_four_card_flush():
    assert score_hand(hand("2H 5H 9H KH"), "3C") == 8
    flush = [e for e in hand_events(hand("2H 5H 9H KH"), "3C") if e.kind == FLUSH]
    assert [(e.points, len(e.cards)) for e in flush] == [(4, 4)]


# ---------------------------------------------------------------------------------------------
# Show rules, one each


def test_show_double_run_of_three_is_8():
    # 3-4-5-5 with a 9: no fifteen, no flush, so the whole 8 is the double run
    assert score_hand(hand("3C 4D 5H 5S"), "9C") == 8
    assert sorted(e.points for e in hand_events(hand("3C 4D 5H 5S"), "9C")) == [2, 3, 3]


def test_show_five_card_flush_scores_5_in_hand_and_crib():
    # 2-4-6-8-Q: no fifteen, pair or run, so the 5 is the flush alone
    assert score_hand(hand("2H 4H 6H 8H"), "QH") == 5
    assert score_hand(hand("2H 4H 6H 8H"), "QH", crib=True) == 5
    assert score_hand(hand("2H 4H 6H 8H"), "QS") == 4
    assert score_hand(hand("2H 4H 6H 8H"), "QS", crib=True) == 0


def test_show_nobs_needs_the_jack_of_the_starters_suit():
    assert score_hand(hand("JH 2C 4D 8S"), "KH") == 1
    assert score_hand(hand("JH 2C 4D 8S"), "KS") == 0
    assert score_hand(hand("KC 9C 7D 2S"), "JC") == 0  # a jack starter is heels, not nobs


@cache
def _distribution(crib: bool) -> np.ndarray:
    """All 12,994,800 combinations scored once per test process (about a second each)."""
    return show_score_distribution(crib=crib)


@pytest.mark.parametrize("crib", [False, True], ids=["hand", "crib"])
def test_show_maximum_is_29_and_19_25_26_27_are_impossible(crib):
    dist = _distribution(crib)
    assert len(dist) == 30
    assert dist[29] == 4 and all(dist[s] == 0 for s in (19, 25, 26, 27))


def test_show_errors_duplicates_and_wrong_sizes():
    with pytest.raises(ValueError, match="duplicate"):
        score_hand(hand("5C 5D 5H 5S"), "5C")
    with pytest.raises(ValueError, match="duplicate"):
        score_hand(hand("5C 5C 5H 5S"), "KD")
    with pytest.raises(ValueError, match="got 3"):
        score_hand(hand("5C 5D 5H"), "KD")
    with pytest.raises(ValueError, match="got 5"):
        hand_events(hand("5C 5D 5H 5S AC"), "KD")
    with pytest.raises(ValueError, match="'ZZ'"):
        score_hand(["5C", "5D", "5H", "ZZ"], "KD")


def test_without_a_starter_5_5_5_j_scores_14():
    assert score_without_starter(hand("5H 5D 5S JC")) == 14  # four 15s (8), pair royal (6)


def test_without_a_starter_a_four_card_flush_scores_4_and_no_nobs():
    assert score_without_starter(hand("2H 4H 6H 8H")) == 4
    assert score_without_starter(hand("2H 4H 6H JH")) == 4


def test_without_a_starter_run_of_4_with_a_fifteen_scores_6():
    assert score_without_starter(hand("3C 4D 5H 6S")) == 6  # run of 4, 4-5-6 is 15


def test_without_a_starter_four_fives_score_20_the_most():
    assert score_without_starter(hand("5C 5D 5H 5S")) == 20  # four 15s (8), double pair royal (12)


def test_without_a_starter_errors_name_the_hand():
    with pytest.raises(ValueError, match="4 distinct cards, got 5C 5D 5H"):
        score_without_starter(hand("5C 5D 5H"))
    with pytest.raises(ValueError, match="4 distinct cards"):
        score_without_starter(hand("5C 5C 5H 5S"))


# ---------------------------------------------------------------------------------------------
# Exact distributions over all 12,994,800 hand + starter combinations (docs/RULES.md section 12)

HAND_DISTRIBUTION = (
    "0:1009008 1:99792 2:2813796 3:505008 4:2855676 5:697508 6:1800268 7:751324 8:1137236 "
    "9:361224 10:388740 11:51680 12:317340 13:19656 14:90100 15:9168 16:58248 17:11196 18:2708 "
    "19:0 20:8068 21:2496 22:444 23:356 24:3680 25:0 26:0 27:0 28:76 29:4"
)
CRIB_DISTRIBUTION = (
    "0:1022208 1:99792 2:2839800 3:508908 4:2868960 5:703496 6:1787176 7:755320 8:1118336 "
    "9:358368 10:378240 11:43880 12:310956 13:16548 14:88132 15:9072 16:57288 17:11196 18:2264 "
    "19:0 20:7828 21:2472 22:444 23:356 24:3680 25:0 26:0 27:0 28:76 29:4"
)


def _parse_distribution(text: str) -> list[int]:
    pairs = [item.split(":") for item in text.split()]
    assert [int(score) for score, _ in pairs] == list(range(30))
    return [int(n) for _, n in pairs]


@pytest.mark.parametrize(
    ("crib", "table", "mean"),
    [(False, HAND_DISTRIBUTION, 4.7692), (True, CRIB_DISTRIBUTION, 4.7348)],
    ids=["hand", "crib"],
)
def test_show_score_distribution_over_all_12994800_combinations_is_exact(crib, table, mean):
    dist = _distribution(crib)
    assert dist.tolist() == _parse_distribution(table)
    assert int(dist.sum()) == 12_994_800
    assert float(np.dot(dist, np.arange(30)) / dist.sum()) == pytest.approx(mean, abs=5e-5)


# ---------------------------------------------------------------------------------------------
# Consistency: events vs table scorer vs batch scorer


def _random_hands(n: int, seed: int) -> list[tuple[list[int], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        five = rng.sample(range(52), 5)
        out.append((five[:4], five[4]))
    return out


def _special_hands() -> list[tuple[list[int], int]]:
    """Flushes, nobs and jacks, which random samples rarely hit."""
    rng = random.Random(11)
    out = []
    for _ in range(300):
        suit = rng.randrange(4)
        ranks = rng.sample(range(13), 5)
        cards = [suit * 13 + r for r in ranks]
        if rng.random() < 0.5:  # starter off suit
            starter_rank = rng.choice([r for r in range(13) if r not in ranks[:4]])
            cards[4] = ((suit + 1 + rng.randrange(3)) % 4) * 13 + starter_rank
        out.append((cards[:4], cards[4]))
    return out


@pytest.mark.parametrize("crib", [False, True], ids=["hand", "crib"])
def test_hand_events_total_equals_score_hand_on_random_hands(crib):
    for cards, starter in _random_hands(3000, seed=1 + crib) + _special_hands():
        events = hand_events(cards, starter, crib=crib)
        assert sum(e.points for e in events) == score_hand(cards, starter, crib=crib), (
            cards, starter)
        assert all(e.kind in EVENT_KINDS and e.points > 0 for e in events)
        assert all(set(e.cards) <= {*cards, starter} for e in events)


@pytest.mark.parametrize("crib", [False, True], ids=["hand", "crib"])
def test_batch_score_hands_equals_score_hand_on_random_samples(crib):
    samples = _random_hands(5000, seed=3 + crib) + _special_hands()
    hands = np.array([cards for cards, _ in samples], dtype=np.int8)
    starters = np.array([starter for _, starter in samples], dtype=np.int8)
    batch = score_hands(hands, starters, crib=crib)
    assert batch.shape == (len(samples),)
    assert batch.tolist() == [score_hand(c, s, crib=crib) for c, s in samples]


def test_score_hand_accepts_ids_and_text_alike():
    assert score_hand(["JS", "5C", "5D", "5H"], "5S") == score_hand(hand("JS 5C 5D 5H"),
                                                                     parse_card("5S"))


def test_twenty_nine_hand_events_eight_fifteens_double_pair_royal_nobs():
    events = hand_events(hand("JS 5C 5D 5H"), "5S")
    fifteens = [e for e in events if e.kind == FIFTEEN]
    assert len(fifteens) == 8 and all(e.points == 2 for e in fifteens)
    assert len({frozenset(e.cards) for e in fifteens}) == 8
    (dpr,) = [e for e in events if e.kind == DOUBLE_PAIR_ROYAL]
    assert dpr.points == 12 and sorted(dpr.cards) == hand("5C 5D 5H 5S")
    (nobs,) = [e for e in events if e.kind == NOBS]
    assert nobs == ScoreEvent(NOBS, 1, (parse_card("JS"),))
    assert {e.kind for e in events} == {FIFTEEN, DOUBLE_PAIR_ROYAL, NOBS}


def test_hand_events_name_each_pair_and_run_once():
    events = hand_events(hand("3C 4D 5H 5S"), "6C")  # double run of four
    runs = [e for e in events if e.kind == RUN]
    assert [(e.points, len(e.cards)) for e in runs] == [(4, 4), (4, 4)]
    assert len({frozenset(e.cards) for e in runs}) == 2
    assert [e.cards for e in events if e.kind == PAIR] == [tuple(hand("5H 5S"))]


def test_table_talk_counts_the_running_total():
    assert table_talk(hand_events(hand("5S 6S 7S 7H"), "KD")) == (
        "fifteen two, a pair is four, a run of 3 is seven, a run of 3 is ten")
    assert table_talk(hand_events(hand("JS 5C 5D 5H"), "5S")) == (
        "fifteen two, fifteen four, fifteen six, fifteen eight, fifteen ten, fifteen twelve, "
        "fifteen fourteen, fifteen sixteen, double pair royal is twenty-eight, nobs is twenty-nine")
    assert table_talk(hand_events(hand("2H 5H 9H KH"), "3C")) == (
        "fifteen two, fifteen four, flush is eight")
    assert table_talk([]) == ""


def test_score_event_describe():
    assert ScoreEvent(RUN, 3, tuple(hand("5H 6S 7C"))).describe() == "run of 3 for 3 (5H 6S 7C)"
    assert ScoreEvent(NOBS, 1, (parse_card("JS"),)).describe() == "nobs for 1 (JS)"
