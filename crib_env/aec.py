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

The rules are those of `docs/RULES.md`, enforced by `crib_env.game.Game`.

### Turns and actions

Each action is a card id. In the discard phase each player lays away **one card per step, two steps
each** (pone first, then the dealer); in the play the action lays that card. "Go" is never an
action: when the player to move has no card that fits under 31 the environment applies the go
itself, moves on, and reports it in `infos`. The show is counted automatically after the play.
An action is an integer: a Python int, a NumPy integer or a 0-d integer array, as `Discrete(52)`
takes them; a float (`7.9` is not card 7), a string or a bool is refused with `ValueError`, never
truncated. Once every agent has stepped `None` at the end, `last()` and `step()` raise
`RuntimeError` asking for `reset()`.

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
- `reward="winprob"`: on every step, the change in the agent's potential `2 * P(win) - 1` from the
  win-odds table (`crib_env.odds`): the table's value at the current scores as if the deal in progress
  had just ended, so it moves when points are scored (and when a finished show deals on). The
  potential before the game is 0 and at the end +1 / -1, so a game's rewards add up to exactly the
  result of `"win"` (potential-based shaping: the best policy is unchanged). Zero-sum. Needs
  `episode="game"` and the table's target (121).

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
Each agent's info is built the first time it is read after a step (`last()` reads only the
mover's), and the same dict is returned until the next step. The event dicts are shared between
steps and agents: treat them as read-only.

### Version history

- v0: initial release. `reward="winprob"` was added later as a new mode; the observation and the
  existing rewards are unchanged, so the version stays v0.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .aec_wrapper import CribbageWrapper, card_action
from .cards import CARD_NAMES, N_CARDS
from .game import DISCARD, SAID_GO, Game, Phase, ScriptedDeal, check_seed
from .observation import OBS_SIZE, OBSERVATION_VERSION, encode
from .odds import potential_of, winprob_potential
from .render import render_board

AGENTS = ("player_0", "player_1")
REWARD_MODES = ("win", "points", "winprob")
EPISODE_MODES = ("game", "deal")
RENDER_MODES = ("ansi", "human")
ENV_NAME = f"cribbage_v{OBSERVATION_VERSION}"
PHASE_NAMES = tuple(phase.name.lower() for phase in sorted(Phase))  # indexed by the phase value
PLAYER_OF = {agent: player for player, agent in enumerate(AGENTS)}
_DEAL_OVER, _GAME_OVER = Phase.DEAL_OVER, Phase.GAME_OVER  # module constants: read on every step


def env(**kwargs: Any) -> AECEnv:
    """The cribbage AEC env wrapped as PettingZoo's classic envs are: an illegal move ends the game
    with the mover losing (and a warning naming the move), actions are bounds-checked and the call
    order is enforced. One wrapper does all three (see ``CribbageWrapper``)."""
    return CribbageWrapper(raw_env(**kwargs))


