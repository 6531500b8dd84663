"""The exact discard analyzer (agents.analysis) and `crib analyze`."""

from __future__ import annotations

import random
import time
from itertools import combinations

import numpy as np
import pytest
from typer.testing import CliRunner

from agents.analysis import analyze_discards
from agents.card_features import crib_table
from crib_cli.analyze import print_analysis
from crib_cli.main import app
from crib_env.cards import RANK, VALUE, parse_cards
from crib_env.expected import crib_by_discard_ranks, expected_cribs
from crib_env.scoring import score_hand, score_hands

FIVES = parse_cards("5C 5D 5H 5S")


def brute_force(hand6, dealer, seen=()):
    """Every discard by direct enumeration: hand over each unseen starter, crib over each starter
    and each unordered pair of the other unseen cards, all with ``score_hand``."""
    unseen = [c for c in range(52) if c not in hand6 and c not in seen]
    out = {}
    for discard in combinations(hand6, 2):
        keep = [c for c in hand6 if c not in discard]
        hand = np.mean([score_hand(keep, s) for s in unseen])
        cribs = [score_hand([*discard, a, b], s, crib=True)
                 for s in unseen for a, b in combinations([c for c in unseen if c != s], 2)]
        crib = float(np.mean(cribs))
        out[frozenset(discard)] = (hand, crib, hand + (crib if dealer else -crib))
    return out


def check_against(options, expected):
    assert len(options) == 15
    for option in options:
        hand, crib, net = expected[frozenset(option.discard)]
        assert option.hand == pytest.approx(hand, abs=1e-9)
        assert option.crib == pytest.approx(crib, abs=1e-9)
        assert option.net == pytest.approx(net, abs=1e-9)
    nets = [o.net for o in options]
    assert all(a >= b - 1e-9 for a, b in zip(nets, nets[1:], strict=False))  # best first


