"""The rollout teacher (``distill.teacher: rollouts:net=PATH``): a network's own cards, each legal
card valued by playing the rest of the real deal out.

A search agent has to guess the opponent's hidden cards, so its values are only as good as its
model of them. A recording made for training does not have to guess: the game it records is
there, hidden cards and all. At each decision of the network with more than one legal card in
the play, every legal card is laid in a copy of the game's real row, and the rest of the deal is
played out on ``crib_env.fast`` with the network in both seats, each from its own observation:
the player's cards are its highest logit (as ``LearnedAgent`` plays), the opponent's are drawn
from its softmax at ``temperature``. A card's value is the player's chance to win after the deal:
1 or 0 where the game ends in it, else the win-odds table's chance at the scores it ends on.

One real deal per decision makes each value a noisy sample, but its mean over the decisions that
share an observation is the network's own action value under the true distribution of the hidden
cards given what the player saw, against the opponents it was recorded against: learning to lay
the card of highest mean value (``distill.regret``, whose loss is linear in the values, so the
noise averages out) is one step of policy improvement whose reading of the opponent is learned
from the games, not modelled. The values are training labels only: no agent ever plays from them,
and the network learns from its own observation alone.

Discards are kept with the network's own card and no values (so the fit keeps its throws), as
are the play decisions' cards: the network's own, anchoring the fit where the values do not say
otherwise. The chunks have the same files and fields as the other teachers'
(``distill_recording``), one per ``chunk_games`` games, a function of the seed and the chunk
number alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from crib_env import fast
from crib_env.cards import N_CARDS
from crib_env.game import DEFAULT_TARGET

from ..per_row import PerRowAgent, is_stateless

#: the teacher's name in ``distill.teacher`` (its settings after a colon)
ROLLOUT_TEACHER = "rollouts"


@dataclass(frozen=True)
class RolloutSettings:
    """``rollouts:net=PATH,temperature=T,opponent=WHO``: the network (a checkpoint path, or
    ``champion``); who lays the opponent's cards in the rollouts: ``net``, the network, drawing
    from its softmax at ``temperature``, or ``rival``, the agent the game is played against, so
    the values are those against that opponent's own play. A rival with memory (the expert) is
    continued in each rollout from a copy of the game's own, its memory of the deal included."""

    net: str = "champion"
    temperature: float = 1.0
    opponent: str = "net"

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise ValueError(f"{ROLLOUT_TEACHER}: temperature must be positive, got "
                             f"{self.temperature}")
        if self.opponent not in ("net", "rival"):
            raise ValueError(f"{ROLLOUT_TEACHER}: opponent must be net or rival, got "
                             f"{self.opponent!r}")

    @classmethod
    def parse(cls, spec: str) -> RolloutSettings:
        """Settings from a ``rollouts:key=value,...`` spec; unknown keys and bad values raise
        ``ValueError`` naming them."""
        from agents.settings import parse_settings

        name, _, text = spec.partition(":")
        if name != ROLLOUT_TEACHER:
            raise ValueError(f"not a rollout teacher: {spec!r}")
        return parse_settings(cls, ROLLOUT_TEACHER, text, "rollouts:net=champion,opponent=rival")


def is_rollout_teacher(spec: str) -> bool:
    return spec.partition(":")[0] == ROLLOUT_TEACHER


