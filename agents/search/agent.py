"""``champion-search``: a network's choices checked by search over sampled deals.

Discards are the network's own (its discards lose about 0.004 points to the exact analyzer's)
until either player is within ``discard_need`` points of the target: from there each throw is
valued by the chance to win after the whole deal over ``discard_sims`` sampled deals
(``agents.search.discard``), since near the end the board, not the points, decides the throw. In
the play, for each legal card:

1. ``sims`` deals of the opponent's hidden cards are drawn from the cards the player has not seen,
   consistently with its plays and its go (``agents.opponent_model.sample_opponent``: kept the way
   an expected-value player would keep them);
2. each draw is weighted by how likely the network, sitting in the opponent's seat with those
   cards, was to make the plays the opponent made this deal (policy-based inference,
   ``agents.search.inference``);
3. every candidate card is valued on the same draws by the chance to win after the rest of the
   deal: the opponent's choices in the next ``reply`` cards (7: the rest of the play) taken from
   its model, weighted by their probabilities, the player's own cards between them chosen once
   for all draws that share the plays so far (``infoset``: the cards it could choose without
   seeing the opponent's hand) (``agents.search.reply``; ``reply=0``: solved like the rest;
   with ``own`` the player's own cards there are the network's, from its own observation), any
   rest of the play solved exactly with both hands known (``agents.search.solve``), the show
   counted, the board position read from the win-odds table.

The opponent's model has two styles (``standard_prior``): the network in its seat and standard's
tactics; both weigh the draws and answer for the opponent, each by how well it has explained the
opponent's plays so far in the game (``agents.search.styles``).

The card with the best weighted value is laid; candidates within ``tolerance`` of it are decided
by the network's logits. ``play=0`` leaves the whole play to the network, ``play_need`` leaves it
the play until either player is within that many points of the target, and ``play_until`` the
cards of the play from that many laid on. Everything comes from the observation and the agent's
own memory of earlier observations in the deal: the hidden cards are sampled, never read.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crib_env.fast import TO_MOVE
from crib_env.game import DISCARDS_PER_PLAYER, KEEP_SIZE, Phase
from crib_env.observation import decode

from ..base import legal_cards
from ..endgame import ENDGAME_NEED, near_the_end, win_table
from ..learned import LearnedAgent, legal_argmax, legal_softmax
from ..opponent_model import EXACT_TABLES, MODEL_TABLES, OpponentPlays, opponent_cards
from ..rollout import play_position
from ..settings import parse_settings
from ..standard import StandardAgent
from .discard import card_values, discard_position, draw_deals, throw_values
from .inference import choice_likelihood, new_rows, opponent_observations, play_likelihood
from .reply import after_candidates, answered_values
from .sampling import draw_opponents, solved_values
from .styles import OpponentStyles

#: the cards left in a play at most after the candidate (both hands of four, less the candidate)
MAX_REPLY = 2 * KEEP_SIZE - 1


@dataclass(frozen=True)
class SearchSettings:
    """The search's settings; ``agents.registry`` reads them from ``champion-search:key=value,...``."""

    #: sampled deals per play decision (64 keeps the whole play answered at about 46 ms a
    #: decision on one core; 512 lowered no regret with the opponent's next card solved)
    sims: int = 64
    #: candidates whose value is within this chance to win of the best are decided by the network
    tolerance: float = 0.002
    #: the inference's floor (see ``inference.play_likelihood``); 1 turns the inference off
    floor: float = 0.1
    #: softmax temperature of the network's logits in the inference
    temperature: float = 1.0
    #: draw the opponent's hands as an expected-value player keeps them (else uniformly)
    model: bool = True
    #: that player keeps by the exact analyzer, as standard does away from the end of the game
    #: (else by the rank-pair crib estimate, as the expert's own draws do)
    exact_keep: bool = False
    #: stop adding sampled deals once a decision has taken this long (0: no limit). With a limit
    #: the choices depend on the machine's speed, so a seed no longer fixes them.
    budget_ms: float = 0.0
    #: sampled deals per discard decision, each throw valued over the whole deal
    #: (``agents.search.discard``); 0: the network's own discards
    discard_sims: int = 256
    #: with ``discard_sims``: search the discards only once either player is within this many
    #: points of the target, where the board decides the throw (0: at every discard). 256 deals
    #: within 30 points: 55.35% against the expert where the network's throws gave 54.05%, with
    #: the same points per game (+1.43 and +1.42): the throws play for the win, not the points
    discard_need: int = ENDGAME_NEED
    #: the opponent's choices in this many cards laid after each candidate come from its model
    #: (the network in its seat, mixed with standard's tactics by ``standard_prior``), not from
    #: the exact solve (``agents.search.reply``; 0: all solved). With the
    #: network's throws: 1, its next card, 54.05% against the expert where the solve alone gave
    #: 52.9%; 3 with the player's cards chosen by the deals' best card, 53.3%. 3 with ``infoset``
    #: (searched throws near the end): 56.05%, where 1 gave 55.35%. 7 (the whole play after the
    #: candidate) with ``infoset`` and ``standard_prior=0.5``, the default: 56.0% against the
    #: expert and 60.3% against standard
    reply: int = 7
    #: after an opponent's card the network lays with a probability under this, the rest of the
    #: play is solved exactly (only with ``reply`` above 1)
    reply_prune: float = 0.05
    #: softmax temperature of the network's logits for the opponent's cards
    reply_temperature: float = 1.0
    #: the player's own cards among those ``reply`` cards are the network's too (its card of
    #: highest logit from the player's own observation), not the best card of each sampled deal;
    #: with ``reply=7`` the network plays both seats to the end of the play (with sims=64 and
    #: reply_prune=0.05: 53.95% against the expert, level with the default's 54.05%)
    own: bool = False
    #: the player's own cards among those ``reply`` cards (after an opponent's answer or go, so
    #: only with ``reply`` of 2 or more and without ``own``) are chosen once per information
    #: set, the best card over the weighted sampled deals that share the plays so far, not the
    #: best card of each deal as if it saw that deal's hidden cards. With reply=3: 56.05% against
    #: the expert and 58.3% against standard where the deals' best card gave 55.35% and 57.6%
    #: (reply=1)
    infoset: bool = True
    #: the prior chance that the opponent pegs by standard's tactics rather than like the
    #: network, updated through the game by how well each explains its plays
    #: (``agents.search.styles``); 0: the network alone. With reply=3: 0.5 gave 59.25% against
    #: standard where 0 gave 58.3%; with reply=7 (the default) 60.3%
    standard_prior: float = 0.5
    #: the standard style's likelihood of a play standard would not have made with a sampled
    #: hand (standard's tactics are deterministic, so a low floor reads its hands sharply;
    #: 0.01 with standard_prior=0.5: 58.75% against standard, level with 0.1's 58.95%)
    standard_floor: float = 0.1
    #: search the play (0: the network lays every card of the play, and only the throws near the
    #: end are searched: the network with the search's endgame throws, whose recordings teach
    #: those throws alone)
    play: bool = True
    #: with ``play``: search the play only once either player is within this many points of
    #: the target, and lay the network's cards before (0: every card of the play)
    play_need: int = 0
    #: with ``play``: search a card of the play only while fewer than this many cards have been
    #: laid in the deal (both players': 1, the pone's lead alone; 2, the lead and the dealer's
    #: first card), the network laying the rest (0: every card)
    play_until: int = 0
    #: the checkpoint whose network the search uses (empty: the shipped ``distilled`` network,
    #: ``agents.registry.SEARCH_NETWORK_PATH``); expert iteration names each generation's here
    net: str = ""

    def __post_init__(self) -> None:
        if self.sims < 1:
            raise ValueError(f"champion-search: sims must be at least 1, got {self.sims}")
        if min(self.discard_sims, self.discard_need, self.play_need, self.play_until) < 0:
            raise ValueError(f"champion-search: discard_sims, discard_need, play_need and "
                             f"play_until must not be negative, got {self.discard_sims}, "
                             f"{self.discard_need}, {self.play_need} and {self.play_until}")
        if not 0.0 <= self.standard_prior < 1.0:
            raise ValueError(f"champion-search: standard_prior must be in 0..1 (1 excluded), got "
                             f"{self.standard_prior}")
        for name in ("floor", "standard_floor"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"champion-search: {name} must be in 0..1, got "
                                 f"{getattr(self, name)}")
        if self.temperature <= 0 or self.reply_temperature <= 0:
            raise ValueError(f"champion-search: temperature and reply_temperature must be "
                             f"positive, got {self.temperature} and {self.reply_temperature}")
        if not 0 <= self.reply <= MAX_REPLY:
            raise ValueError(f"champion-search: reply must be in 0..{MAX_REPLY} cards, got "
                             f"{self.reply}")
        if self.own and self.reply == 0:
            raise ValueError("champion-search: own needs reply of at least 1 (the cards the "
                             "network lays)")
        if self.tolerance < 0 or self.budget_ms < 0:
            raise ValueError("champion-search: tolerance and budget_ms must not be negative")

    @classmethod
    def parse(cls, text: str) -> SearchSettings:
        """Settings from ``"sims=64,floor=0.1"`` (empty: the defaults); unknown keys and bad
        values raise ``ValueError`` naming them."""
        return parse_settings(cls, "champion-search", text, "champion-search:sims=64")