def test_matches_brute_force_on_sampled_hands_with_seen_cards():
    """With 32 other cards seen, the enumeration is small enough to do with score_hand."""
    rng = random.Random(7)
    hands = [parse_cards("5H 5D JS 6C 7C KD"), parse_cards("JH 5H 9H KH 2C JC")]
    hands += [rng.sample(range(52), 6) for _ in range(6)]
    for i, hand6 in enumerate(hands):
        rest = [c for c in range(52) if c not in hand6]
        seen = rng.sample(rest, 32)
        if i == 1:  # keep the hearts unseen so that five-card crib flushes occur
            seen = [c for c in rest if c // 13 != 2][:32]
        dealer = i % 2 == 0
        check_against(analyze_discards(hand6, dealer, seen=seen), brute_force(hand6, dealer, seen))


def test_matches_brute_force_over_all_46_starters_and_990_pairs():
    """A full deal, no other card seen: 15 x 46 x 990 cribs, scored in one batch."""
    hand6 = parse_cards("5H 5D JS 6C 7C KD")
    unseen = [c for c in range(52) if c not in hand6]
    options = analyze_discards(hand6, dealer=False)
    deals = np.array([(s, a, b) for s in unseen
                      for a, b in combinations([c for c in unseen if c != s], 2)])
    assert len(deals) == 46 * 990
    for option in options:
        keep = list(option.keep)
        hand = np.mean([score_hand(keep, s) for s in unseen])
        cribs = np.column_stack([np.full(len(deals), option.discard[0]),
                                 np.full(len(deals), option.discard[1]), deals[:, 1:]])
        crib = score_hands(cribs, deals[:, 0], crib=True).astype(float).mean()
        assert option.hand == pytest.approx(hand, abs=1e-9)
        assert option.crib == pytest.approx(crib, abs=1e-9)
        assert option.net == pytest.approx(hand - crib, abs=1e-9)


@pytest.mark.parametrize("ranks", [(4, 4), (4, 9), (0, 12), (6, 7)])
def test_crib_by_discard_ranks_is_the_mean_over_every_pair_and_starter_without_flush_or_nobs(ranks):
    # two discards of different suits, no jack: no flush, and nobs only from the other three
    a, b = ranks[0], 13 + ranks[1]
    rest = [c for c in range(52) if c not in (a, b)]
    triples = np.array(list(combinations(rest, 3)))
    hands = np.column_stack([np.full(len(triples), a), np.full(len(triples), b), triples[:, :2]])
    starters = triples[:, 2]
    points = score_hands(hands, starters, crib=True).astype(np.int64)
    jack_nobs = ((triples[:, :2] % 13 == 10) & (triples[:, :2] // 13 == (starters // 13)[:, None]))
    flush = (triples // 13 == a // 13).all(axis=1) & (b // 13 == a // 13)
    rank_only = points - jack_nobs.any(axis=1) - 5 * flush
    assert crib_by_discard_ranks()[ranks] == pytest.approx(rank_only.mean(), abs=1e-12)


def exact_cribs_of_two_suits() -> np.ndarray:
    """expected_cribs of every rank pair thrown in two different suits, nothing else seen."""
    table = np.zeros((13, 13))
    for r1 in range(13):
        for r2 in range(13):
            rest = np.array([c for c in range(52) if c not in (r1, 13 + r2)], dtype=np.int64)
            table[r1, r2] = expected_cribs(np.array([r1]), np.array([13 + r2]), rest)[0]
    return table


def test_cheaper_crib_estimates_stay_within_their_stated_error_of_the_exact_crib():
    exact = exact_cribs_of_two_suits()
    # the card features' Monte Carlo table: within 0.11 points (measured 0.108, mean 0.038)
    assert np.abs(crib_table() - exact).max() < 0.11
    # the opponent model's rank-only table leaves out nobs (and flush): never above the exact
    # crib, and at most half a point below it (measured 0.4996, with a jack thrown)
    gap = exact - crib_by_discard_ranks()
    assert gap.min() > -1e-12 and gap.max() < 0.5


def test_textbook_keep_two_fives_with_a_ten_card():
    for text in ("5H 5D KS 9C 2D 7S", "5S 5D JC 8H 3C AD", "5H 5C KD 4S 9C AH", "5D 5S QH 7C 2S 9D"):
        for dealer in (True, False):
            keep = analyze_discards(parse_cards(text), dealer)[0].keep
            assert sum(RANK[c] == 4 for c in keep) == 2, (text, dealer, keep)
            assert any(VALUE[c] == 10 for c in keep), (text, dealer, keep)


def test_textbook_throw_two_fives_to_own_crib_not_to_opponents():
    hand6 = parse_cards("5H 5D TC JC QC KC")
    assert set(analyze_discards(hand6, dealer=True)[0].discard) == set(parse_cards("5H 5D"))
    best_pone = analyze_discards(hand6, dealer=False)[0]
    assert set(best_pone.keep) >= set(parse_cards("5H 5D"))


def test_never_throws_two_fives_to_the_opponents_crib():
    rng = random.Random(11)
    for _ in range(150):
        fives = rng.sample(FIVES, 2)
        hand6 = fives + rng.sample([c for c in range(52) if c not in fives], 4)
        options = analyze_discards(hand6, dealer=False)
        assert set(options[0].discard) != set(fives), options[0].describe()
        pair_of_fives = next(o for o in options if set(o.discard) == set(fives))
        assert pair_of_fives.crib > 8.0  # two fives make the opponent's crib worth 8+ on average


def test_one_hand_takes_at_most_20_ms():
    hand6 = parse_cards("5H 5D JS 6C 7C KD")
    analyze_discards(hand6, dealer=True)  # warm the cached tables
    rng = random.Random(3)
    hands = [rng.sample(range(52), 6) for _ in range(50)]
    start = time.perf_counter()
    for hand in hands:
        analyze_discards(hand, dealer=True)
    assert (time.perf_counter() - start) / len(hands) <= 0.020


@pytest.mark.parametrize("bad, words", [
    (["5H", "5D", "JS", "6C", "7C"], "6 cards, got 5"),
    (["5H", "5D", "JS", "6C", "7C", "KD", "2C"], "6 cards, got 7"),
    (["5H", "5D", "JS", "6C", "7C", "5H"], "duplicate card 5H"),
    (["5H", "5D", "JS", "6C", "7C", "XZ"], "bad card 'XZ'"),
    (["5H", "5D", "JS", "6C", "7C", "1H"], "bad card '1H'"),
])
def test_bad_input_raises_value_error_naming_the_problem(bad, words):
    with pytest.raises(ValueError, match=words):
        print_analysis(bad, dealer=True)
    result = CliRunner().invoke(app, ["analyze", *bad, "--pone"])
    assert result.exit_code == 2
    assert "error:" in result.output and words in result.output


def test_cli_prints_the_ranked_table():
    result = CliRunner().invoke(app, ["analyze", "5H", "5D", "JS", "6C", "7C", "KD", "--dealer"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "│" in line]
    first = next(line for line in lines if line.strip("│ ").startswith("1 "))
    assert "6C 7C" in first and "+17.81" in first  # throw 6-7, keep 5-5-J-K: 12.43 + 5.37
    assert sum(line.strip("│ ").split(" ")[0].isdigit() for line in lines) == 15
    pone = CliRunner().invoke(app, ["analyze", "5H 5D JS 6C 7C KD", "--pone"])
    assert pone.exit_code == 0 and "pone" in pone.output
