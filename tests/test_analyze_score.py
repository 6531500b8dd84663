"""``crib analyze --score``: each throw's chance to win at a board position, the rest of the deal
simulated from the throw then the win-odds table (issue 25). The figures agree with a simulation
run on the plain rules engine with the real agents; bad scores are refused, naming the problem,
before any simulation; without ``--score`` the table is as before."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from agents.analysis import analyze_discards
from agents.endgame import win_chance
from crib_cli.main import app
from crib_env.cards import card_str, parse_cards
from crib_env.game import Game, Phase, ScriptedDeal
from crib_env.observation import encode
from crib_play import chances

HAND = "5H 5D JS 6C 7C KD"


def run(*args: str):
    return CliRunner().invoke(app, ["analyze", *HAND.split(), *args])


def test_score_adds_each_throws_chance_and_its_standard_error():
    result = run("--dealer", "--score", "95", "100", "--sims", "300", "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["score"] == [95, 100] and figures["sims"] == 300 and figures["target"] == 121
    options = figures["options"]
    assert len(options) == 15
    assert [o["net"] for o in options] == sorted((o["net"] for o in options), reverse=True)
    want = chances.throw_win_chances(parse_cards(HAND), True, 95, 100, 121, 300, 0)
    for o in options:
        chance = want[frozenset(parse_cards(" ".join(o["throw"])))]
        assert o["win_probability"] == pytest.approx(chance.chance)
        assert o["stderr"] == pytest.approx(chance.stderr) and 0 < o["stderr"] < 0.05
    # keeping 5-5-J-K as dealer at 95-100 wins far more often than throwing both fives away
    by_throw = {" ".join(o["throw"]): o["win_probability"] for o in options}
    assert by_throw["6C 7C"] > by_throw["5H 5D"] + 0.2
    table = run("--dealer", "--score", "95", "100", "--sims", "300")
    assert table.exit_code == 0 and "win (stderr)" in table.output
    assert "simulated 300 times" in table.output.replace("\n", " ")


def test_without_score_the_table_is_the_exact_analysis_alone():
    result = run("--pone", "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert "score" not in figures and all("win_probability" not in o for o in figures["options"])
    want = analyze_discards(parse_cards(HAND), dealer=False)
    assert [o["throw"] for o in figures["options"]] == [[card_str(c) for c in o.discard]
                                                       for o in want]
    assert "win" not in run("--pone").output


@pytest.mark.parametrize("args, words", [
    (["--score", "95", "121"], "the opponent's score must be 0..120"),
    (["--score", "-1", "100"], "your score must be 0..120"),
    (["--score", "130", "0"], "your score must be 0..120"),
    (["--score", "95", "100", "--sims", "1"], "--sims must be a whole number 2.."),
    (["--score", "95", "100", "--sims", "1000000"], "--sims must be a whole number 2.."),
])
def test_bad_scores_are_refused_naming_the_problem_before_any_work(args, words, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("simulated although the input was bad")

    monkeypatch.setattr("agents.rollout.keep_win_chances", no_work)
    monkeypatch.setattr("crib_cli.analyze.analyze_discards", no_work)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and words in result.output


def test_a_score_that_is_not_a_number_is_refused_by_the_option():
    result = run("--score", "95", "lots")
    assert result.exit_code == 2 and "--score" in result.output


class _ExpectedValueDiscards:
    """The standard agent's tactics in the play, and the expected-value throw (best exact net) at
    the discard: the opponent the simulation models."""

    def __init__(self, seed: int) -> None:
        from agents.standard import StandardAgent

        self.standard = StandardAgent(seed=seed)
        self.throw: list[int] = []

    def act(self, game: Game, seat: int) -> int:
        if game.phase == Phase.DISCARD:
            if len(game.hands[seat]) == 6:
                best = analyze_discards(game.hands[seat], dealer=game.dealer == seat)[0]
                self.throw = list(best.discard)
            return next(c for c in self.throw if c in game.hands[seat])
        return int(self.standard.act(encode(game, seat), game.legal_mask()))


def direct_chance(hand6: list[int], throw: list[int], dealer: bool, own: int, opp: int,
                  deals: int, seed: int) -> tuple[float, float]:
    """The chance to win after this throw by playing the rest of the deal ``deals`` times on the
    plain rules engine (``crib_env.game.Game``): the opponent's six and the starter dealt from the
    other cards, both sides pegging with the standard tactics, then the win-odds table."""
    rng = np.random.default_rng(seed)
    rest = [c for c in range(52) if c not in hand6]
    values = []
    for _ in range(deals):
        drawn = [int(c) for c in rng.choice(rest, 7, replace=False)]
        deal = ScriptedDeal.parse({"hands": [[card_str(c) for c in hand6],
                                             [card_str(c) for c in drawn[:6]]],
                                   "starter": card_str(drawn[6])})
        game = Game(target=121, first_dealer=0 if dealer else 1, deals=[deal], seed=0,
                    single_deal=True)
        game.scores[0], game.scores[1] = own, opp
        me, them = _ExpectedValueDiscards(1), _ExpectedValueDiscards(2)
        me.throw = list(throw)
        while not game.is_over and game.phase != Phase.DEAL_OVER:
            seat = game.to_move
            if seat == 0 and game.phase == Phase.DISCARD:
                card = next(c for c in throw if c in game.hands[0])
            else:
                card = (me if seat == 0 else them).act(game, seat)
            game.step(card, seat)
        if game.is_over:
            values.append(1.0 if game.winner == 0 else 0.0)
        else:
            values.append(win_chance(game.scores[0], game.scores[1], not dealer, 121))
    v = np.array(values)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(deals))


@pytest.mark.slow
@pytest.mark.parametrize("throw, dealer, score", [("6C 7C", True, (95, 100)),
                                                  ("5H 5D", True, (95, 100)),
                                                  ("JS KD", False, (110, 100))])
def test_the_chance_agrees_with_a_direct_simulation_within_the_standard_error(throw, dealer,
                                                                              score):
    hand = parse_cards(HAND)
    simulated = chances.throw_win_chances(hand, dealer, *score, 121, 4000, 0)
    got = simulated[frozenset(parse_cards(throw))]
    mean, stderr = direct_chance(hand, parse_cards(throw), dealer, *score, 500, 7)
    combined = (got.stderr ** 2 + stderr ** 2) ** 0.5
    assert abs(got.chance - mean) < 3 * combined, (got, mean, stderr)
