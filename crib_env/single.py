"""A single-agent Gymnasium view of cribbage: one learning seat, the opponent moves inside ``step``.

For SB3 and other single-agent libraries. The opponent is any object with
``act(observation, action_mask) -> int`` (every agent in ``agents/``), a plain callable
``(observation, action_mask) -> int``, or ``"random"`` (uniform over legal cards). Its ``reset()``
(when it has one) is called at every episode start, so a mixture opponent can draw a new member per
episode. This module does not import ``agents`` (the dependency runs the other way); build named
agents with ``agents.make_agent(name)`` and pass them in.

* observation: ``Box(0, 1, (OBS_SIZE,), float32)``, the layout of ``crib_env.observation``;
* action: ``Discrete(52)``, a card id; ``action_masks()`` gives the legal cards (MaskablePPO);
* reward: the learning seat's reward only (``reward="win"``, ``"points"`` or ``"winprob"``, as in
  the AEC env), summed over the opponent's moves that follow the learner's (the opponent's opening
  moves count with the learner's first step);
* ``seat``: ``"player_0"``, ``"player_1"`` or ``"random"`` (drawn per episode from the env's seed);
* an illegal card ends the episode with ``illegal_reward`` and a warning naming the move
  (PettingZoo's convention; ``illegal_action="raise"`` raises ``ValueError`` instead); an action
  that is not an integer at all (``5.9``, ``"5"``, ``True``) always raises ``ValueError``;
* ``info["deal_stats"]`` at the end of an episode: the learner's pegging / hand / crib points per
  deal, and ``info["deals"]``: for each deal the six cards dealt, the two discarded and the role.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec import AGENTS, check_reset_options, raw_env
from .aec_wrapper import card_action
from .cards import N_CARDS
from .game import check_seed
from .observation import OBS_SIZE

SEATS = (*AGENTS, "random")
Opponent = Any  # an object with act(observation, action_mask) or a callable of the same shape


class SingleAgentCribbageEnv(gymnasium.Env):
    """One learning seat against ``opponent`` (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: Opponent = "random", seat: str = "random", reward: str = "win",
                 episode: str = "game", target_score: int = 121, render_mode: str | None = None,
                 illegal_action: str = "terminate", illegal_reward: float = -1.0) -> None:
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {', '.join(SEATS)}; got {seat!r}")
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise'; got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._ended_by_illegal_move = False
        self.opponent = opponent
        self._opponent_act = _opponent_function(opponent) or self._random_move
        self.seat = seat
        self.render_mode = render_mode
        self.game_env = raw_env(render_mode=render_mode, target_score=target_score, reward=reward,
                                episode=episode)
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(N_CARDS)
        self.learner = AGENTS[0]
        self._random_opponent = np.random.default_rng()
        self._pending_reward = 0.0

    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict]:
        options = check_reset_options(options)  # everything checked before anything changes
        super().reset(seed=check_seed(seed))
        self.learner = (AGENTS[int(self.np_random.integers(2))] if self.seat == "random"
                        else self.seat)
        self._random_opponent = np.random.default_rng(int(self.np_random.integers(2**63)))
        self.game_env.reset(seed=int(self.np_random.integers(2**63)), options=options)
        self._ended_by_illegal_move = False
        if hasattr(self.opponent, "reset"):
            self.opponent.reset()
        # the opponent's opening moves: their rewards (zero but for reward="winprob"'s opening
        # edge) are paid with the learner's first step, so an episode's rewards sum as the env's
        self._pending_reward = self._play_opponent()
        observation, _, _, info = self._learner_view()
        return observation, info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        env = self.game_env
        if env.game is None:
            raise RuntimeError("call reset() before step()")
        if env.terminations[self.learner] or self._ended_by_illegal_move:
            raise RuntimeError("the episode is over: call reset()")
        # not a card id at all (7.9, "7", True): refused as a bad call, not played as a bad card
        card = action if type(action) is int else card_action(action)
        try:
            env.step(card)  # an illegal card raises ValueError and changes nothing
        except ValueError as err:
            if self.illegal_action == "raise":
                raise
            gymnasium.logger.warn(f"illegal move by the learner ({self.learner}): {err}; "
                                  f"the episode ends with reward {self.illegal_reward}")
            self._ended_by_illegal_move = True
            observation, _, truncated, info = self._learner_view()
            info["illegal_action"] = str(err)
            return observation, self.illegal_reward, True, truncated, info
        reward = env.rewards[self.learner] + self._pending_reward
        self._pending_reward = 0.0
        reward += self._play_opponent()
        observation, terminated, truncated, info = self._learner_view()
        return observation, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal cards for the learner now, as a bool array of 52 (what MaskablePPO asks for)."""
        if self.game_env.game is None:
            raise RuntimeError("call reset() before action_masks()")
        return self.game_env.observe(self.learner)["action_mask"].astype(bool)

    def render(self) -> str | None:
        return self.game_env.render()

    # -- internals ------------------------------------------------------------------------------

    def _play_opponent(self) -> float:
        """Let the opponent move until the learner is to move or the episode ends; return the
        learner's rewards from those moves."""
        env = self.game_env
        reward = 0.0
        while not env.terminations[self.learner] and env.agent_selection != self.learner:
            opponent = env.agent_selection
            seen = env.observe(opponent)
            env.step(self._opponent_act(seen["observation"], seen["action_mask"]))
            reward += env.rewards[self.learner]
        return reward

    def _learner_view(self) -> tuple[np.ndarray, bool, bool, dict]:
        env = self.game_env
        seen = env.observe(self.learner)
        info = copy.deepcopy(env.infos[self.learner])  # callers keep infos: never share them
        info["action_mask"] = seen["action_mask"]
        info["learner"] = self.learner
        terminated = env.terminations[self.learner]
        if terminated:
            info.update(_episode_stats(env, AGENTS.index(self.learner)))
        return seen["observation"], terminated, env.truncations[self.learner], info

    def _random_move(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self._random_opponent.choice(np.flatnonzero(action_mask)))


def _opponent_function(opponent: Opponent) -> Callable[[np.ndarray, np.ndarray], int] | None:
    if isinstance(opponent, str):
        if opponent != "random":
            raise ValueError(f"opponent {opponent!r}: only 'random' is built in; pass an agent "
                             f"object, e.g. agents.make_agent({opponent!r})")
        return None
    if hasattr(opponent, "act"):
        return opponent.act
    if callable(opponent):
        return opponent
    raise ValueError(f"opponent must be 'random', an agent with act(observation, action_mask) or "
                     f"a callable; got {opponent!r}")


def _episode_stats(env: raw_env, player: int) -> dict[str, Any]:
    records = env.game.records
    deals = len(records)
    return {
        "deal_stats": {
            "deals": deals,
            "pegging_per_deal": sum(r.pegging[player] for r in records) / deals,
            "hand_per_deal": sum(r.hand[player] for r in records) / deals,
            "crib_per_deal": sum(r.crib for r in records if r.dealer == player) / deals,
        },
        "deals": [{"dealt": list(r.hands[player]), "discards": list(r.discards[player]),
                   "dealer": r.dealer == player} for r in records if len(r.discards[player]) == 2],
    }
