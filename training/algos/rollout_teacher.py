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

With ``throws=K`` the discards are valued too, once both players have thrown and the real deal
reaches the play: each of the fifteen throws of the player's six cards is laid in copies of that
row (the opponent's real hand and throw kept), with ``K`` cuts drawn from the forty cards neither
hand holds (the same cuts for every throw; all forty at ``K >= 40``), his heels counted, and the
deal played out with the network in both seats (a rival would be asked about thousands of copies
per deal). A throw's value is the mean over its cuts; the first discarded card is valued by its
best partner, the second by the throw it completes. Without ``throws`` the discards are kept with
the network's own card and no values (so the fit keeps its throws); ``plays=0`` likewise keeps the
play's cards without values (a recording that teaches the throws alone). Cards kept without values
anchor the fit to the network's own choice where the values do not say otherwise. The chunks
have the same files and fields as the other teachers' (``distill_recording``), one per
``chunk_games`` games, a function of the seed and the chunk number alone.

With ``solve=1`` the play's cards are valued without rollouts: the rest of the real deal is solved
exactly with every card known (``solved_out``), so a value is the card's worth under best play by
both players as if each saw the other's hand. Its mean over the decisions that share an
observation is what a search solving sampled deals averages, the deals being the games' own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from agents.endgame import near_the_end
from agents.search.discard import card_values
from crib_env import fast
from crib_env.cards import N_CARDS, RANK
from crib_env.game import DEFAULT_TARGET
from crib_env.rules import heels_points

from ..per_row import PerRowAgent, is_stateless

#: the teacher's name in ``distill.teacher`` (its settings after a colon)
ROLLOUT_TEACHER = "rollouts"


@dataclass(frozen=True)
class RolloutSettings:
    """``rollouts:net=PATH,temperature=T,opponent=WHO,throws=K,plays=1,need=N``: the network (a
    checkpoint path, or ``champion``); who lays the opponent's cards in the play's rollouts:
    ``net``, the network, drawing from its softmax at ``temperature``; ``rival``, the agent the
    game is played against, so the values are those against that opponent's own play (a rival
    with memory, the expert, is continued in each rollout from a copy of the game's own, its
    memory of the deal included); or a network's checkpoint (a path, or ``champion``), laying its
    highest logit: a model of the rival (the expert distilled) that steps every rollout in one
    forward pass where the rival itself is asked row by row. ``throws``: cuts per throw when
    valuing the discards (0: not valued); ``plays``: whether the play's cards are valued;
    ``need``: only the decisions taken with either player within ``need`` points of the target
    are kept and valued (the end of the game, as ``agents.endgame.near_the_end`` and a pool's
    end-game members judge it; 0: all); ``solve``: the play's cards are valued by an exact solve
    of the rest of the real deal (``solved_out``) instead of rollouts."""

    net: str = "champion"
    temperature: float = 1.0
    opponent: str = "net"
    throws: int = 0
    plays: bool = True
    need: int = 0
    solve: bool = False

    def __post_init__(self) -> None:
        if self.need < 0:
            raise ValueError(f"{ROLLOUT_TEACHER}: need (points to go) must be 0 or more, got "
                             f"{self.need}")
        if self.throws < 0:
            raise ValueError(f"{ROLLOUT_TEACHER}: throws (cuts per throw) must be 0 or more, got "
                             f"{self.throws}")
        if self.solve and self.opponent != "net":
            raise ValueError(f"{ROLLOUT_TEACHER}: solve values the play without rollouts, so no "
                             f"opponent plays them: leave opponent unset, got {self.opponent!r}")
        if self.temperature <= 0:
            raise ValueError(f"{ROLLOUT_TEACHER}: temperature must be positive, got "
                             f"{self.temperature}")
        if self.stand_in is not None:
            from agents.checkpoint import resolve_checkpoint
            from agents.registry import network_path

            try:
                resolve_checkpoint(network_path(self.stand_in))
            except FileNotFoundError as err:
                raise ValueError(f"{ROLLOUT_TEACHER}: opponent must be net, rival or a "
                                 f"network's checkpoint, got {self.opponent!r} ({err})") from None

    @property
    def stand_in(self) -> str | None:
        """The checkpoint of the network standing in for the rival (``opponent=PATH``), else None."""
        return None if self.opponent in ("net", "rival") else self.opponent

    @classmethod
    def parse(cls, spec: str) -> RolloutSettings:
        """Settings from a ``rollouts:key=value,...`` spec; unknown keys and bad values raise
        ``ValueError`` naming them."""
        from agents.settings import parse_settings

        name, _, text = spec.partition(":")
        if name != ROLLOUT_TEACHER:
            raise ValueError(f"not a rollout teacher: {spec!r}")
        return parse_settings(cls, ROLLOUT_TEACHER, text, "rollouts:net=champion,opponent=rival")


#: a rollouts teacher values every card of a game from its real deal, so it cannot start where an
#: opening agent left the game (the error of preflight and of ``record_chunk``)
NO_OPENING = "distill.opening: the rollouts teacher records whole games; leave distill.opening unset"
#: its network lays the cards of the recorded games itself (its ``net=``)
NO_PLAYER = ("distill.player: the rollouts teacher's network plays the recorded games "
             "(rollouts:net=...); leave distill.player unset")


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


def solved_out(rows: np.ndarray, seats: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """Every row (a real game row, single-deal, in the play) valued for the player in ``seats``
    by an exact solve of the rest of its deal with every card known (``agents.search.solve``):
    both players laying their best card as if they saw each other's hands. Like a rollout's, the
    value is one real deal's; its mean over the decisions that share an observation is what a
    search that solves sampled deals (``champion-search:reply=0``) estimates, with the deals
    drawn from the games themselves instead of a model of the opponent."""
    from agents.search.solve import solve_rows

    player0 = solve_rows(np.ascontiguousarray(rows, dtype=np.int64), wins)
    return np.where(seats == 0, player0, 1.0 - player0)


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


#: his heels by starter card id
_HEELS_BY_CARD = np.array([heels_points(rank) for rank in RANK], dtype=np.int64)


def throw_rows(row: np.ndarray, seat: int, cuts_per_throw: int,
               rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Copies of ``row`` (a real game row at the start of the play) with ``seat``'s throw and the
    cut replaced: for each of the fifteen throws of its six dealt cards (returned, in order), one
    copy per cut, ``cuts_per_throw`` cuts drawn without replacement from the forty cards neither
    hand was dealt (all forty at 40 or more), the same cuts for every throw. His heels are
    recounted for each cut, ending the game where they reach the target."""
    dealt = fast.cards_of(row[fast.DEALT + seat])
    unseen = np.array([c for c in range(N_CARDS)
                       if not (row[fast.DEALT] | row[fast.DEALT + 1]) >> c & 1], dtype=np.int64)
    cuts = unseen if cuts_per_throw >= len(unseen) else np.sort(
        rng.choice(unseen, cuts_per_throw, replace=False))
    throws = [(a, b) for i, a in enumerate(dealt) for b in dealt[i + 1:]]
    copies = np.repeat(row[None, :], len(throws) * len(cuts), axis=0)
    kept = np.array([row[fast.DEALT + seat] & ~(1 << a) & ~(1 << b) for a, b in throws],
                    dtype=np.int64)
    copies[:, fast.HAND + seat] = np.repeat(kept, len(cuts))
    copies[:, fast.DISC + seat] = np.repeat(row[fast.DEALT + seat] & ~kept, len(cuts))
    starters = np.tile(cuts, len(throws))
    copies[:, fast.STARTER] = starters
    copies[:, fast.NEXT_STARTER] = starters
    dealer = int(row[fast.DEALER])
    before = row[fast.SCORE + dealer] - row[fast.HEELS_PTS]
    heels = np.minimum(_HEELS_BY_CARD[starters], row[fast.TARGET] - before)
    copies[:, fast.SCORE + dealer] = before + heels
    copies[:, fast.HEELS_PTS] = heels
    won = before + heels >= row[fast.TARGET]
    copies[:, fast.PHASE] = np.where(won, fast.P_GAME_OVER, fast.P_PLAY)
    copies[:, fast.WINNER] = np.where(won, dealer, -1)
    return copies, throws


class RolloutRecorder:
    """``play_games``' ``on_turn`` hook: keeps the network's decisions with a choice (on the
    agent's seats), values the play's legal cards by ``play_out`` and, with ``cuts_per_throw``,
    its discards once the deal's play starts (``throw_rows``)."""

    def __init__(self, agent, agent_seats: np.ndarray, wins: np.ndarray,
                 rng: np.random.Generator, temperature: float, rival=None,
                 cuts_per_throw: int = 0, value_plays: bool = True,
                 throw_rng: np.random.Generator | None = None, need: int = 0,
                 solve: bool = False) -> None:
        self.agent = agent
        self.rival = rival
        self.agent_seats = agent_seats
        self.wins = wins
        self.rng = rng
        self.temperature = temperature
        self.cuts_per_throw = cuts_per_throw
        self.value_plays = value_plays
        self.throw_rng = throw_rng if throw_rng is not None else np.random.default_rng(0)
        self.need = need
        self.solve = solve
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.cards: list[np.ndarray] = []
        self.margins: list[np.ndarray] = []
        #: game -> its agent's discards this deal, waiting for the play: (margins row, card)
        self.throws_waiting: dict[int, list[tuple[np.ndarray, int]]] = {}

    def __call__(self, S: np.ndarray, live: np.ndarray, observations: np.ndarray,
                 masks: np.ndarray, actions: np.ndarray) -> None:
        if self.cuts_per_throw:
            self._value_throws(S, live)
        mine = S[live, fast.TO_MOVE] == self.agent_seats[live]
        keep = mine & (masks.sum(axis=1) > 1)
        if self.need:
            to_go = S[live, fast.TARGET, None] - S[live, fast.SCORE:fast.SCORE + 2]
            keep &= np.array([near_the_end(own, opp, self.need) for own, opp in to_go.tolist()],
                             dtype=bool)
        if not keep.any():
            return
        rows = live[keep]
        margins = np.full((rows.size, N_CARDS), np.nan, dtype=np.float32)
        playing = np.flatnonzero(S[rows, fast.PHASE] == fast.P_PLAY)
        if playing.size and self.value_plays:
            owner, cards = np.nonzero(masks[keep][playing])
            candidates = S[rows[playing[owner]]].copy()
            for i, card in enumerate(cards.tolist()):
                fast.apply_action(candidates, i, card)
            seats = S[rows[playing[owner]], fast.TO_MOVE]
            if self.solve:
                values = solved_out(candidates, seats, self.wins)
            else:
                rival = self.rival
                if isinstance(rival, PerRowAgent):  # each rollout continues its game's own copy
                    rival = rival.branch(rows[playing[owner]])
                values = play_out(self.agent, candidates, seats, self.wins, self.rng,
                                  self.temperature, rival)
            margins[playing[owner], cards] = values
        if self.cuts_per_throw:
            for i in np.flatnonzero(S[rows, fast.PHASE] == fast.P_DISCARD).tolist():
                b = int(rows[i])
                waiting = self.throws_waiting.setdefault(b, [])
                if S[b, fast.NDISC + S[b, fast.TO_MOVE]] == 0:
                    waiting.clear()  # a new deal's first discard
                waiting.append((margins[i], int(actions[b])))
        self.obs.append(observations[keep].copy())
        self.masks.append(masks[keep].copy())
        self.cards.append(actions[rows].astype(np.int16))
        self.margins.append(margins)

    def _value_throws(self, S: np.ndarray, live: np.ndarray) -> None:
        """Values the waiting discards of the games whose play starts at this turn (nothing laid
        yet), all in one ``play_out``; a deal ended by the cut leaves its discards unvalued."""
        starting = [int(b) for b in live if int(b) in self.throws_waiting
                    and S[b, fast.PHASE] == fast.P_PLAY
                    and S[b, fast.PLAYED] == 0 and S[b, fast.PLAYED + 1] == 0]
        if not starting:
            return
        parts, seats, layouts = [], [], []
        for b in starting:
            seat = int(self.agent_seats[b])
            copies, throws = throw_rows(S[b], seat, self.cuts_per_throw, self.throw_rng)
            parts.append(copies)
            seats.append(np.full(len(copies), seat, dtype=np.int64))
            layouts.append(throws)
        values = play_out(self.agent, np.concatenate(parts), np.concatenate(seats), self.wins,
                          self.rng, self.temperature)
        start = 0
        for b, copies, throws in zip(starting, parts, layouts, strict=True):
            by_throw = values[start:start + len(copies)].reshape(len(throws), -1).mean(axis=1)
            start += len(copies)
            value = dict(zip(throws, by_throw.tolist(), strict=True))
            waiting = self.throws_waiting.pop(b)
            if len(waiting) != 2:
                continue
            (first_margins, first), (second_margins, _) = waiting
            for card, best in card_values(throws, by_throw.tolist()).items():
                first_margins[card] = best
                if card != first:
                    second_margins[card] = value[tuple(sorted((first, card)))]


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
    if settings.stand_in is not None:
        in_rollouts = load_learned_agent(network_path(settings.stand_in))
    else:
        in_rollouts = rival if settings.opponent == "rival" else None
    plans = [game_plan(chunk_seed, index) for index in range(games)]
    seats = np.array([plan.agent_seat for plan in plans], dtype=np.int64)
    recorder = RolloutRecorder(agent, seats, win_table(DEFAULT_TARGET),
                               np.random.default_rng(derive_seed(chunk_seed, "rollouts")),
                               settings.temperature, in_rollouts, settings.throws,
                               settings.plays,
                               np.random.default_rng(derive_seed(chunk_seed, "throws")),
                               settings.need, settings.solve)
    play_games(agent, rival, plans, on_turn=recorder)

    def joined(parts: list[np.ndarray], width: int | None, dtype) -> np.ndarray:
        shape = (0, width) if width else (0,)
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(shape, dtype)

    return {"obs": joined(recorder.obs, OBS_SIZE, np.float32),
            "masks": joined(recorder.masks, N_CARDS, np.int8),
            "cards": joined(recorder.cards, None, np.int16),
            "margins": joined(recorder.margins, N_CARDS, np.float32),
            "seconds": np.float64(time.perf_counter() - started)}
