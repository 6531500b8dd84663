"""Fuzzing what users and files hand in (issue 27): the record reader, card parsing and the env's
``reset``. Every input gives a valid result or a ``ValueError`` / ``TypeError`` with a message,
never another exception, and a refused ``reset`` leaves the game as it was. The quick tier draws
a few dozen examples per property (seconds); the slow tier (``make test-slow``) thousands."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import crib_env
from crib_env.cards import N_CARDS, card_str, parse_card, parse_cards
from training.record import check_record, read_record_file, replay

QUICK = settings(max_examples=50, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=3000, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12)
card_texts = st.sampled_from([card_str(c) for c in range(N_CARDS)])
tokens = st.one_of(card_texts, st.text(max_size=4),
                   st.sampled_from(["10H", "10h", "ah", "A♠", "K♥", "1C", "0", "JK", "TDD"]))
deal_specs = st.one_of(
    st.fixed_dictionaries({"hands": st.fixed_dictionaries({
        "player_0": st.lists(st.integers(-2, 60) | card_texts, min_size=0, max_size=7),
        "player_1": st.lists(st.integers(-2, 60) | card_texts, min_size=0, max_size=7)}),
        "starter": st.integers(-2, 60) | card_texts}),
    json_values)


def _a_record() -> dict:
    import random

    from crib_env.game import Game
    from training.record import game_record

    game = Game(seed=4)
    rng = random.Random(4)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return game_record(game, ["a", "b"], game.records[0].dealer)


RECORD = _a_record()


def _clear(err: Exception) -> None:
    assert isinstance(err, (ValueError, TypeError)), repr(err)
    assert str(err).strip(), repr(err)


def _record_mutations():
    keys = st.sampled_from(sorted(RECORD))
    return st.tuples(keys, json_values)


def check_mutated_record(changes):
    record = json.loads(json.dumps(RECORD))
    for key, value in changes:
        record[key] = value
    try:
        replay(check_record(record))
    except Exception as err:  # noqa: BLE001 - the property is what kind it is
        _clear(err)


def check_record_file(tmp_path, data):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    file = read_record_file(path)  # never raises on content
    assert len(file.games) == sum(1 for line in data.split(b"\n") if line.strip())
    for number, problem in file.problems.items():
        assert file.games[number] is None and ", line " in problem


def check_card_text(text):
    try:
        card = parse_card(text)
    except Exception as err:  # noqa: BLE001
        _clear(err)
        return
    assert 0 <= card < N_CARDS and parse_card(card_str(card)) == card


def check_cards_text(texts):
    line = " ".join(texts)
    try:
        cards = parse_cards(line)
    except Exception as err:  # noqa: BLE001
        _clear(err)
        return
    assert all(0 <= c < N_CARDS for c in cards)


def check_reset(seed, first_dealer, deals):
    env = crib_env.raw_env()
    env.reset(seed=1)
    before = (repr(env.game), env.game.hands[0][:], env.game.hands[1][:], env._seeder.getstate())
    options = {"first_dealer": first_dealer}
    if deals is not None:
        options["deals"] = deals
    try:
        env.reset(seed=seed, options=options)
    except Exception as err:  # noqa: BLE001
        _clear(err)
        after = (repr(env.game), env.game.hands[0][:], env.game.hands[1][:],
                 env._seeder.getstate())
        assert after == before  # a refused reset changes nothing
        return
    assert sorted(env.game.hands[0] + env.game.hands[1]) == sorted(set(env.game.hands[0]
                                                                       + env.game.hands[1]))


seeds = st.one_of(st.none(), st.integers(-5, 2**70), st.text(max_size=3), st.floats(),
                  st.booleans(), st.lists(st.integers(), max_size=2))
dealers = st.one_of(st.none(), st.sampled_from(["player_0", "player_1", "player_2", "", 0, 1]))
deal_lists = st.one_of(st.none(), st.lists(deal_specs, max_size=3), json_values)
record_bytes = st.one_of(st.binary(max_size=300),
                         st.just(json.dumps(RECORD).encode()).map(lambda b: b[:len(b) // 2]),
                         st.lists(st.sampled_from([json.dumps(RECORD).encode(), b"{", b"[]",
                                                   b"\xff\xfe", b"", b"null"]),
                                  max_size=4).map(b"\n".join))


@QUICK
@given(st.lists(_record_mutations(), min_size=1, max_size=3))
@example([("actions", []), ("deals", [{}])])  # found by the slow tier: was a KeyError
def test_quick_mutated_records_replay_or_give_a_clear_error(changes):
    check_mutated_record(changes)


@QUICK
@given(record_bytes)
def test_quick_any_bytes_read_as_far_as_they_are_intact(tmp_path, data):
    check_record_file(tmp_path, data)


@QUICK
@given(tokens | json_values)
def test_quick_card_text_parses_or_gives_a_clear_error(text):
    check_card_text(text)


@QUICK
@given(st.lists(tokens, max_size=8))
def test_quick_card_lists_parse_or_give_a_clear_error(texts):
    check_cards_text(texts)


@QUICK
@given(seeds, dealers, deal_lists)
def test_quick_reset_options_give_a_game_or_a_clear_error_and_change_nothing(seed, first_dealer,
                                                                            deals):
    check_reset(seed, first_dealer, deals)


@pytest.mark.slow
@SLOW
@given(st.lists(_record_mutations(), min_size=1, max_size=5))
def test_slow_mutated_records(changes):
    check_mutated_record(changes)


@pytest.mark.slow
@SLOW
@given(record_bytes)
def test_slow_record_bytes(tmp_path, data):
    check_record_file(tmp_path, data)


@pytest.mark.slow
@SLOW
@given(tokens | json_values)
def test_slow_card_text(text):
    check_card_text(text)


@pytest.mark.slow
@SLOW
@given(seeds, dealers, deal_lists)
def test_slow_reset_options(seed, first_dealer, deals):
    check_reset(seed, first_dealer, deals)
