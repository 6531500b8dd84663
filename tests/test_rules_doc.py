"""docs/RULES.md cannot drift: every worked case in its tables is scored here by the project's code.

The page marks each machine-read table with an HTML comment ``<!-- worked-cases: KIND -->`` on the
line before it; the table's header names its columns. Show cases go through ``score_hand`` and
``hand_events``, play cases through ``score_play`` and ``play_events``, whole deals and skunks through
the engine ``crib_env.game.Game``, and the show-score distribution is compared with the figures
``tests/test_scoring.py`` checks against the scorer over all 12,994,800 combinations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_scoring import CRIB_DISTRIBUTION, HAND_DISTRIBUTION

from crib_env.cards import VALUE, parse_cards
from crib_env.game import Game, Phase
from crib_env.scoring import (
    DOUBLE_PAIR_ROYAL,
    FIFTEEN,
    FLUSH,
    NOBS,
    PAIR,
    PAIR_ROYAL,
    RUN,
    THIRTY_ONE,
    hand_events,
    play_events,
    score_hand,
    score_play,
)

RULES = Path(__file__).resolve().parent.parent / "docs" / "RULES.md"
MARKER = re.compile(r"<!--\s*worked-cases:\s*([\w-]+)\s*-->")

#: the words of the ``items`` column, by score event kind
ITEM_OF_KIND = {FIFTEEN: "fifteens", PAIR: "pairs", PAIR_ROYAL: "pairs", DOUBLE_PAIR_ROYAL: "pairs",
                RUN: "runs", FLUSH: "flush", NOBS: "nobs", THIRTY_ONE: "thirty-one"}
DEALER, PONE = 0, 1


def tables() -> dict[str, list[dict[str, str]]]:
    """Every marked table of RULES.md as rows of {column name: cell text}."""
    lines = RULES.read_text(encoding="utf-8").splitlines()
    found: dict[str, list[dict[str, str]]] = {}
    for i, line in enumerate(lines):
        match = MARKER.search(line)
        if not match:
            continue
        block = []
        for row in lines[i + 1:]:
            if not row.startswith("|"):
                break
            block.append([cell.strip() for cell in row.strip().strip("|").split("|")])
        header, rule, *rows = block
        assert set("".join(rule)) <= set("-: "), f"table {match[1]!r}: second line is not |---|"
        assert all(len(r) == len(header) for r in rows), f"table {match[1]!r}: ragged row"
        found[match[1]] = [dict(zip(header, r, strict=True)) for r in rows]
    return found


TABLES = tables()


def rows(kind: str, least: int) -> list[dict[str, str]]:
    """The rows of one table, which must exist and hold at least ``least`` cases."""
    assert kind in TABLES, f"docs/RULES.md has no '<!-- worked-cases: {kind} -->' table"
    assert len(TABLES[kind]) >= least, f"docs/RULES.md: only {len(TABLES[kind])} {kind} cases"
    return TABLES[kind]


def items(text: str) -> dict[str, int]:
    """``"fifteens 4 + runs 3"`` -> {"fifteens": 4, "runs": 3}; ``"nothing"`` -> {}."""
    if text == "nothing":
        return {}
    out: dict[str, int] = {}
    for term in text.split("+"):
        name, points = term.split()
        assert name in ITEM_OF_KIND.values(), f"unknown item {name!r} in {text!r}"
        out[name] = out.get(name, 0) + int(points)
    return out


def items_of(events) -> dict[str, int]:
    out: dict[str, int] = {}
    for event in events:
        name = ITEM_OF_KIND[event.kind]
        out[name] = out.get(name, 0) + event.points
    return out


def case_id(row: dict[str, str]) -> str:
    return row.get("case") or "-".join(row.values())


# ---------------------------------------------------------------------------------------------
# 11.1 and 11.2: the scorers


@pytest.mark.parametrize("row", rows("show", 15), ids=case_id)
def test_show_case_scores_as_the_rules_say(row):
    cards, starter = parse_cards(row["cards"]), row["starter"]
    assert row["counted as"] in ("hand", "crib")
    crib = row["counted as"] == "crib"
    assert score_hand(cards, starter, crib=crib) == int(row["points"])
    assert items_of(hand_events(cards, starter, crib=crib)) == items(row["items"])
    assert sum(items(row["items"]).values()) == int(row["points"])


@pytest.mark.parametrize("row", rows("play", 15), ids=case_id)
def test_play_case_scores_as_the_rules_say(row):
    sequence = parse_cards(row["sequence"])
    assert sum(VALUE[c] for c in sequence) == int(row["count"])
    assert score_play(sequence) == int(row["points"])
    assert items_of(play_events(sequence)) == items(row["items"])
    assert sum(items(row["items"]).values()) == int(row["points"])


# ---------------------------------------------------------------------------------------------
# 11.3 and 11.4: whole deals through the engine


def dealer_pone(text: str) -> tuple[int, int]:
    dealer, pone = text.split("-")
    return int(dealer), int(pone)


def scripted_game(row: dict[str, str], target: int, before: tuple[int, int]) -> Game:
    """Player 0 deals the row's cards; the scores start at ``before``; both players lay away."""
    deal = {"hands": {"player_0": row["dealer's six"], "player_1": row["pone's six"]},
            "starter": row["starter"]}
    game = Game(target=target, first_dealer=DEALER, deals=[deal], single_deal=True)
    game.scores = list(before)
    for player, cards in ((PONE, row["pone lays away"]), (DEALER, row["dealer lays away"])):
        for card in parse_cards(cards):
            game.step(card, player=player)
    return game


