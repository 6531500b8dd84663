"""Play and watch: the game session, table talk, recorded games and replays (issue 13)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from agents.base import RandomAgent
from crib_env.cards import VALUE, card_str
from crib_env.game import Game, Phase
from crib_env.render import spoken
from crib_env.scoring import FIFTEEN, GO, HEELS, LAST_CARD, PAIR, RUN, THIRTY_ONE, ScoreEvent
from crib_play.session import HUMAN, GameSession, MoveError
from crib_play.talk import announcements, peg_talk, pegs
from crib_play.terminal import play_terminal
from training.evaluate import evaluate
from training.record import game_record, read_record, read_records, replay, write_records


def play_out(session: GameSession, rng: random.Random, claim=None) -> None:
    """Play the person's side at random, leaving every show (claiming first in practice)."""
    while True:
        if session.pause is not None:
            if session.pause.claims_needed:
                session.claim(**{w: (claim if claim is not None else 0)
                                 for w in session.pause.claims_needed})
            if session.over:
                return
            session.continue_()
            continue
        if session.over:
            return
        view = session.view()
        session.move(rng.sample(view["legal"], view["cards_needed"]))


def test_peg_talk_says_what_players_say():
    assert peg_talk([ScoreEvent(FIFTEEN, 2)]) == "fifteen two"
    assert peg_talk([ScoreEvent(GO, 1)]) == "go for one"
    assert peg_talk([ScoreEvent(PAIR, 2)]) == "a pair for two"
    assert peg_talk([ScoreEvent(HEELS, 2)]) == "two for his heels"
    assert peg_talk([ScoreEvent(LAST_CARD, 1)]) == "one for last card"
    assert peg_talk([ScoreEvent(THIRTY_ONE, 2)]) == "thirty-one for two"
    assert peg_talk([ScoreEvent(FIFTEEN, 2), ScoreEvent(PAIR, 2)]) == \
        "fifteen two and a pair is four"
    assert peg_talk([ScoreEvent(RUN, 3, (1, 2, 3))]) == "a run of three for three"


def test_each_play_is_announced_with_the_engines_count():
    names = ["You", "agent"]
    for seed in range(30):
        game, rng = Game(seed=seed), random.Random(seed)
        plays = []  # (player, card, the count the engine reached with it)
        while not game.is_over:
            before, phase, player = game.count, game.phase, game.to_move
            card = rng.choice(game.legal_actions())
            game.step(card)
            if phase == Phase.PLAY:
                plays.append((player, card, before + VALUE[card]))
        said = [a.text for a in announcements(game.log, names) if a.kind == "play"]
        assert len(said) == len(plays)
        for text, (player, card, count) in zip(said, plays, strict=True):
            assert text.startswith(f"{names[player]}: {card_str(card)}")
            if count not in (15, 31):  # "fifteen two" / "thirty-one for two" say it themselves
                assert f", {spoken(count)}" in text, (seed, text, count)


def test_pegs_follow_the_engine_front_and_back():
    for seed in range(40):
        game, rng = Game(seed=seed), random.Random(seed)
        while not game.is_over:
            game.step(rng.choice(game.legal_actions()))
            assert pegs(game.log) == (game.scores, game.prev_scores)


class FirstLegal:
    """A deterministic stand-in agent: the lowest legal card id."""

    name = "first"

    def reset(self) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[0])


# The person (seat 0) is pone; the agent deals and throws JC QC (its two lowest ids).
SCRIPTED = {"hands": {"player_0": "KC KH 9S AD AS 2S", "player_1": "QC QD QH JC 5S 4S"},
            "starter": "JH"}


def test_talk_announces_a_scripted_deal():
    session = GameSession(FirstLegal(), "first", first_dealer=1, deals=[SCRIPTED])
    session.move(["AS", "2S"])
    session.move(["KC"])
    talk = [a["text"] for a in session.view()["talk"]]
    assert talk[:4] == ["Deal 1: first deals", "Starter JH: first pegs two for his heels",
                        "You: KC, ten", "first: QD, twenty"]
    session.move(["AD"])  # 21; the agent lays QH to 31
    assert session.view()["talk"][-1]["text"] == "first: QH, thirty-one for two"
    assert session.view()["scores"]["opponent"] == {"front": 4, "back": 2}


