"""Who plays whom in an evaluation: seeds, seats, first dealers and scripted deals of each game.

Everything here is a function of the evaluation's ``seed`` and the game index, never of how the
games are run (``workers``, Ray, the engine), which is what makes a report reproducible.

* Plain mode: game ``i`` has its own engine seed; the agent deals first in even games and the
  opponent in odd ones, and the seats (player 0 / 1) alternate every two games.
* Duplicate mode (``duplicate=True``): games ``2k`` and ``2k + 1`` play the same pre-drawn deal
  sequence (scripted deals, then the same engine seed for any deal past them) with the seats
  swapped. Player 0 deals first in both, so whatever cards and role the agent had in one game the
  opponent has in the other: the luck of the deal cancels in each pair.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from crib_env.cards import DECK
from crib_env.game import HAND_SIZE, ScriptedDeal

SCRIPTED_DEALS = 40  # deals drawn up front per duplicate pair; a game rarely needs more than 25
SIDES = ("agent", "opponent")  # the two sides of an evaluation, in report order
ROLES = ("dealer", "pone")
#: cards a deal takes from the pack: a six-card hand for each seat and the starter
DEAL_CARDS = 2 * HAND_SIZE + 1


def derive_seed(seed: int, *keys: int | str) -> int:
    """A 63-bit seed from ``seed`` and ``keys`` (stable across runs, processes and platforms)."""
    text = ":".join(str(k) for k in (seed, *keys))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True, slots=True)
class GamePlan:
    """How game ``index`` of an evaluation is set up: the engine seed, the agent's seat (player 0
    or 1), the first dealer (a seat) and any scripted deals (by seat)."""

    index: int
    game_seed: int
    agent_seat: int
    first_dealer: int
    deals: tuple[ScriptedDeal, ...] = ()

    @property
    def agent_deals_first(self) -> bool:
        return self.first_dealer == self.agent_seat


def draw_deals(seed: int, count: int = SCRIPTED_DEALS) -> tuple[ScriptedDeal, ...]:
    """``count`` random deals (six cards to each seat and a starter, 13 distinct cards each)."""
    rng = random.Random(seed)
    deals = []
    for _ in range(count):
        cards = rng.sample(DECK, DEAL_CARDS)
        deals.append(ScriptedDeal((tuple(cards[0:HAND_SIZE]), tuple(cards[HAND_SIZE:2 * HAND_SIZE])),
                                  cards[2 * HAND_SIZE]))
    return tuple(deals)


def game_plan(seed: int, index: int, duplicate: bool = False) -> GamePlan:
    """The set-up of game ``index`` (see the module docstring for the layout)."""
    if duplicate:
        pair = index // 2
        agent_seat = index % 2  # the second game of a pair swaps the seats ...
        # ... over the same deals, with player 0 dealing first in both games.
        return GamePlan(index, derive_seed(seed, "pair", pair), agent_seat, 0,
                        draw_deals(derive_seed(seed, "deals", pair)))
    agent_seat = (index // 2) % 2
    agent_first = index % 2 == 0
    first_dealer = agent_seat if agent_first else 1 - agent_seat
    return GamePlan(index, derive_seed(seed, "game", index), agent_seat, first_dealer)
