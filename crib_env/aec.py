"""Cribbage (two players, six-card, to 121) as a PettingZoo AEC environment.

| Import             | `from crib_env import env, raw_env`                           |
|--------------------|---------------------------------------------------------------|
| Id                 | `cribbage_v0`                                                 |
| Actions            | Discrete                                                      |
| Parallel API       | No                                                            |
| Manual control     | No                                                            |
| Agents             | `agents = ['player_0', 'player_1']`                           |
| Action shape       | (1,)                                                          |
| Action values      | Discrete(52): a card id (suit * 13 + rank, C D H S, A..K)     |
| Observation shape  | (687,) float32, plus an action mask of shape (52,) int8       |
| Observation values | [0, 1]                                                        |

The rules are those of `shared/RULES.md`, enforced by `crib_env.game.Game`.

### Turns and actions

Each action is a card id. In the discard phase each player lays away **one card per step, two steps
each** (pone first, then the dealer); in the play the action lays that card. "Go" is never an
action: when the player to move has no card that fits under 31 the environment applies the go
itself, moves on, and reports it in `infos`. The show is counted automatically after the play.

### Observation space

`observe(agent)` returns `{"observation": np.ndarray(687,), "action_mask": np.ndarray(52, int8)}`.
The vector holds only what that player may know, from its own seat: its hand, its own discards, the
starter once cut, the cards each player has laid this deal, the current count sequence in order, the
count, the phase, who deals, both scores, the target, how many cards the opponent holds and whether
the opponent has said go. The layout (named slices, `encode` / `decode`) is documented in
`crib_env.observation`. Never in it: the opponent's hand or discards, the stock.

### Legal action mask

`action_mask[c] == 1` for every card `c` the agent may choose now: any held card when discarding,
any held card that keeps the count at 31 or under in the play. Only the agent to move has a non-empty
mask.

### Rewards

- `reward="win"` (default): +1 to the winner and -1 to the loser when the game ends, 0 before. With
  `episode="deal"` the sign of the deal's point difference is given instead when the deal ends.
- `reward="points"`: on every step, each agent gets its points minus the opponent's points scored in
  that step (zero-sum; a game's rewards add up to the final score difference).

Rewards are set each step and accumulated as PettingZoo does (`_cumulative_rewards`).

### Options

`env(render_mode=None, target_score=121, reward="win", episode="game", illegal_reward=-1)`;
`episode="deal"` ends the episode after one deal's show. `reset(seed, options)` takes
`options={"first_dealer": "player_0" | "player_1", "deals": [{"hands": {"player_0": [6 cards],
"player_1": [6 cards]}, "starter": card}, ...]}`; scripted deals are used in order, then random deals
continue from the seed. `env.unwrapped.scores` and `env.unwrapped.dealer` give the scores and the
dealer; `env.unwrapped.game` the rules engine itself (do not hand it to agents).

### Infos

`infos[agent]` holds `events`: what happened since just before that agent's previous action
(plays, goes said, go / 31 / fifteen ... with points and cards, shows), as dicts; `go`: the agents
who said go in that window; `phase`; `scores`; and at the end `summary` (winner, margin, skunk).

### Version history

- v0: initial release.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .cards import CARD_NAMES, N_CARDS, card_str
from .game import DISCARD, SAID_GO, Game, IllegalActionError, LogEntry, Phase
from .observation import OBS_SIZE, OBSERVATION_VERSION, encode
from .render import render_board

AGENTS = ("player_0", "player_1")
REWARD_MODES = ("win", "points")
EPISODE_MODES = ("game", "deal")
RENDER_MODES = ("ansi", "human")
ENV_NAME = f"cribbage_v{OBSERVATION_VERSION}"
PHASE_NAMES = {phase: phase.name.lower() for phase in Phase}


def env(**kwargs: Any) -> AECEnv:
    """The cribbage AEC env wrapped as PettingZoo's classic envs are: an illegal move ends the game
    with the mover losing (and a warning naming the move), actions are bounds-checked and the call
    order is enforced. One wrapper does all three (see ``CribbageWrapper``)."""
    return CribbageWrapper(raw_env(**kwargs))


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

    def __init__(self, env: raw_env) -> None:
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

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._ended_by_illegal_move = False
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        if not self._has_reset or not self._raw.agents:
            super().step(action)  # the order-enforcing error or warning
            return
        raw = self._raw
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        # Discrete(52).contains, without its numpy overhead on every step
        in_bounds = (isinstance(action, (int, np.integer)) and not isinstance(action, bool)
                     and 0 <= action < N_CARDS)
        assert (action is None and dead) or in_bounds, (
            f"action {action!r} is outside the action space Discrete(52) of {agent}")
        if dead:
            self._has_updated = True
            raw.step(action)
            return
        try:
            raw.game.check_action(int(action), AGENTS.index(agent))
        except IllegalActionError as err:
            self._end_on_illegal_move(agent, action, err)
            self._has_updated = True
            return
        self._has_updated = True
        raw.step(action)

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


def _card_text(action: Any) -> str:
    try:
        return card_str(int(action))
    except (TypeError, ValueError):
        return repr(action)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """The bare cribbage env (see the module docstring). Illegal actions raise ``ValueError``."""

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, render_mode: str | None = None, target_score: int = 121,
                 reward: str = "win", episode: str = "game", illegal_reward: float = -1.0) -> None:
        super().__init__()
        _check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        _check_choice("reward", reward, REWARD_MODES)
        _check_choice("episode", episode, EPISODE_MODES)
        if isinstance(target_score, bool) or not isinstance(target_score, (int, np.integer)) \
                or target_score < 1:
            raise ValueError(f"target_score must be a positive int, got {target_score!r}")
        self.render_mode = render_mode
        self.target_score = int(target_score)
        self.reward_mode = reward
        self.episode = episode
        self.illegal_reward = float(illegal_reward)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.action_spaces = {a: spaces.Discrete(N_CARDS) for a in AGENTS}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (N_CARDS,), dtype=np.int8),
            }) for a in AGENTS
        }
        self._seeder = random.Random()
        self.game: Game | None = None

    # -- PettingZoo API -------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._seeder = random.Random(seed)
        options = dict(options or {})
        unknown = set(options) - {"first_dealer", "deals"}
        if unknown:  # PettingZoo's api_test passes foreign options, so warn rather than raise
            gymnasium.logger.warn(f"ignoring unknown reset options {sorted(unknown)}: this env "
                                  f"reads 'first_dealer' and 'deals'")
        first_dealer = options.get("first_dealer")
        if first_dealer is not None:
            _check_choice("options['first_dealer']", first_dealer, AGENTS)
            first_dealer = AGENTS.index(first_dealer)
        self.game = Game(target=self.target_score, seed=self._seeder.getrandbits(64),
                         first_dealer=first_dealer, deals=options.get("deals", ()),
                         single_deal=self.episode == "deal")
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        # events each agent has seen since just before its own last move
        self._windows: dict[str, list[dict]] = {a: [] for a in AGENTS}
        self._log_seen = 0
        self._update_infos()
        self.agent_selection = AGENTS[self.game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = AGENTS.index(agent)
        mask = np.zeros(N_CARDS, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations[agent]:
            mask[self.game.legal_actions()] = 1
        return {"observation": encode(self.game, player), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        player = AGENTS.index(agent)
        if action is None:
            raise ValueError(f"{agent} must choose a card: action None is only for finished agents")
        try:
            card = int(action)
        except (TypeError, ValueError) as err:
            raise ValueError(f"action must be a card id 0..51, got {action!r}") from err
        before = list(game.scores)
        game.step(card, player)  # raises IllegalActionError (a ValueError) and changes nothing
        self._windows[agent] = []  # this agent's next window starts with its own move's results
        self._cumulative_rewards[agent] = 0.0
        gained = [game.scores[0] - before[0], game.scores[1] - before[1]]
        deal_over = game.phase == Phase.DEAL_OVER
        done = game.is_over or deal_over
        if self.reward_mode == "points":
            self.rewards = {AGENTS[p]: float(gained[p] - gained[1 - p]) for p in (0, 1)}
        elif game.is_over:
            self.rewards = {AGENTS[p]: 1.0 if game.winner == p else -1.0 for p in (0, 1)}
        elif deal_over:
            margin = game.records[-1].points(0) - game.records[-1].points(1)
            sign = float(np.sign(margin))
            self.rewards = {AGENTS[0]: sign, AGENTS[1]: -sign}
        else:
            self.rewards = dict.fromkeys(AGENTS, 0.0)
        if done:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._update_infos()
        self.agent_selection = agent if done else AGENTS[game.to_move]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; "
                                  "create the env with render_mode='ansi' or 'human'")
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        text = render_board(self.game, AGENTS)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -- conveniences ---------------------------------------------------------------------------

    @property
    def scores(self) -> dict[str, int]:
        return {a: self.game.scores[p] for p, a in enumerate(AGENTS)}

    @property
    def dealer(self) -> str:
        return AGENTS[self.game.dealer]

    # -- infos ----------------------------------------------------------------------------------

    def _update_infos(self) -> None:
        """Add the new log entries to each agent's window (what it may see: not the opponent's
        discards) and rebuild ``infos``."""
        game = self.game
        for entry in game.log[self._log_seen:]:
            event = _entry_dict(entry)
            for player, agent in enumerate(AGENTS):
                if entry.kind != DISCARD or entry.player == player:
                    self._windows[agent].append(event)
        self._log_seen = len(game.log)
        scores = self.scores
        self.infos = {agent: self._info(agent, scores) for agent in AGENTS}

    def _info(self, agent: str, scores: dict[str, int]) -> dict[str, Any]:
        game = self.game
        events = list(self._windows[agent])  # the event dicts are shared: treat them as read-only
        info: dict[str, Any] = {
            "events": events,
            "go": sorted({e["player"] for e in events if e["kind"] == SAID_GO}),
            "phase": PHASE_NAMES[game.phase],
            "scores": dict(scores),
            "dealer": AGENTS[game.dealer],
        }
        if game.is_over:
            margin = game.scores[game.winner] - game.scores[1 - game.winner]
            info["summary"] = {"winner": AGENTS[game.winner], "margin": margin,
                               "skunk": game.skunk, "double_skunk": game.double_skunk,
                               "deals": len(game.records)}
        return info


def _entry_dict(entry: LogEntry) -> dict[str, Any]:
    event = {"kind": entry.kind, "player": None if entry.player is None else AGENTS[entry.player],
             "points": entry.points, "cards": tuple(CARD_NAMES[c] for c in entry.cards)}
    if entry.detail:
        event["detail"] = entry.detail
    return event


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