def test_play_past_31_is_refused():
    session = GameSession(FirstLegal(), "first", first_dealer=1, deals=[SCRIPTED])
    session.move(["AS", "2S"])
    session.move(["KC"])  # 10, the agent QD: 20
    session.move(["9S"])  # 29: the agent holds QH 4S 5S, none fits, so it says go
    view = session.view()
    assert view["count"] == 29 and view["opponent_said_go"] and view["legal"] == ["AD"]
    before = json.dumps(view)
    with pytest.raises(MoveError, match="past 31") as err:
        session.move(["KH"])
    assert err.value.status == 400 and json.dumps(session.view()) == before


def test_a_bad_move_changes_nothing_and_says_why():
    session = GameSession(RandomAgent(0), "random", seed=3)
    while not session.your_turn:
        session.continue_()
    before = json.dumps(session.view())
    hand = session.view()["hand"]
    outside = next(c for c in ("AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C") if c not in hand)
    for cards, reason in ((hand[:1], "lay 2 cards"), ([hand[0], hand[0]], "the same card twice"),
                          ([hand[0], outside], "not in your hand"), (["ZZ", hand[0]], "bad card"),
                          ("5H 6H", "bad card")):
        with pytest.raises(MoveError, match=reason) as err:
            session.move(cards)
        assert err.value.status == 400
        assert json.dumps(session.view()) == before
    with pytest.raises(MoveError, match="no show") as err:
        session.continue_()
    assert err.value.status == 409


def test_view_never_holds_the_opponents_cards_before_the_show():
    session = GameSession(RandomAgent(1), "random", seed=11)
    rng = random.Random(1)
    checked = 0
    while not session.over:
        if session.pause is not None:
            if session.over:
                break
            session.continue_()
            continue
        game = session.game
        hidden = {*game.hands[1], *game.discards[1]} | (
            {game._next_starter} if game.starter is None else set())
        text = json.dumps(session.view())
        from crib_env.cards import card_str

        leaked = [card_str(c) for c in hidden if f'"{card_str(c)}"' in text]
        assert not leaked, f"view leaks {leaked}"
        checked += 1
        view = session.view()
        session.move(rng.sample(view["legal"], view["cards_needed"]))
    assert checked > 20


def test_count_practice_keeps_claims_and_hides_the_count_until_claimed():
    session = GameSession(RandomAgent(2), "random", seed=5, practice=True)
    rng = random.Random(5)
    while session.pause is None or not session.pause.claims_needed:
        view = session.view()
        session.move(rng.sample(view["legal"], view["cards_needed"]))
    view = session.view()
    mine = [c for c in view["show"]["counts"] if c["owner"] == "you"]
    assert mine and all(c["points"] is None and c["talk"] is None for c in mine)
    with pytest.raises(MoveError, match="claim your"):
        session.continue_()
    with pytest.raises(MoveError, match="0..29"):
        session.claim(**{w: 30 for w in session.pause.claims_needed})
    new = session.claim(**{w: 7 for w in session.pause.claims_needed})
    actual = session._show_points(session.pause)
    assert [(c["claimed"], c["actual"]) for c in new] == [(7, actual[c["what"]]) for c in new]
    assert all(c["points"] is not None for c in session.view()["show"]["counts"])
    assert session.view()["scores"]["you"]["front"] == session.game.scores[HUMAN]


def test_a_played_game_records_and_replays():
    session = GameSession(RandomAgent(4), "random", seed=9)
    play_out(session, random.Random(9))
    record = session.record()
    assert replay(record).scores == session.game.scores
    assert sum(e["points"] for e in record["events"] if e["player"] == 0) == session.game.scores[0]


def test_terminal_game_to_the_end(tmp_path):
    from io import StringIO

    from rich.console import Console

    session = GameSession(RandomAgent(6), "random", seed=6)
    first = iter(["?", "x1"])

    def ask(prompt: str) -> str:  # the lowest card fits whenever any does
        return next(first, None) or ("1 2" if "throw" in prompt else "1" if "play" in prompt
                                     else "")

    out = StringIO()
    assert play_terminal(session, Console(file=out, width=100), ask=ask)
    text = out.getvalue()
    assert "what each throw is worth" in text and "bad card 'x1'" in text
    assert "points per deal" in text and session.view()["result"] in text


