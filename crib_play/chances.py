"""Chances to win shown to the person: from the start of a deal (the packaged win-odds table,
``crib odds``), and for each throw of a six-card hand at the board position."""

from __future__ import annotations

from crib_env.game import Game


def win_chance(score: int, opponent_score: int, dealer: bool,
               target: int) -> tuple[float | None, str | None]:
    """The chance that the side on ``score`` wins a game to ``target`` from a deal that side deals
    (``dealer``) or not, from the packaged win-odds table (``crib odds``), and why not where it
    cannot say: the table is for games to 121, and a missing or corrupt table is never guessed."""
    from crib_env.odds import OddsTableError, default_table

    if target != 121:
        return None, f"unavailable: the win-odds table is for games to 121, not {target}"
    try:
        return default_table().win_probability(score, opponent_score, dealer), None
    except OddsTableError as err:
        return None, f"unavailable: {err}"


def throw_win_chances(game: Game, seat: int) -> dict[frozenset, float]:
    """``seat``'s chance to win the game with each throw of its six cards, by the thrown pair:
    ``agents.endgame``'s model (the kept four's exact show score with each starter, the crib's exact
    expectation, the pegging of each role as measured between standard agents, then the win-odds
    table at the next deal's start). A model, not a simulation of this deal's play."""
    from agents.analysis import discard_table
    from agents.endgame import discard_win_chances
    from agents.pegging import Board

    table = discard_table(sorted(game.hands[seat]))
    board = Board(game.scores[seat], game.scores[1 - seat], game.target,
                  game.dealer == seat)
    chances = discard_win_chances(table, board)
    return {frozenset(table.discard(i)): float(chances[i]) for i in range(len(chances))}
