"""crib_env.rules: one worked case per rule, the batch (numpy) and compiled (numba) forms of the
same functions agreeing with the plain one."""

from __future__ import annotations

import numpy as np
import pytest

from crib_env import rule_kernels, rules
from crib_env.cards import JACK, MAX_VALUE, N_SUITS, parse_card, parse_cards


def test_the_count_stays_at_31_or_under():
    assert rules.count_after(21, 10) == 31
    assert rules.fits(21, 10) and not rules.fits(22, 10)
    assert rules.card_fits(parse_card("AS"), 30) and not rules.card_fits(parse_card("2S"), 30)
    assert rules.playable(parse_cards("KH 2C AD 9S"), 29) == parse_cards("2C AD")
    assert rules.can_play(parse_cards("KH 9S"), 22) and not rules.can_play(parse_cards("KH 9S"), 23)
    assert rules.count_of(parse_cards("KH 5S 6C")) == 21


def test_the_count_restarts_at_31_or_after_a_go():
    assert rules.count_restarts(31) and not rules.count_restarts(30)
    assert rules.count_restarts(12, go_pegged=True)


def test_a_ten_card_scores_at_5_and_21_only():
    assert [c for c in range(rules.COUNT_LIMIT + 1) if rules.ten_card_scores_at(c)] == [5, 21]


def test_play_points():
    assert rules.fifteen_points(15) == 2 and rules.fifteen_points(14) == 0
    assert rules.thirty_one_points(31) == 2 and rules.thirty_one_points(15) == 0
    assert rules.last_card_points(30) == 1 and rules.last_card_points(31) == 0


def test_sets_pay_two_per_pair():
    assert [rules.set_points(n) for n in range(rules.MAX_SET + 1)] == [0, 0, 2, 6, 12]


def test_runs_pay_a_point_per_card_from_three():
    assert [rules.run_points(n) for n in range(7)] == [0, 0, 0, 3, 4, 5, 6]


@pytest.mark.parametrize(("four", "starter", "crib", "points"), [
    (True, True, False, 5), (True, False, False, 4), (False, True, False, 0),
    (True, True, True, 5), (True, False, True, 0), (False, False, True, 0)])
def test_flush(four, starter, crib, points):
    assert rules.flush_points(four, starter, crib) == points


def test_nobs_and_heels():
    assert rules.nobs_points(JACK, 2, 2) == 1
    assert rules.nobs_points(JACK, 1, 2) == 0 and rules.nobs_points(JACK - 1, 2, 2) == 0
    assert rules.heels_points(JACK) == 2 and rules.heels_points(JACK + 1) == 0


def test_the_show_rules_work_elementwise_on_arrays():
    four, starter = np.array([1, 1, 0, 0], dtype=bool), np.array([1, 0, 1, 0], dtype=bool)
    for crib in (False, True):
        expected = [rules.flush_points(bool(f), bool(s), crib) for f, s in zip(four, starter, strict=True)]
        assert rules.flush_points(four, starter, crib).tolist() == expected
    ranks = np.arange(JACK - 1, JACK + 2).repeat(N_SUITS)
    suits = np.tile(np.arange(N_SUITS), 3)
    assert rules.nobs_points(ranks, suits, 2).tolist() == [
        rules.nobs_points(int(r), int(s), 2) for r, s in zip(ranks, suits, strict=True)]


def test_the_compiled_count_rules_are_the_plain_ones():
    for count in range(rules.COUNT_LIMIT + 1):
        assert rule_kernels.count_restarts(count) == rules.count_restarts(count)
        assert rule_kernels.ten_card_scores_at(count) == rules.ten_card_scores_at(count)
        assert rule_kernels.last_card_points(count) == rules.last_card_points(count)
        for value in range(1, MAX_VALUE + 1):
            assert rule_kernels.fits(count, value) == rules.fits(count, value)
            assert rule_kernels.count_after(count, value) == rules.count_after(count, value)


def test_the_compiled_point_rules_are_the_plain_ones():
    for n in range(rules.MAX_SET + 1):
        assert rule_kernels.set_points(n) == rules.set_points(n)
    for n in range(8):
        assert rule_kernels.run_points(n) == rules.run_points(n)
    for total in range(rules.COUNT_LIMIT + 1):
        assert rule_kernels.fifteen_points(total) == rules.fifteen_points(total)
        assert rule_kernels.thirty_one_points(total) == rules.thirty_one_points(total)
    for four in (False, True):
        for starter in (False, True):
            for crib in (False, True):
                assert (rule_kernels.flush_points(four, starter, crib)
                        == rules.flush_points(four, starter, crib))
    for rank in (JACK - 1, JACK):
        for suit in range(N_SUITS):
            assert rule_kernels.nobs_points(rank, suit, 2) == rules.nobs_points(rank, suit, 2)
        assert rule_kernels.heels_points(rank) == rules.heels_points(rank)
