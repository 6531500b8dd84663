"""The common frame of the scripted agents: decode, split discard from play, stay consistent.

A scripted agent sees exactly what a learned one sees: it decodes the observation vector with
``crib_env.observation.decode`` and never looks at the environment. The env asks for the two
discards one step at a time; the agent chooses the pair from the six cards it was dealt (hand plus
the discards it already made) and lays the card of that pair not yet laid, so the two steps agree
without keeping any memory between them.
"""

from __future__ import annotations

import numpy as np

from crib_env.game import Phase
from crib_env.observation import ObservationView, decode

from .base import legal_cards


class ScriptedAgent:
    """Base class: subclasses implement ``choose_discard`` and ``choose_play``."""

    name = "scripted"
    #: decides from the observation alone; a subclass that overrides ``observe`` or ``reset``
    #: (memory) is made stateful unless it sets ``stateless`` itself (``__init_subclass__``)
    stateless = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "stateless" not in cls.__dict__ and ("observe" in cls.__dict__ or "reset" in cls.__dict__):
            cls.stateless = False

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Scripted agents keep no memory of the game; the random stream simply continues."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = [int(c) for c in legal_cards(action_mask)]
        view = decode(observation)
        self.observe(view)
        if view.phase == Phase.DISCARD:
            hand6 = tuple(sorted(view.hand + view.discards))
            pair = self.choose_discard(view, hand6)
            if not set(view.discards) <= set(pair):
                raise RuntimeError(f"{self.name}: discard pair {pair} drops an earlier discard "
                                   f"{view.discards}")
            card = next(c for c in sorted(pair) if c not in view.discards)
        elif len(legal) == 1:
            card = legal[0]
        else:
            card = self.choose_play(view, legal)
        if card not in legal:
            raise RuntimeError(f"{self.name} chose card {card}, not among the legal {legal}")
        return int(card)

    def observe(self, view: ObservationView) -> None:
        """Called with every decoded observation before choosing (agents with memory use it)."""

    def choose_discard(self, view: ObservationView, hand6: tuple[int, ...]) -> tuple[int, int]:
        """The two cards of ``hand6`` to lay away; must contain the ``view.discards`` made so far."""
        raise NotImplementedError

    def choose_play(self, view: ObservationView, legal: list[int]) -> int:
        """The card to lay from ``legal`` (at least two cards)."""
        raise NotImplementedError