def test_evaluate_record_replays_batch_and_per_row_sides(tmp_path):
    from agents.greedy import GreedyAgent

    class GreedyWithMemory(GreedyAgent):  # not declared stateless: one copy per game
        stateless = False
        name = "greedy"

    for kind, agent in (("batch", "greedy"), ("per-row", GreedyWithMemory())):
        report = evaluate(agent, "random", games=6, seed=2, progress=False, regret=False,
                          record_games=True)
        path = tmp_path / f"{kind}.jsonl"
        write_records(path, report.records)
        records = read_records(path)
        assert len(records) == 6
        for i, record in enumerate(records):
            game = replay(record)
            seat = record["evaluation"]["agent_seat"]
            assert game.scores[seat] - game.scores[1 - seat] == report.margins[i]
            assert record["players"][seat] == "greedy"


def test_recording_off_keeps_the_report():
    on = evaluate("greedy", "random", games=4, seed=1, progress=False, regret=False,
                  record_games=True)
    off = evaluate("greedy", "random", games=4, seed=1, progress=False, regret=False)
    assert on.to_dict(volatile=False) == off.to_dict(volatile=False)
    assert off.records == [] and len(on.records) == 4


def test_bad_record_files_are_named(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text('{"version": 1}\n')
    with pytest.raises(ValueError, match="line 1: not a game record: game record lacks"):
        read_records(path)
    game = Game(seed=1)
    rng = random.Random(1)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    record = game_record(game, ["a", "b"], game.records[0].dealer)
    write_records(path, [record])
    with pytest.raises(ValueError, match="--game must be 0..0"):
        read_record(path, 3)
    record["actions"][5], record["actions"][6] = record["actions"][6], record["actions"][5]
    record["scores"] = [0, 0]
    with pytest.raises(ValueError, match="does not replay"):
        replay(record)


def test_cli_replay_play_and_evaluate_record(tmp_path):
    from typer.testing import CliRunner

    from crib_cli.main import app

    runner = CliRunner()
    path = tmp_path / "games.jsonl"
    result = runner.invoke(app, ["evaluate", "--agent", "greedy", "--opponent", "random",
                                 "--games", "2", "--record", str(path)])
    assert result.exit_code == 0, result.output
    assert len(read_records(path)) == 2
    result = runner.invoke(app, ["replay", str(path), "--game", "1"])
    assert result.exit_code == 0, result.output
    record = read_records(path)[1]
    winner = record["players"][record["winner"]]
    assert f"{winner} wins {max(record['scores'])}-{min(record['scores'])}" in result.output
    result = runner.invoke(app, ["replay", str(path), "--game", "2"])
    assert result.exit_code == 2 and "--game must be 0..1" in result.output
    result = runner.invoke(app, ["replay", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "no recorded games at" in result.output
    result = runner.invoke(app, ["play", "--opponent", "nobody"])
    assert result.exit_code == 2 and "unknown agent 'nobody'" in result.output
    result = runner.invoke(app, ["play", "--opponent", "random", "--seed", "1"], input="q\n")
    assert result.exit_code == 0 and "left the game" in result.output


def test_a_game_won_in_a_practice_show_keeps_its_result_until_the_claim():
    session = GameSession(RandomAgent(0), "random", seed=0, practice=True)
    rng = random.Random(0)
    while not session.over:
        if session.pause is not None:
            session.claim(**{w: 0 for w in session.pause.claims_needed})
            session.continue_()
            continue
        view = session.view()
        session.move(rng.sample(view["legal"], view["cards_needed"]))
    assert session.pause is not None and session.pause.claims_needed  # seed 0 ends in a show
    view = session.view()
    assert view["result"] is None and "deals" not in view
    assert view["scores"]["you"]["front"] < session.game.target
    session.claim(**{w: 0 for w in session.pause.claims_needed})
    view = session.view()
    assert view["result"].startswith("you win 121-")
    assert view["scores"]["you"]["front"] == 121 and len(view["deals"]) == len(session.game.records)
