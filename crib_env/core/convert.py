"""A state row to and from the plain engine: ``load_game`` copies a ``Game`` into a row, ``to_game``
and ``deal_record`` rebuild a ``Game`` and its deal record from one (for rendering, checks and
``encode``)."""

from __future__ import annotations

import numpy as np

from ..game import DealRecord, Game, Phase
from .bits import bits_of, cards_of
from .layout import (
    COMPLETED,
    COUNT,
    CRIB_PTS,
    DEAL_NO,
    DEALER,
    DEALT,
    DISC,
    FIRST_DEALER,
    HAND,
    HAND_PTS,
    HEELS_PTS,
    LAST_PLAYER,
    N_FIELDS,
    NDISC,
    NEXT_STARTER,
    NHAND,
    PEG,
    PHASE,
    PLAYED,
    PREV,
    SAID_GO,
    SCORE,
    SEQ,
    SEQ_LEN,
    SINGLE_DEAL,
    STARTER,
    TARGET,
    TO_MOVE,
    WINNER,
)
from .rng import seed_row


def load_game(S: np.ndarray, b: int, game: Game, seed: int = 0) -> None:
    """Copy the state of a plain ``Game`` into row ``b`` (its random stream is seeded with ``seed``:
    the plain engine's ``random.Random`` cannot be carried over, so later random deals differ)."""
    row = np.zeros(N_FIELDS, dtype=np.int64)
    for p in range(2):
        row[HAND + p] = bits_of(game.hands[p])
        row[DISC + p] = bits_of(game.discards[p])
        row[PLAYED + p] = bits_of(game.played[p])
        row[NDISC + p] = len(game.discards[p])
        row[NHAND + p] = len(game.hands[p])
        row[SCORE + p] = game.scores[p]
        row[PREV + p] = game.prev_scores[p]
        row[SAID_GO + p] = int(game.said_go[p])
        row[DEALT + p] = bits_of(game.record.hands[p])
        row[PEG + p] = game.record.pegging[p]
        row[HAND_PTS + p] = game.record.hand[p]
    row[SEQ:SEQ + len(game.sequence)] = game.sequence
    row[SEQ_LEN] = len(game.sequence)
    row[COUNT] = game.count
    row[STARTER] = -1 if game.starter is None else game.starter
    row[NEXT_STARTER] = game.record.starter
    row[TO_MOVE] = game.to_move
    row[DEALER] = game.dealer
    row[PHASE] = int(game.phase)
    row[WINNER] = -1 if game.winner is None else game.winner
    row[TARGET] = game.target
    row[SINGLE_DEAL] = int(game.single_deal)
    row[DEAL_NO] = len(game.records)
    row[LAST_PLAYER] = -1 if game.last_player is None else game.last_player
    row[CRIB_PTS] = game.record.crib
    row[HEELS_PTS] = game.record.heels
    row[COMPLETED] = int(game.record.completed)
    row[FIRST_DEALER] = game.records[0].dealer
    S[b] = row
    seed_row(S, b, seed)


def to_game(S: np.ndarray, b: int) -> Game:
    """A plain ``Game`` in the state of row ``b`` (for rendering, checks and ``encode``): hands,
    discards, crib, starter, play, count, scores, phase and the current deal's record. The log and
    the records of earlier deals are not reconstructed; later random deals differ."""
    row = [int(x) for x in S[b]]
    game = Game(target=row[TARGET], seed=0, first_dealer=row[DEALER],
                single_deal=bool(row[SINGLE_DEAL]))
    game.hands = [cards_of(row[HAND]), cards_of(row[HAND + 1])]
    game.discards = [cards_of(row[DISC]), cards_of(row[DISC + 1])]
    game.played = [cards_of(row[PLAYED]), cards_of(row[PLAYED + 1])]
    game.sequence = row[SEQ:SEQ + row[SEQ_LEN]]
    game.count = row[COUNT]
    game.said_go = [bool(row[SAID_GO]), bool(row[SAID_GO + 1])]
    game.to_move = row[TO_MOVE]
    game.phase = Phase(row[PHASE])
    game.scores = [row[SCORE], row[SCORE + 1]]
    game.prev_scores = [row[PREV], row[PREV + 1]]
    game.winner = None if row[WINNER] < 0 else row[WINNER]
    game.last_player = None if row[LAST_PLAYER] < 0 else row[LAST_PLAYER]
    game.starter = None if row[STARTER] < 0 else row[STARTER]
    game._next_starter = row[NEXT_STARTER]
    pone, dealer = 1 - row[DEALER], row[DEALER]
    if game.starter is not None:
        game.crib = game.discards[pone] + game.discards[dealer]
        game.kept = [sorted(game.hands[p] + game.played[p]) for p in (0, 1)]
    game.record = deal_record(S, b)
    game.records = [game.record]
    return game


def deal_record(S: np.ndarray, b: int) -> DealRecord:
    """Row ``b``'s current deal as the plain engine records it (cards dealt, discards, points by
    category, whether the show was completed)."""
    row = [int(x) for x in S[b]]
    return DealRecord(
        number=row[DEAL_NO] - 1,
        dealer=row[DEALER],
        hands=(tuple(cards_of(row[DEALT])), tuple(cards_of(row[DEALT + 1]))),
        starter=row[NEXT_STARTER],
        discards=(cards_of(row[DISC]), cards_of(row[DISC + 1])),
        pegging=[row[PEG], row[PEG + 1]],
        heels=row[HEELS_PTS],
        hand=[row[HAND_PTS], row[HAND_PTS + 1]],
        crib=row[CRIB_PTS],
        completed=bool(row[COMPLETED]),
        laid=[len(cards_of(row[PLAYED])), len(cards_of(row[PLAYED + 1]))],
    )