def check_reset_options(options: Any) -> dict[str, Any]:
    """``reset``'s options as a dict (its scripted deals parsed), or ``ValueError`` naming the
    option that cannot be used."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict such as {{'first_dealer': 'player_0'}}, got "
                         f"{options!r} ({type(options).__name__})")
    options = dict(options)
    deals = options.get("deals", ())
    if isinstance(deals, (str, bytes, Mapping)) or not isinstance(deals, Iterable):
        raise ValueError(f"options['deals'] must be a list of scripted deals ({{'hands': ..., "
                         f"'starter': ...}}), got {deals!r}")
    first_dealer = options.get("first_dealer")
    if first_dealer is not None:
        _check_choice("options['first_dealer']", first_dealer, AGENTS)
    if "deals" in options:  # parsed here, so a refused deal leaves the seed and the game as they were
        options["deals"] = [ScriptedDeal.parse(d, i) for i, d in enumerate(deals)]
    return options


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
        if reward == "winprob" and episode != "game":
            raise ValueError(f"reward='winprob' needs episode='game' (the chance to win the game), "
                             f"got episode={episode!r}")
        if isinstance(target_score, bool) or not isinstance(target_score, (int, np.integer)) \
                or target_score < 1:
            raise ValueError(f"target_score must be a positive int, got {target_score!r}")
        self.render_mode = render_mode
        self.target_score = int(target_score)
        self.reward_mode = reward
        self.episode = episode
        #: reward="winprob": the table's potential, and player 0's potential at the last step
        self._phi = winprob_potential(int(target_score)) if reward == "winprob" else None
        self._potential_0 = 0.0
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
        self._infos: dict[str, dict[str, Any]] | None = None
        self._agent_infos: list[dict[str, Any] | None] = [None, None]

    # -- PettingZoo API -------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = check_reset_options(options)  # everything checked before anything changes
        seed = check_seed(seed)
        if seed is not None:
            self._seeder = random.Random(seed)
        unknown = set(options) - {"first_dealer", "deals"}
        if unknown:  # PettingZoo's api_test passes foreign options, so warn rather than raise
            gymnasium.logger.warn(f"ignoring unknown reset options {sorted(unknown)}: this env "
                                  f"reads 'first_dealer' and 'deals'")
        first_dealer = options.get("first_dealer")
        if first_dealer is not None:
            first_dealer = AGENTS.index(first_dealer)
        self.game = Game(target=self.target_score, seed=self._seeder.getrandbits(64),
                         first_dealer=first_dealer, deals=options.get("deals", ()),
                         single_deal=self.episode == "deal")
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self._potential_0 = 0.0  # before the game: the first step's reward holds the opening edge
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        # by player: the events seen since just before its own last move, and who said go in them
        self._windows: list[list[dict]] = [[], []]
        self._goes: list[list[str]] = [[], []]
        self._log_seen = 0
        self._update_windows()
        self.agent_selection = AGENTS[self.game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = PLAYER_OF[agent]
        if agent == self.agent_selection and not self.terminations[agent]:
            mask = self.game.legal_mask()
        else:
            mask = np.zeros(N_CARDS, dtype=np.int8)
        return {"observation": encode(self.game, player), "action_mask": mask}

    def step(self, action: int | None) -> None:
        game = self.game
        if game is None or not self.agents:
            raise self._not_in_play("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = PLAYER_OF[agent]
        if action is None:
            raise ValueError(f"{agent} must choose a card: action None is only for finished agents")
        card = action if type(action) is int else card_action(action)
        score_0, score_1 = game.scores
        game.step(card, player)  # raises IllegalActionError (a ValueError) and changes nothing
        # this agent's next window starts with its own move's results
        self._windows[player] = []
        self._goes[player] = []
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        phase = game.phase
        done = phase >= _DEAL_OVER  # deal over or game over
        if self.reward_mode == "points":
            margin = (game.scores[0] - score_0) - (game.scores[1] - score_1)
            reward_0 = float(margin)
        elif self._phi is not None:
            potential = potential_of(self._phi, game.scores[0], game.scores[1], game.dealer, 0)
            reward_0 = potential - self._potential_0
            self._potential_0 = potential
        elif not done:
            reward_0 = 0.0
        elif phase == _GAME_OVER:
            reward_0 = 1.0 if game.winner == 0 else -1.0
        else:
            record = game.records[-1]
            reward_0 = float(np.sign(record.points(0) - record.points(1)))
        reward_1 = -reward_0 if reward_0 else 0.0
        self.rewards = {AGENTS[0]: reward_0, AGENTS[1]: reward_1}
        # PettingZoo's _accumulate_rewards, inline: this runs on every step
        cumulative[AGENTS[0]] += reward_0
        cumulative[AGENTS[1]] += reward_1
        if done:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._update_windows()
        self.agent_selection = agent if done else AGENTS[game.to_move]
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

    def _update_windows(self) -> None:
        """Add the new log entries to each agent's window (what it may see: not the opponent's
        discards). The info dicts themselves are built when read (``infos``, ``last``): a loop of
        ``agent_iter`` / ``last`` / ``step`` reads only the mover's. Runs on every step."""
        game = self.game
        log = game.log
        windows, goes = self._windows, self._goes
        for index in range(self._log_seen, len(log)):
            entry = log[index]
            cards = entry.cards  # _entry_dict, inline: this loop runs on every step
            event = {"kind": entry.kind,
                     "player": None if entry.player is None else AGENTS[entry.player],
                     "points": entry.points,
                     "cards": _ONE_CARD_NAMES[cards[0]] if len(cards) == 1 else _card_names(cards)}
            if entry.detail:
                event["detail"] = entry.detail
            if entry.kind == DISCARD:
                windows[entry.player].append(event)
                continue
            windows[0].append(event)
            windows[1].append(event)
            if entry.kind == SAID_GO:
                name = AGENTS[entry.player]
                for said in goes:
                    if name not in said:
                        said.append(name)
                        said.sort()
        self._log_seen = len(log)
        self._infos = None
        self._agent_infos = [None, None]

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """``infos[agent]``: see the module docstring. Built on first read after each step."""
        if self._infos is None:
            if self.game is None:
                raise AttributeError("infos cannot be accessed before reset")
            self._infos = {agent: self._agent_info(PLAYER_OF[agent]) for agent in self.agents}
        return self._infos

    @infos.setter
    def infos(self, value: dict[str, dict[str, Any]]) -> None:
        self._infos = value

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game is None or not self.agents:
            raise self._not_in_play("last")
        agent = self.agent_selection
        info = self._infos[agent] if self._infos is not None else self._agent_info(PLAYER_OF[agent])
        observation = self.observe(agent) if observe else None
        return (observation, self._cumulative_rewards[agent], self.terminations[agent],
                self.truncations[agent], info)

    def _not_in_play(self, method: str) -> RuntimeError:
        if self.game is None:
            return RuntimeError(f"call reset() before {method}()")
        return RuntimeError(f"{method}(): the game is over and every agent has left it (each "
                            f"stepped None): call reset() to play another")

    def _agent_info(self, player: int) -> dict[str, Any]:
        info = self._agent_infos[player]
        if info is not None:
            return info
        game = self.game
        # copies, so an info handed out never changes; the event dicts inside are shared
        # between steps and agents: treat them as read-only
        info = {"events": self._windows[player][:], "go": self._goes[player][:],
                "phase": PHASE_NAMES[game.phase],
                "scores": {AGENTS[0]: game.scores[0], AGENTS[1]: game.scores[1]},
                "dealer": AGENTS[game.dealer]}
        if game.phase == Phase.GAME_OVER:
            info["summary"] = _summary(game)
        self._agent_infos[player] = info
        return info


def _summary(game: Game) -> dict[str, Any]:
    winner = game.winner
    return {"winner": AGENTS[winner], "margin": game.scores[winner] - game.scores[1 - winner],
            "skunk": game.skunk, "double_skunk": game.double_skunk, "deals": len(game.records)}


_ONE_CARD_NAMES = tuple((name,) for name in CARD_NAMES)  # most events name a single card


def _card_names(cards: tuple[int, ...]) -> tuple[str, ...]:
    return tuple([CARD_NAMES[c] for c in cards])


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
