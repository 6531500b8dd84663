"""The wrapper of ``crib_env.env()`` (PettingZoo's three classic-env wrappers in one layer) and the
check of an action's type and bounds that the wrapped and the single-agent envs share."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from .cards import N_CARDS, card_str
from .game import IllegalActionError


class CribbageWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's three classic-env wrappers in one layer, with the same behaviour:

    * ``OrderEnforcingWrapper`` (inherited): no step / observe / render / agent_iter before reset;
    * ``AssertOutOfBoundsWrapper``: an action outside ``Discrete(52)`` fails an assertion;
    * ``TerminateIllegalWrapper``: an illegal card ends the game, the mover gets ``illegal_reward``
      and the others 0, with a warning that names the card and the reason.

    Why one layer: each PettingZoo wrapper forwards every attribute read through ``__getattr__``,
    and ``last()`` / ``agent_iter()`` read five attributes per step; three stacked layers cost as
    much as the rules themselves. Here the hot attributes are properties on the raw env.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env
        self._ended_by_illegal_move = False

    def _live(name: str):  # noqa: N805 - builds the forwarding properties below
        def read(self):
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)

        def write(self, value):
            setattr(self._raw, name, value)

        return property(read, write)

    agent_selection = _live("agent_selection")
    agents = _live("agents")
    rewards = _live("rewards")
    terminations = _live("terminations")
    truncations = _live("truncations")
    infos = _live("infos")
    _cumulative_rewards = _live("_cumulative_rewards")
    del _live

    def agent_iter(self, max_iter: int = 2**63) -> wrappers.order_enforcing.AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._ended_by_illegal_move = False
        super().reset(seed=seed, options=options)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self._raw.last(observe)

    def step(self, action: Any) -> None:
        if not self._has_reset or not self._raw.agents:
            super().step(action)  # the order-enforcing error or warning
            return
        raw = self._raw
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        # Discrete(52).contains (bools aside), without its numpy overhead on every step
        if type(action) is int:  # the common case first
            in_bounds = 0 <= action < N_CARDS
        else:
            try:
                in_bounds = 0 <= card_action(action) < N_CARDS
            except ValueError:
                in_bounds = False
        if not ((action is None and dead) or in_bounds):  # not an assert: it holds under -O too
            raise ActionOutOfBoundsError(f"action {action!r} is outside the action space "
                                         f"Discrete(52) of {agent}")
        self._has_updated = True
        try:
            raw.step(action)  # checks the card before it changes anything
        except IllegalActionError as err:
            self._end_on_illegal_move(agent, action, err)

    def _end_on_illegal_move(self, agent: str, action: Any, reason: Exception) -> None:
        warnings.warn(f"illegal move by {agent}: {_card_text(action)} ({reason}); the game ends "
                      f"and {agent} gets {self._raw.illegal_reward}", stacklevel=3)
        raw = self._raw
        raw._cumulative_rewards[agent] = 0.0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.agents, 0.0)
        raw.rewards[agent] = raw.illegal_reward
        raw._accumulate_rewards()
        raw._deads_step_first()
        self._ended_by_illegal_move = True


class _AgentIterable(wrappers.order_enforcing.AECOrderEnforcingIterable):
    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(wrappers.order_enforcing.AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing agent iterator, reading the raw env's attributes directly."""

    def __next__(self) -> str:
        wrapper = self.env
        raw = wrapper._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not wrapper._has_updated:  # PettingZoo's check, kept under python -O
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        wrapper._has_updated = False
        return raw.agent_selection


class ActionOutOfBoundsError(AssertionError, ValueError):
    """An action outside ``Discrete(52)`` given to the wrapped env: an ``AssertionError`` as
    PettingZoo's ``AssertOutOfBoundsWrapper`` raises (and a ``ValueError``), raised explicitly
    so that ``python -O`` keeps the check."""


def card_action(action: Any) -> int:
    """``action`` as a card id int. Taken: a Python int, a NumPy integer scalar or a 0-d integer
    array (what ``Discrete(52)`` takes). Refused with ``ValueError``: a bool, a float (never
    truncated: ``7.9`` is not card 7), a string, an array of any other shape. Whether the id is in
    0..51 and legal now is the rules' to say."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () \
            and np.issubdtype(action.dtype, np.integer):
        return int(action)
    raise ValueError(f"action must be an integer card id 0..51, got {action!r} "
                     f"({type(action).__name__})")


def _card_text(action: Any) -> str:
    try:
        return card_str(int(action))
    except (TypeError, ValueError):
        return repr(action)