def seat_values(rows: np.ndarray, seats: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """Each finished deal's value for the player in ``seats``: 1 or 0 where the game is over,
    else ``wins`` (``agents.endgame.win_table``) at its scores, the other player dealing next."""
    index = np.arange(len(rows))
    top = rows[:, fast.TARGET] - 1
    own = np.minimum(rows[index, fast.SCORE + seats], top)
    opp = np.minimum(rows[index, fast.SCORE + 1 - seats], top)
    deals_next = (rows[:, fast.DEALER] != seats).astype(np.int64)
    table = wins[own, opp, deals_next]
    over = rows[:, fast.PHASE] == fast.P_GAME_OVER
    return np.where(over, (rows[:, fast.WINNER] == seats).astype(np.float64), table)


def _sample(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One card per row drawn from the rows of ``probs``."""
    cumulative = probs.cumsum(axis=1)
    draws = rng.random(len(probs)) * cumulative[:, -1]
    return np.minimum((cumulative <= draws[:, None]).sum(axis=1), N_CARDS - 1)


def play_out(agent, rows: np.ndarray, seats: np.ndarray, wins: np.ndarray,
             rng: np.random.Generator, temperature: float, rival=None) -> np.ndarray:
    """Play every row (real game rows, single-deal, in the play) to the end of its deal with
    ``agent``'s network in both seats (``seats``: the player's, who lays its highest logit; the
    other seat draws from the softmax at ``temperature``, or with ``rival`` is that agent's: a
    ``PerRowAgent``'s row ``i`` plays rollout row ``i`` and, as in a real game, is asked on every
    one of its turns, forced ones too); returns ``seat_values``."""
    from agents.learned import legal_argmax, legal_softmax
    from crib_env.observation import OBS_SIZE

    from ..batch_play import act_rows

    rows = rows.copy()
    per_row = isinstance(rival, PerRowAgent)
    while True:
        live = np.flatnonzero(rows[:, fast.PHASE] == fast.P_PLAY)
        if not live.size:
            return seat_values(rows, seats, wins)
        part = rows[live]
        masks = np.zeros((live.size, N_CARDS), dtype=np.int8)
        fast.legal_masks(part, masks)
        actions = masks.argmax(axis=1).astype(np.int64)  # the only card where there is one
        asked = masks.sum(axis=1) > 1
        if per_row:
            asked |= part[:, fast.TO_MOVE] != seats[live]
        choice = np.flatnonzero(asked)
        if choice.size:
            obs = np.zeros((choice.size, OBS_SIZE), dtype=np.float32)
            fast.encode_batch(part[choice], part[choice, fast.TO_MOVE].copy(), obs)
            mine = part[choice, fast.TO_MOVE] == seats[live[choice]]
            theirs = choice[~mine]
            if rival is not None:
                if theirs.size:
                    actions[theirs] = act_rows(rival, live[theirs], obs[~mine], masks[theirs])
                if mine.any():
                    logits = agent.logits_batch(obs[mine], masks[choice[mine]])
                    actions[choice[mine]] = legal_argmax(logits, masks[choice[mine]])
            else:
                logits = agent.logits_batch(obs, masks[choice])
                actions[choice[mine]] = legal_argmax(logits[mine], masks[choice[mine]])
                if theirs.size:
                    probs = legal_softmax(logits[~mine], masks[theirs], temperature)
                    actions[theirs] = _sample(probs, rng)
        errors = np.zeros(live.size, dtype=np.int64)
        fast.step_batch(part, actions, errors)
        if errors.any():
            raise RuntimeError("rollout teacher: an illegal card in a rollout")
        rows[live] = part


class RolloutRecorder:
    """``play_games``' ``on_turn`` hook: keeps the network's decisions with a choice (on the
    agent's seats) and values the play's legal cards by ``play_out``."""

    def __init__(self, agent, agent_seats: np.ndarray, wins: np.ndarray,
                 rng: np.random.Generator, temperature: float, rival=None) -> None:
        self.agent = agent
        self.rival = rival
        self.agent_seats = agent_seats
        self.wins = wins
        self.rng = rng
        self.temperature = temperature
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.cards: list[np.ndarray] = []
        self.margins: list[np.ndarray] = []

    def __call__(self, S: np.ndarray, live: np.ndarray, observations: np.ndarray,
                 masks: np.ndarray, actions: np.ndarray) -> None:
        mine = S[live, fast.TO_MOVE] == self.agent_seats[live]
        keep = mine & (masks.sum(axis=1) > 1)
        if not keep.any():
            return
        rows = live[keep]
        margins = np.full((rows.size, N_CARDS), np.nan, dtype=np.float32)
        playing = np.flatnonzero(S[rows, fast.PHASE] == fast.P_PLAY)
        if playing.size:
            owner, cards = np.nonzero(masks[keep][playing])
            candidates = S[rows[playing[owner]]].copy()
            for i, card in enumerate(cards.tolist()):
                fast.apply_action(candidates, i, card)
            seats = S[rows[playing[owner]], fast.TO_MOVE]
            rival = self.rival
            if isinstance(rival, PerRowAgent):  # each rollout continues its game's own copy
                rival = rival.branch(rows[playing[owner]])
            values = play_out(self.agent, candidates, seats, self.wins, self.rng,
                              self.temperature, rival)
            margins[playing[owner], cards] = values
        self.obs.append(observations[keep].copy())
        self.masks.append(masks[keep].copy())
        self.cards.append(actions[rows].astype(np.int16))
        self.margins.append(margins)


def record_rollout_chunk(teacher: str, opponent: str, seed: int, number: int,
                         games: int) -> dict[str, np.ndarray]:
    """Chunk ``number`` of a rollout teacher's recording: its network plays ``games`` games
    against ``opponent`` on ``crib_env.fast`` (``training.batch_play``), its decisions kept as
    the module docstring says."""
    from agents.endgame import win_table
    from agents.learned import load_learned_agent
    from agents.registry import network_path
    from crib_env.observation import OBS_SIZE

    from ..batch_play import play_games
    from ..eval_plans import derive_seed, game_plan
    from ..eval_play import build_agent

    started = time.perf_counter()
    settings = RolloutSettings.parse(teacher)
    chunk_seed = derive_seed(seed, "distill", number)
    agent = load_learned_agent(network_path(settings.net))
    rival = build_agent(opponent, seed=derive_seed(chunk_seed, "opponent"))
    if not is_stateless(rival):  # the expert: one copy per game, as in an evaluation
        rival = PerRowAgent(rival, lambda b: derive_seed(chunk_seed, "opponent", "game", b))
    in_rollouts = rival if settings.opponent == "rival" else None
    plans = [game_plan(chunk_seed, index) for index in range(games)]
    seats = np.array([plan.agent_seat for plan in plans], dtype=np.int64)
    recorder = RolloutRecorder(agent, seats, win_table(DEFAULT_TARGET),
                               np.random.default_rng(derive_seed(chunk_seed, "rollouts")),
                               settings.temperature, in_rollouts)
    play_games(agent, rival, plans, on_turn=recorder)

    def joined(parts: list[np.ndarray], width: int | None, dtype) -> np.ndarray:
        shape = (0, width) if width else (0,)
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(shape, dtype)

    return {"obs": joined(recorder.obs, OBS_SIZE, np.float32),
            "masks": joined(recorder.masks, N_CARDS, np.int8),
            "cards": joined(recorder.cards, None, np.int16),
            "margins": joined(recorder.margins, N_CARDS, np.float32),
            "seconds": np.float64(time.perf_counter() - started)}