def credited(cell: str, points: int, completed: bool) -> None:
    """A count the row gives as a number, or ``-`` for one the game ended before."""
    if cell == "-":
        assert points == 0 and not completed
    else:
        assert points == int(cell)


@pytest.mark.parametrize("row", rows("deal", 6), ids=case_id)
def test_deal_case_plays_out_as_the_rules_say(row):
    target = int(row["target"])
    game = scripted_game(row, target, dealer_pone(row["before (dealer-pone)"]))
    laid = row["cards laid, in order"]
    for card in parse_cards("" if laid == "-" else laid):
        game.step(card)  # the engine decides whose turn it is; a wrong order raises
    record = game.records[-1]
    assert tuple(record.pegging) == dealer_pone(row["pegging (dealer-pone)"])
    assert record.heels == int(row["heels"])
    credited(row["pone's hand"], record.hand[PONE], record.completed)
    credited(row["dealer's hand"], record.hand[DEALER], record.completed)
    credited(row["crib"], record.crib, record.completed)
    final = dealer_pone(row["final (dealer-pone)"])
    assert tuple(game.scores) == final
    if target in final:
        assert game.phase == Phase.GAME_OVER and game.winner == final.index(target)
    else:
        assert game.phase == Phase.DEAL_OVER and record.completed


@pytest.mark.parametrize("row", rows("skunk", 4), ids=case_id)
def test_skunk_case_is_flagged_as_the_rules_say(row):
    heels_deal = next(r for r in rows("deal", 6) if r["case"] == "E")  # a jack turned up
    target, loser = int(row["target"]), int(row["loser's score"])
    game = scripted_game(heels_deal, target, (target - 2, loser))
    assert game.winner == DEALER and game.scores == [target, loser]
    assert game.skunk is (row["skunk"] == "yes")
    assert game.double_skunk is (row["double skunk"] == "yes")


# ---------------------------------------------------------------------------------------------
# Section 12: the distribution


def test_distribution_table_is_the_exact_one():
    table = rows("distribution", 30)
    assert [int(r["points"]) for r in table] == list(range(30))
    for column, exact in (("hand", HAND_DISTRIBUTION), ("crib", CRIB_DISTRIBUTION)):
        counts = [int(r[column]) for r in table]
        assert counts == [int(item.split(":")[1]) for item in exact.split()], column
        assert sum(counts) == 12_994_800


@pytest.mark.parametrize(("column", "mean"), [("hand", "4.7692"), ("crib", "4.7348")])
def test_distribution_means_stated_in_the_text_match_the_table(column, mean):
    counts = [int(r[column]) for r in rows("distribution", 30)]
    assert f"{sum(p * n for p, n in enumerate(counts)) / sum(counts):.4f}" == mean
    text = " ".join(RULES.read_text(encoding="utf-8").split())
    assert f"{column.capitalize()} rules" in text and f"mean {mean}" in text
