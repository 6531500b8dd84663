"""The card contract (DESIGN.md "Contract: cards"): ids, text forms, counting values, errors."""

from __future__ import annotations

import numpy as np
import pytest

from crib_env.cards import (
    DECK,
    RANK,
    SUIT,
    VALUE,
    as_card,
    card_id,
    card_str,
    cards_str,
    parse_card,
    parse_cards,
)


def test_card_id_is_suit_times_13_plus_rank_in_suit_order_c_d_h_s():
    assert parse_card("AC") == 0
    assert parse_card("KC") == 12
    assert parse_card("AD") == 13
    assert parse_card("AH") == 26
    assert parse_card("AS") == 39
    assert parse_card("KS") == 51
    assert parse_card("5H") == 2 * 13 + 4
    assert parse_card("TD") == 13 + 9
    assert card_id(rank=10, suit=3) == 49  # the jack of spades


def test_rank_and_suit_tables_follow_the_id_formula():
    for card in DECK:
        assert card == SUIT[card] * 13 + RANK[card]
    assert len(DECK) == 52 and sorted(DECK) == list(range(52))


def test_card_str_round_trips_every_id():
    texts = [card_str(c) for c in DECK]
    assert texts[:13] == ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC",
                          "KC"]
    assert [t[1] for t in texts[::13]] == ["C", "D", "H", "S"]
    assert len(set(texts)) == 52
    assert [parse_card(t) for t in texts] == list(DECK)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10H", "TH"), ("10h", "TH"), ("th", "TH"), ("ks", "KS"), ("  qd ", "QD"),
     ("5♥", "5H"), ("A♠", "AS"), ("J♦", "JD"), ("2♣", "2C"), ("10♥", "TH"),
     ("5♡", "5H"), ("K♤", "KS"), ("3♢", "3D"), ("9♧", "9C")],
)
def test_parse_card_accepts_10_lower_case_and_suit_symbols(text, expected):
    assert card_str(parse_card(text)) == expected


def test_counting_values_ace_one_pips_face_value_tens_and_courts_ten():
    assert [VALUE[parse_card(r + "S")] for r in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                      10, 10, 10, 10]
    assert sum(VALUE) == 4 * (45 + 40)  # the deck counts 340


@pytest.mark.parametrize("bad", ["XH", "5X", "1H", "11S", "", "H", "5", "5HH", "JOKER"])
def test_parse_card_error_names_the_bad_token(bad):
    with pytest.raises(ValueError) as err:
        parse_card(bad)
    assert repr(bad) in str(err.value)


def test_parse_cards_splits_on_spaces_and_commas_and_takes_ids():
    assert parse_cards("5H 5D JS") == [30, 17, 49]
    assert parse_cards("5H,5D, JS") == [30, 17, 49]
    assert parse_cards(["5H", 17, "js"]) == [30, 17, 49]
    assert parse_cards("") == []


def test_parse_cards_error_names_the_bad_token_among_good_ones():
    with pytest.raises(ValueError, match="'ZZ'"):
        parse_cards("5H ZZ JS")


@pytest.mark.parametrize("bad", [-1, 52, 3.0, True, None, [1]])
def test_as_card_rejects_non_cards(bad):
    with pytest.raises(ValueError, match="bad card"):
        as_card(bad)


def test_as_card_accepts_numpy_ints_and_text():
    assert as_card(np.int8(51)) == 51 and type(as_card(np.int64(7))) is int
    assert as_card("ac") == 0


def test_cards_str_joins_with_spaces():
    assert cards_str([0, 13, 26, 39]) == "AC AD AH AS"


def test_card_id_rejects_out_of_range_rank_or_suit():
    with pytest.raises(ValueError, match="rank 13"):
        card_id(13, 0)
    with pytest.raises(ValueError, match="suit 4"):
        card_id(0, 4)
