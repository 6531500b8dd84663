"""The games file (``crib_play.db``, ``crib_play.saved``): a game rebuilt exactly from its
commands, and every bad file refused with its name and left as it was (issue 25)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3

import pytest

pytest.importorskip("fastapi", reason="crib_play.saved answers in HTTPException (the play extra)")

from crib_play import commands, db  # noqa: E402
from crib_play.saved import SavedStore  # noqa: E402
from crib_play.session import GameSession  # noqa: E402


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def next_command(session: GameSession) -> commands.Command:
    """The scripted person: continue after a show, else the first legal cards."""
    if session.pause is not None:
        return commands.continue_()
    return commands.move(session.view()["legal"][:session.cards_needed()])


def play(store: SavedStore, game_id: str, steps: int) -> None:
    stored = store.get(game_id)
    for _ in range(steps):
        if stored.session.over:
            return
        command = next_command(stored.session)
        commands.apply_command(stored.session, command)
        store.saved(game_id, stored, command)


def new_game(store: SavedStore, opponent: str = "random", seed: int = 7) -> tuple[str, str]:
    player, _ = store.players.create()
    game_id = store.add(player.id, GameSession.against(opponent, seed=seed), player=player.id)
    return game_id, player.id


def test_a_game_reopened_from_the_file_is_the_same_game_agent_memory_included(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = SavedStore(path)
    game_id, _ = new_game(store, "expert", seed=11)  # the expert's random draws are its memory
    play(store, game_id, 6)
    before = store.get(game_id).session
    store.db.close()
    reopened = SavedStore(path)
    assert reopened.db.read("PRAGMA journal_mode")[0][0] == "wal"
    again = reopened.get(game_id).session  # rebuilt: seed + commands
    assert again.view() == before.view()
    assert again.agent.rng.bit_generator.state == before.agent.rng.bit_generator.state
    command = next_command(before)
    commands.apply_command(before, command)
    commands.apply_command(again, command)
    assert again.view() == before.view()  # the agent answers the next move the same way


def test_a_finished_game_keeps_its_record_and_summary(tmp_path):
    store = SavedStore(tmp_path / "games.sqlite3")
    game_id, player = new_game(store)
    play(store, game_id, 10_000)
    (game,) = store.finished(player)
    from training.record import replay

    assert game["id"] == game_id and replay(game["record"]).scores == list(game["record"]["scores"])
    assert game["summary"]["won"] == (game["record"]["winner"] == 0)


def test_another_players_game_is_not_there(tmp_path):
    from fastapi import HTTPException

    store = SavedStore(tmp_path / "games.sqlite3")
    game_id, owner = new_game(store)
    other, _ = store.players.create()
    assert store.get(game_id, owner).session is not None
    with pytest.raises(HTTPException) as missing:
        store.get(game_id, other.id)
    assert missing.value.status_code == 404


def test_a_damaged_file_is_refused_by_name_and_left_unchanged(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = SavedStore(path)
    new_game(store)
    store.db.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[page:page + 512] = os.urandom(512)  # the second page: the schema's tables
    path.write_bytes(bytes(data))
    before = digest(path)
    with pytest.raises(db.DatabaseFileError, match="damaged") as refused:
        SavedStore(path)
    assert str(path) in str(refused.value) and digest(path) == before
    assert not (tmp_path / "games.sqlite3-wal").exists()


@pytest.mark.parametrize("content", [b"", b"not a database at all\n" * 40, os.urandom(8192)])
def test_a_file_that_is_not_sqlite_is_refused_unless_empty(tmp_path, content):
    path = tmp_path / "games.sqlite3"
    path.write_bytes(content)
    if not content:  # an empty file is a new database
        SavedStore(path).db.close()
        return
    with pytest.raises(db.DatabaseFileError, match="not an SQLite database") as refused:
        SavedStore(path)
    assert str(path) in str(refused.value) and path.read_bytes() == content


def test_a_file_from_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "games.sqlite3"
    SavedStore(path).db.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION + 1}")
    conn.close()
    before = digest(path)
    with pytest.raises(db.DatabaseFileError, match=f"schema {db.SCHEMA_VERSION + 1}, from a newer") \
            as refused:
        SavedStore(path)
    assert str(path) in str(refused.value) and digest(path) == before


def test_an_sqlite_file_of_another_program_is_refused(tmp_path):
    path = tmp_path / "photos.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO photos (name) VALUES ('beach')")
    conn.close()
    before = digest(path)
    with pytest.raises(db.DatabaseFileError, match="another program.*photos") as refused:
        SavedStore(path)
    assert str(path) in str(refused.value) and digest(path) == before


def test_a_read_only_file_is_refused(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = SavedStore(path)
    game_id, _ = new_game(store)
    store.db.close()
    os.chmod(path, 0o444)
    before = digest(path)
    try:
        with pytest.raises(db.DatabaseFileError, match="read-only") as refused:
            SavedStore(path)
    finally:
        os.chmod(path, 0o644)
    assert str(path) in str(refused.value) and digest(path) == before
    assert SavedStore(path).get(game_id).session is not None  # still whole


def test_an_older_schema_is_migrated_and_keeps_its_games(tmp_path):
    path = tmp_path / "games.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {db.APPLICATION_ID}")
    for sql in db.MIGRATIONS[1]:
        conn.execute(sql)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO players (id, name, created) VALUES (1, 'ann', 0)")
    spec = {"opponent": "random", "seed": 3, "target": 121, "practice": False}
    conn.execute("INSERT INTO games (id, player_id, opponent, spec, created, updated) VALUES "
                 "('g1', 1, 'random', ?, 0, 0)", (json.dumps(spec),))
    conn.commit()
    conn.close()
    store = SavedStore(path)
    assert store.db.read("PRAGMA user_version")[0][0] == db.SCHEMA_VERSION
    assert store.get("g1", "1").session.seed == 3
    play(store, "g1", 10_000)
    assert store.finished("1")[0]["summary"] is not None  # the new column is used


def test_a_full_disk_refuses_the_move_clearly_and_loses_no_accepted_one(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = SavedStore(path)
    game_id, player = new_game(store)
    play(store, game_id, 3)
    pages = store.db.read("PRAGMA page_count")[0][0]
    store.db.conn.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
    stored = store.get(game_id)
    accepted = len(store.db.read("SELECT n FROM commands WHERE game_id = ?", (game_id,)))
    with pytest.raises(db.StorageFull, match="disk is full") as full:
        for _ in range(400):  # fill the last page; the write that needs another one fails
            command = next_command(stored.session)
            commands.apply_command(stored.session, command)
            store.saved(game_id, stored, command)
            accepted += 1
    assert str(path) in str(full.value) and stored.stale
    store.db.close()
    reopened = SavedStore(path)  # everything accepted before the failure, nothing after
    rows = reopened.db.read("SELECT n FROM commands WHERE game_id = ?", (game_id,))
    assert len(rows) == accepted
    play(reopened, game_id, 10_000)
    assert reopened.get(game_id, player).session.over


def test_a_folder_and_a_read_only_folder_are_refused(tmp_path):
    with pytest.raises(db.DatabaseFileError, match="is a folder"):
        db.GameDB(tmp_path)
    folder = tmp_path / "locked"
    folder.mkdir()
    os.chmod(folder, 0o555)
    try:
        with pytest.raises(db.DatabaseFileError, match="read-only"):
            db.GameDB(folder / "games.sqlite3")
    finally:
        os.chmod(folder, 0o755)
    assert not (folder / "games.sqlite3").exists()


def test_crib_play_keeps_the_game_and_continues_it_next_time(tmp_path):
    from typer.testing import CliRunner

    from crib_cli.main import app

    games = tmp_path / "games.sqlite3"
    args = ["play", "--opponent", "random", "--db", str(games), "--player", "ann"]
    first = CliRunner().invoke(app, args, input="1 2\nq\n")
    assert first.exit_code == 0, first.output
    assert f"games in {games}" in first.output and "continuing" not in first.output
    store = SavedStore(games)
    ann = store.players.named("ann")
    (game_id,) = store.unfinished(ann.id)
    moved = store.get(game_id, ann.id).session.view()
    assert len(moved["your_discards"]) == 2 or moved["deal"] > 1  # the throw was kept
    store.db.close()
    again = CliRunner().invoke(app, args, input="q\n")
    assert again.exit_code == 0 and "continuing your game in progress" in again.output
    refused = CliRunner().invoke(app, ["play", "--opponent", "nobody", "--db",
                                       str(tmp_path / "other.sqlite3")])
    assert refused.exit_code == 2 and "unknown agent 'nobody'" in refused.output


def test_crib_stats_says_when_there_is_no_games_file_and_makes_none(tmp_path):
    from typer.testing import CliRunner

    from crib_cli.main import app

    missing = tmp_path / "none.sqlite3"
    result = CliRunner().invoke(app, ["stats", "--db", str(missing)])
    assert result.exit_code == 2 and "no games file at" in result.output and not missing.exists()
    store = SavedStore(tmp_path / "games.sqlite3")
    game_id, player = new_game(store)
    play(store, game_id, 10_000)
    store.db.close()
    result = CliRunner().invoke(app, ["stats", "--db", str(tmp_path / "games.sqlite3")])
    assert result.exit_code == 0 and "random" in result.output and "1 games" in result.output
    result = CliRunner().invoke(app, ["stats", "--db", str(tmp_path / "games.sqlite3"),
                                      "--player", "nobody"])
    assert result.exit_code == 2 and "no such player" in result.output