def settings_without_network(spec: str) -> list[str]:
    """The ``key=value`` settings of a ``champion-search:...`` spec, less any ``net=``."""
    settings = spec.partition(":")[2]
    return [p.strip() for p in settings.split(",") if p.strip() and
            not p.strip().startswith("net=")]


def with_network(spec: str, network: str | Path) -> str:
    """The ``champion-search`` spec ``spec`` searching with the checkpoint ``network`` (its
    ``net=`` replaced or added)."""
    name = spec.partition(":")[0]
    return f"{name}:{','.join([*settings_without_network(spec), f'net={network}'])}"


#: sampled deals valued between two looks at the clock when a time budget is set
BUDGET_CHUNK = 16


class ChampionSearchAgent:
    """The search over a policy network (see the module docstring)."""

    stateless = False  # it remembers the opponent's plays of the deal

    def __init__(self, policy: LearnedAgent, settings: SearchSettings | None = None,
                 seed: int | None = None, name: str = "champion-search") -> None:
        self.policy = policy
        self.settings = settings or SearchSettings()
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.history = OpponentPlays()
        prior = self.settings.standard_prior
        self.styles = OpponentStyles(prior) if prior > 0 else None
        self.standard = StandardAgent() if prior > 0 else None
        self._tables = EXACT_TABLES if self.settings.exact_keep else MODEL_TABLES
        #: card -> the search's chance to win after laying it, at the last decision it searched
        #: (empty after the network's own throws and forced plays): the soft targets of expert
        #: iteration
        self.last_values: dict[int, float] = {}

    def reset(self) -> None:
        self.history.clear()
        if self.styles is not None:
            self.styles.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_cards(action_mask)
        view = decode(observation)
        self.history.update(view)
        self.last_values = {}
        if view.phase == Phase.DISCARD and self.styles is not None:
            self.styles.new_deal()
        if (view.phase == Phase.DISCARD and self.settings.discard_sims > 0 and legal.size > 1
                and self._discard_searched(view)):
            return self.discard(view, observation, action_mask)
        if (view.phase == Phase.DISCARD or legal.size == 1 or not self.settings.play
                or not _near_the_end(view, self.settings.play_need)
                or not _early_in_the_play(view, self.settings.play_until)):
            return self.policy.act(observation, action_mask)
        values = self.play_values(view, legal)
        self.last_values = {int(c): float(v) for c, v in zip(legal, values, strict=True)}
        best = values.max()
        close = legal[values >= best - self.settings.tolerance]
        if close.size == 1:
            return int(close[0])
        logits = self.policy.logits(observation, action_mask)
        return int(close[int(np.argmax(logits[close]))])

    def _discard_searched(self, view) -> bool:
        """Whether this deal's throw is searched (``discard_need``: only near the end)."""
        return _near_the_end(view, self.settings.discard_need)

    def discard(self, view, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The next card of the throw with the best chance to win over the sampled deals; throws
        within ``tolerance`` of it are decided by the network's logits. Each card's value (that
        of the best throw holding it) is left in ``last_values``."""
        thrown = list(view.discards)
        hand = [*view.hand, *thrown]
        throws = np.array([pair for pair in itertools.combinations(hand, DISCARDS_PER_PLAYER)
                           if set(thrown) <= set(pair)], dtype=np.int64)
        s = self.settings
        opponent = opponent_cards(view)._replace(held=KEEP_SIZE)  # the four it will keep
        position = discard_position(view.own_score, view.opp_score, view.target, view.is_dealer)
        deals = draw_deals(opponent, s.discard_sims, int(self.rng.integers(2**31 - 1)), s.model,
                           not view.is_dealer, self._tables)
        values = throw_values(position, np.array(hand, dtype=np.int64), throws, *deals,
                              win_table(view.target)).mean(axis=1)
        by_card = card_values(throws, values)
        self.last_values = {int(c): by_card[int(c)] for c in legal_cards(action_mask)}
        logits = self.policy.logits(observation, action_mask)
        close = np.flatnonzero(values >= values.max() - s.tolerance)
        left = [[c for c in throws[t] if c not in thrown] for t in close]
        chosen = max(range(close.size), key=lambda i: sum(logits[c] for c in left[i]))
        return int(max(left[chosen], key=lambda c: logits[c]))

    def play_values(self, view, legal: np.ndarray) -> np.ndarray:
        """Each legal card's weighted mean chance to win over the sampled deals."""
        started = time.perf_counter()
        s = self.settings
        seed = int(self.rng.integers(2**31 - 1))
        opponent = opponent_cards(view)
        kept, discards = draw_opponents(opponent, s.sims, seed, s.model, not view.is_dealer,
                                        self._tables)
        weights = self._weights(view, kept, discards)
        position = play_position(view)
        wins = win_table(view.target)
        candidates = np.asarray(legal, dtype=np.int64)
        chunk = BUDGET_CHUNK if s.budget_ms > 0 else s.sims
        value = self._answered_values if s.reply else self._solved_values
        total = np.zeros(candidates.size)
        mass = 0.0
        for start in range(0, s.sims, chunk):
            stop = min(start + chunk, s.sims)
            values = value(position, candidates, kept[start:stop], discards[start:stop],
                           opponent.played.size, wins, weights[start:stop])
            total += values @ weights[start:stop]
            mass += weights[start:stop].sum()
            if s.budget_ms > 0 and (time.perf_counter() - started) * 1e3 >= s.budget_ms:
                break
        return total / mass

    @staticmethod
    def _solved_values(position: np.ndarray, candidates: np.ndarray, kept: np.ndarray,
                       discards: np.ndarray, n_laid: int, wins: np.ndarray,
                       weights: np.ndarray) -> np.ndarray:
        return solved_values(position, candidates, kept, discards, n_laid, wins)

    def _answered_values(self, position: np.ndarray, candidates: np.ndarray, kept: np.ndarray,
                         discards: np.ndarray, n_laid: int, wins: np.ndarray,
                         weights: np.ndarray) -> np.ndarray:
        """``sampling.solved_values`` with the opponent's choices in the next ``reply`` cards
        from the network (with ``infoset``, the player's by information set over ``weights``)."""
        rows = after_candidates(position, candidates, kept, discards, n_laid)
        s = self.settings
        n = kept.shape[0]
        # the player has a card to choose inside the answered cards only from the second on
        # (reply above 1), and with own the network chooses it
        per_set = ({"groups": np.repeat(np.arange(candidates.size), n),
                    "weights": np.tile(weights, candidates.size)}
                   if s.infoset and s.reply > 1 and not s.own else {})
        return answered_values(rows, s.reply, wins, self._network_policy, s.reply_prune,
                               s.own, **per_set).reshape(candidates.size, n)

    def _network_policy(self, rows: np.ndarray, obs: np.ndarray,
                        masks: np.ndarray) -> np.ndarray:
        """The card probabilities of the seat to move in each row, with one forward pass: for
        the opponent the network's in its seat of each sampled deal (with ``standard_prior``, mixed
        with standard's card by the styles' probabilities); for the player (``own``) the card of
        highest logit, as ``LearnedAgent`` lays it."""
        logits = self.policy.logits_batch(obs, masks)
        probs = legal_softmax(logits, masks, self.settings.reply_temperature)
        player = rows[:, TO_MOVE] == 0
        if player.any():
            best = legal_argmax(logits[player], masks[player])
            probs[player] = 0.0
            probs[np.flatnonzero(player), best] = 1.0
        theirs = ~player
        if self.styles is None or not theirs.any():
            return probs
        probs[theirs] = self.styles.answers(probs[theirs],
                                            self.standard.act_batch(obs[theirs], masks[theirs]))
        return probs

    def _weights(self, view, kept: np.ndarray, discards: np.ndarray) -> np.ndarray:
        history = self.history.arrays()
        n = len(kept)
        if self.settings.floor >= 1.0 or history.card.size == 0:
            return np.ones(n)
        obs, masks, chosen = new_rows(n * history.card.size)
        informative = opponent_observations(kept, discards, history, view.starter,
                                            not view.is_dealer, view.opp_score, view.own_score,
                                            view.target, obs, masks, chosen)
        if not informative.any():
            return np.ones(n)
        obs, masks, chosen = obs[informative], masks[informative], chosen[informative]
        weights = play_likelihood(self.policy.logits_batch(obs, masks), masks, chosen, informative,
                                  n, self.settings.floor, self.settings.temperature)
        if self.styles is not None:
            as_standard = self.standard.act_batch(obs, masks)
            standard = choice_likelihood((as_standard == chosen).astype(float), informative, n,
                                         self.settings.standard_floor)
            weights = self.styles.sample_weights(np.stack([weights, standard]))
        return weights if weights.sum() > 0 else np.ones(n)


def _near_the_end(view, need: int) -> bool:
    """Whether either player is within ``need`` points of the target (always with 0)."""
    return need == 0 or near_the_end(view.target - view.own_score, view.target - view.opp_score,
                                     need)


def _early_in_the_play(view, until: int) -> bool:
    """Whether fewer than ``until`` cards have been laid in the deal's play (always with 0)."""
    return until == 0 or len(view.played_own) + len(view.played_opp) < until


def load_search_agent(path: str | Path, settings: SearchSettings | None = None,
                      seed: int | None = None) -> ChampionSearchAgent:
    """The search over the network of the checkpoint at ``path``."""
    from ..learned import load_learned_agent

    return ChampionSearchAgent(load_learned_agent(path, seed=seed), settings, seed)
