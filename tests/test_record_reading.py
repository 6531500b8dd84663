"""Records read as far as they are intact (issue 27): a cut-off last line or a bad game is named
with its line number and skipped while the other games replay; a malformed record is one clear
line naming the file and the line, never a traceback; a record's size is bounded."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from crib_cli.main import app
from crib_env.game import Game
from training.limits import ACTIONS_PER_DEAL, MAX_RECORD_DEALS, MAX_RECORD_TARGET
from training.record import (
    check_record,
    game_record,
    read_record,
    read_record_file,
    read_records,
    replay,
)

runner = CliRunner()


def played_record(seed: int, target: int = 121) -> dict:
    game = Game(seed=seed, target=target)
    rng = random.Random(seed)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return game_record(game, [f"north{seed}", f"south{seed}"], game.records[0].dealer)


def lines(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_a_cut_off_last_line_is_named_and_the_games_before_it_replay(tmp_path):
    path = tmp_path / "games.jsonl"
    text = lines(played_record(1), played_record(2), played_record(3))
    path.write_text(text[:-200])  # killed while writing game 2
    file = read_record_file(path)
    assert [g is not None for g in file.games] == [True, True, False]
    assert "line 3: not JSON (cut off: the file ends inside it)" in file.problems[2]
    assert [r["players"][0] for r in read_records(path)] == ["north1", "north2"]
    result = runner.invoke(app, ["replay", str(path), "--game", "1"])
    assert result.exit_code == 0, result.output
    assert "north2 vs south2" in result.output
    assert f"skipped game 2: {path}, line 3: not JSON (cut off" in result.output
    result = runner.invoke(app, ["replay", str(path), "--game", "2"])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: --game 2: {path}, line 3: not JSON (cut off")


def test_a_bad_game_in_the_middle_is_skipped_and_keeps_the_numbering(tmp_path):
    bad = played_record(2)
    bad["players"] = ["only one"]
    path = tmp_path / "games.jsonl"
    path.write_text(lines(played_record(1)) + "\n" + lines(bad, played_record(3)))
    assert [r["players"][0] for r in read_records(path)] == ["north1", "north3"]
    assert read_record(path, 2)["players"] == ["north3", "south3"]  # game 2 is still game 2
    with pytest.raises(ValueError, match=r"--game 1: .*line 3: not a game record: game record: "
                                         r"'players' must be two names, got \['only one'\]"):
        read_record(path, 1)
    result = runner.invoke(app, ["replay", str(path), "--game", "2"])
    assert result.exit_code == 0, result.output
    assert "north3 vs south3" in result.output and "skipped game 1: " in result.output


def _with(**changes) -> dict:
    record = played_record(5)
    record.update(changes)
    return record


MALFORMED = [
    (_with(players=["solo"]), "'players' must be two names"),
    (_with(players="ab"), "'players' must be two names"),
    (_with(scores=[121]), "'scores' must be two whole numbers, got [121]"),
    (_with(scores=["121", 90]), "'scores' must be two whole numbers"),
    (_with(target="121"), "'target' must be a whole number 1..10,000, got '121'"),
    (_with(target=True), "'target' must be a whole number"),
    (_with(first_dealer=2), "'first_dealer' must be seat 0 or 1, got 2"),
    (_with(deals="many"), "'deals' must be a list of 1.."),
    (_with(deals=[]), "'deals' must be a list of 1.."),
    (_with(deals=[1, 2]), "every entry of 'deals' must be an object"),
    (_with(actions=5), "'actions' must be a list of at most"),
    (_with(actions=[5, 6]), "every action must be a card as text"),
    (_with(winner=7), "'winner' must be seat 0 or 1, got 7"),
    (_with(version="x" * 1000), "game record version 'xxxxxxxx"),
    ([1, 2], "a game record is a JSON object, got list"),
    ({"version": 1}, "game record lacks players"),
]


@pytest.mark.parametrize(("record", "message"), MALFORMED)
def test_a_malformed_record_is_one_line_naming_the_file_and_line(tmp_path, record, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(lines(record))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: --game 0: {path}, line 1: not a game record: ")
    assert message in result.output and result.output.count("\n") == 1
    assert len(result.output) < 400  # a hostile field is not echoed whole


def test_random_bytes_name_the_file_and_line(tmp_path):
    path = tmp_path / "noise.jsonl"
    path.write_bytes(lines(played_record(1)).encode() + bytes(range(128, 256)) + b"\n")
    result = runner.invoke(app, ["replay", str(path), "--game", "1"])
    assert result.exit_code == 2
    assert result.output == f"error: --game 1: {path}, line 2: not text (UTF-8)\n"
    assert runner.invoke(app, ["replay", str(path)]).exit_code == 0


def test_a_record_that_does_not_replay_is_one_line(tmp_path):
    record = played_record(1)
    record["actions"] = record["actions"][:-3]
    path = tmp_path / "short.jsonl"
    path.write_text(lines(record))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2 and "game record does not replay" in result.output
    assert result.output.count("\n") == 1


def test_names_in_a_record_are_shown_as_text_not_markup(tmp_path):
    record = played_record(1)
    record["players"] = ["[/bold]", "[red]x"]
    path = tmp_path / "markup.jsonl"
    path.write_text(lines(record))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    assert "[/bold] vs [red]x" in result.output


# -- limits --


def test_the_record_limits_are_stated_and_refused_by_name():
    assert (MAX_RECORD_TARGET, MAX_RECORD_DEALS, ACTIONS_PER_DEAL) == (10_000, 2_500, 12)
    with pytest.raises(ValueError, match="'target' must be a whole number 1..10,000, got 10001"):
        check_record(_with(target=MAX_RECORD_TARGET + 1))
    record = _with()
    deals = record["deals"]
    with pytest.raises(ValueError, match=r"'deals' must be a list of 1..242 deals .* got 243"):
        check_record({**record, "deals": (deals * 243)[:243]})  # target 121: 2 * 121 deals
    with pytest.raises(ValueError, match=r"'deals' must be a list of 1..2,500 deals"):
        check_record({**record, "target": MAX_RECORD_TARGET, "deals": deals * 2_501})
    most = ACTIONS_PER_DEAL * len(deals)
    with pytest.raises(ValueError, match=f"'actions' must be a list of at most {most} cards .*"
                                         f"got {most + 1} actions"):
        check_record({**record, "actions": (record["actions"] * 2)[:most + 1]})


def test_a_long_record_replays(tmp_path):
    record = played_record(7, target=1_500)  # about 1,800 actions
    assert len(record["actions"]) > 1_500
    assert replay(record).scores == record["scores"]
