"""The policy networks and their input rows: what ``LearnedAgent`` plays and training fits.

A network maps the input row (the observation, then the flattened ``card_features`` block when the
checkpoint uses them) to 53 numbers: 52 action logits (one per card id) and the state value.
``ARCHITECTURES`` names the networks a checkpoint may hold (``pool``: several of them, their outputs
averaged); ``build_network`` builds one with its sizes checked first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from crib_env.cards import MAX_VALUE, N_CARDS, N_RANKS, N_SUITS, RANK, SUIT, VALUE
from crib_env.game import Phase
from crib_env.observation import (
    COUNT_SCALE,
    MAX_SEQUENCE,
    OBS_SIZE,
    SCORE_SCALE,
    SEEN_SETS,
    SLICES,
    phase_column,
)
from crib_env.rules import count_after, count_restarts, fifteen_points, fits, thirty_one_points
from crib_env.scoring import score_hands
from crib_env.symmetry import SUIT_ORDERS

from .afterstate import AfterstateNet
from .card_features import FEATURE_NAMES, N_CARD_FEATURES, PEG_POINTS_SCALE, card_features, crib_table
from .card_features_kernels import card_features_batch
from .reader import HandReader

ACTION_N = N_CARDS
OUTPUT_SIZE = ACTION_N + 1  # 52 logits, then the value

#: the remaining (scalar) slices, fed to the context network
SCALAR_SLICES = ("count", "phase", "is_dealer", "scores", "target", "opp_cards_left", "opp_said_go")


def input_size(features: bool) -> int:
    """Length of a network's input row."""
    return OBS_SIZE + (N_CARDS * N_CARD_FEATURES if features else 0)


def network_input(observation: np.ndarray, action_mask: np.ndarray, features: bool) -> np.ndarray:
    """The input row for one decision: the observation, then its card features if used."""
    obs = np.asarray(observation, dtype=np.float32)
    if not features:
        return obs
    return np.concatenate([obs, card_features(obs, action_mask).reshape(-1)])


def network_input_batch(observations: np.ndarray, action_masks: np.ndarray,
                        features: bool) -> np.ndarray:
    """The input rows of many decisions, (k, input_size(features)) float32: ``network_input`` of
    every row, the card features computed for all rows in one compiled call. Always a new array
    (torch may take it over without copying)."""
    obs = np.array(observations, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (rows, {OBS_SIZE}), got {obs.shape}")
    if not features:
        return obs
    block = card_features_batch(obs, action_masks).reshape(len(obs), -1)
    return np.concatenate([obs, block], axis=1)


#: attention heads per block of ``CardNet(attention=...)``
ATTENTION_HEADS = 4
#: the logit of a card the player cannot see (never legal: every legal card is in the hand)
UNSEEN_LOGIT = -1e9


def _take_cards(per_card: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
    """Rows ``slot`` (B, K) of a per-card tensor (B, 52, F): (B, K, F)."""
    return torch.gather(per_card, 1, slot[..., None].expand(-1, -1, per_card.shape[2]))


class CardNet(nn.Module):
    """A policy built for cards: every card id is a token.

    Each of the 52 tokens holds where that card is (the observation's card-set slices and its place
    in the count sequence, or unseen), a shared rank and suit embedding, its counting value and, if
    used, its decision features. A token MLP encodes them; pooled token sets (hand, sequence, played,
    discards + starter) and the scalar slices form the context. Each card's logit is read from its
    own token next to the context, so what is learned about one card transfers to all of them.

    ``attention`` > 0 adds that many self-attention blocks over the known cards' tokens before the
    pools: a card's logit can then depend on the other cards one by one (the pair it keeps back,
    the card that makes a run with it), which the pooled context only sums up.

    ``need`` > 0 gives the context each player's points to go as ``need`` steps (step k: within k
    points of the target) and, with features, each token whether the card pegs out now. From the
    scores alone (each over ``SCORE_SCALE``) one point to go is a difference of 0.008, while near
    the end of the game one point decides. These inputs come last, so a network without them
    widens into one with them by zero weights for the new inputs (``widen_into``): the same
    function, to fit from.

    ``reader`` holds a frozen ``agents.reader.HandReader``: what the opponent's plays say about its
    hand, learned from the hidden cards of many games, which the policy's own labels are too few
    to teach. The context gets, after the points to go, how many of each rank the opponent is
    expected to hold (the reader's chances summed by rank), and each legal card of the play, last
    in its token, how many of the opponent's cards are expected to pair it, make fifteen after it
    and make 31 after it (``READ_REPLIES``). Widening adds these inputs the same way (the
    reader's weights come from its own file).

    ``show`` (with ``need``) tells the context, in the play, what its own show will be: the kept
    four with the starter, scored by ``crib_env.scoring``, the crib's expected points by the ranks
    of its own two discards (``agents.card_features.crib_table``, as the dealer; 0 as the pone),
    and steps of its points to go less its hand (step k, for k = 0 .. ``need``: the hand leaves
    at most k to go; step 0: it counts out). Near the end of the game whether a hand counts out
    decides how to play, and working a show score out of the card tokens is a lot to ask of a
    few hundred thousand labels. These inputs come after the others (widened into the same way).

    ``symmetric`` makes the network the mean of its outputs (logits and value, as a pool takes
    them) over the 24 relabelings of the suits. The game is the same under any relabeling (only
    whether cards share a suit ever scores), so the best policy is too; a network's suit
    embeddings treat the four suits apart, which lets it read an opponent's habits tied to the
    suits' names (the scripted agents lay the lowest card id among equal cards) and, where two
    cards' logits are close, lets an arbitrary difference pick the card. Relabeling the suits of
    every card in the observation is the same as permuting the rows of the suit embedding (the
    features and the show inputs are computed from the real cards and do not change), so the
    mean takes one forward pass of a 24-times larger batch and adds no weights: any fitted
    network can be made symmetric as it is.
    """

    def __init__(self, features: bool = True, hidden: int = 64, context: int = 128,
                 embed: int = 16, prior: bool = False, attention: int = 0, need: int = 0,
                 reader: bool = False, show: bool = False, symmetric: bool = False) -> None:
        super().__init__()
        self.features = features
        if symmetric and reader:
            raise ValueError("symmetric: the reader reads the observation's suits as they are, "
                             "so relabeling the suit embedding is not relabeling its input")
        self.symmetric = symmetric
        if symmetric:  # (24, 52): the suit of each card under each relabeling
            self.register_buffer("relabeled_suit",
                                 torch.from_numpy(SUIT_ORDERS[:, np.array(SUIT)]),
                                 persistent=False)
        self.need = need
        self.show = show
        if show and not need:
            raise ValueError("show: its steps are counted like the points to go: give need > 0")
        if show:
            self.register_buffer("crib_points", torch.tensor(crib_table(), dtype=torch.float32),
                                 persistent=False)
            self.register_buffer("show_steps", torch.arange(0, need + 1, dtype=torch.float32),
                                 persistent=False)
        # Fitted apart on games' hidden cards and frozen: the policy's fits must not unlearn it.
        if reader and not features:
            raise ValueError("reader: the reading of each legal card needs features: true")
        self.reader = HandReader().requires_grad_(False) if reader else None
        if reader:
            value_id = torch.tensor(VALUE, dtype=torch.long)
            self.register_buffer("value_id", value_id, persistent=False)
            # one-hot by card: the reader's chances summed by rank and by counting value
            self.register_buffer("rank_of_card", nn.functional.one_hot(
                torch.tensor(RANK), N_RANKS).float(), persistent=False)
            self.register_buffer("value_of_card", nn.functional.one_hot(
                value_id, MAX_VALUE + 1).float(), persistent=False)
            self.register_buffer("reply_table", reply_table(), persistent=False)
        n_feat = N_CARD_FEATURES if features else 0
        n_pegs_out = 1 if need and features else 0
        self.register_buffer("rank_id", torch.tensor(RANK, dtype=torch.long), persistent=False)
        self.register_buffer("suit_id", torch.tensor(SUIT, dtype=torch.long), persistent=False)
        self.register_buffer("value", torch.tensor(VALUE, dtype=torch.float32) / MAX_VALUE,
                             persistent=False)
        self.rank_embed = nn.Embedding(N_RANKS, embed)
        self.suit_embed = nn.Embedding(N_SUITS, embed)
        token_in = (len(SEEN_SETS) + MAX_SEQUENCE + 1 + 2 * embed + 1 + n_feat + n_pegs_out
                    + (len(READ_REPLIES) if reader else 0))
        self.register_buffer("steps", torch.arange(1, need + 1, dtype=torch.float32),
                             persistent=False)
        self.token = nn.Sequential(nn.Linear(token_in, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(hidden, ATTENTION_HEADS, dim_feedforward=2 * hidden,
                                       dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(attention))
        n_scalar = sum(SLICES[name].stop - SLICES[name].start for name in SCALAR_SLICES)
        n_read = N_RANKS if reader else 0
        n_show = 2 + need + 1 if show else 0
        self.context = nn.Sequential(nn.Linear(n_scalar + 4 * hidden + 2 * need + n_read + n_show,
                                               context),
                                     nn.ReLU(),
                                     nn.Linear(context, context), nn.ReLU())
        # The logit MLP's first layer over [token, context], split in two so the context half is
        # computed once per row instead of once per card.
        self.logit_token = nn.Linear(hidden, hidden)
        self.logit_context = nn.Linear(context, hidden)
        self.logit_out = nn.Linear(hidden, 1)
        self.feature_logit = nn.Linear(n_feat, 1) if features else None
        if prior and features:
            self._init_prior()
        self.value_head = nn.Sequential(nn.Linear(context, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def _init_prior(self) -> None:
        """Start the linear feature head from a card player's rule of thumb: about 3 logits per
        expected point of the discard (hand + signed crib) and per point pegged now, less 80% of
        the opponent's expected reply and a little for leaving the count on 5 or 21. PPO refines
        it from there; only the initial weights change, never the architecture."""
        assert self.feature_logit is not None
        with torch.no_grad():
            self.feature_logit.weight.zero_()
            self.feature_logit.bias.zero_()
            weight = self.feature_logit.weight[0]
            for name, value in (("total_ev", 30.0), ("peg_points", 12.0),
                                ("reply_mean", -4.8), ("leaves_5_21", -1.0)):
                weight[FEATURE_NAMES.index(name)] = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.symmetric:
            return self._forward(x, None)
        n = self.relabeled_suit.shape[0]
        out = self._forward(x.repeat_interleave(n, 0),
                            torch.arange(n, device=x.device).repeat(x.shape[0]))
        return out.view(x.shape[0], n, -1).mean(1)

    def _forward(self, x: torch.Tensor, relabeling: torch.Tensor | None) -> torch.Tensor:
        """The outputs of the rows ``x``, row i with its suits relabeled by
        ``relabeled_suit[relabeling[i]]`` (None: as they are)."""
        batch = x.shape[0]
        obs = x[:, :OBS_SIZE]
        sets = torch.stack([obs[:, SLICES[name]] for name in SEEN_SETS], dim=2)  # (B, 52, 5)
        seq = obs[:, SLICES["sequence"]].reshape(batch, MAX_SEQUENCE, N_CARDS).transpose(1, 2)
        unseen = 1.0 - (sets.sum(2) + seq.sum(2)).clamp(max=1.0)
        # An unseen card's token reaches no pool and its logit is never legal (legal cards are in
        # the hand), so only the known cards are encoded (at most 11 of the 52: own six, the
        # starter, the opponent's four played): the same function on every legal logit and the
        # value, at well under half the work.
        n_known = max(1, int((unseen < 0.5).sum(1).max()))
        slot = torch.argsort(unseen, dim=1, stable=True)[:, :n_known]  # (B, K): known cards first
        sets, seq, unseen = (_take_cards(t, slot) for t in (sets, seq, unseen[..., None]))
        if relabeling is None:
            ident = torch.cat([self.rank_embed(self.rank_id), self.suit_embed(self.suit_id),
                               self.value[:, None]], dim=1)[slot]
        else:
            suits = self.relabeled_suit[relabeling[:, None], slot]  # (B, K)
            ident = torch.cat([self.rank_embed(self.rank_id[slot]), self.suit_embed(suits),
                               self.value[slot][..., None]], dim=2)
        parts = [sets, seq, unseen, ident]
        feats = None
        if self.features:
            feats = _take_cards(x[:, OBS_SIZE:].reshape(batch, N_CARDS, N_CARD_FEATURES), slot)
            parts.append(feats)
        if self.need:
            to_go = points_to_go(obs)  # (B, 2): own, opponent's
            if feats is not None:
                pegged = feats[..., _PEG_POINTS:_PEG_POINTS + 1] * PEG_POINTS_SCALE
                parts.append((pegged >= to_go[:, None, :1] - 0.5).to(feats.dtype))
        if self.reader is not None:
            probs = self.reader.probabilities(obs)
            by_rank = probs @ self.rank_of_card  # (B, 13): the opponent's expected ranks
            parts.append(self._read_replies(obs, feats, slot, by_rank, probs @ self.value_of_card))
        tokens = self.token(torch.cat(parts, dim=2))  # (B, K, H)
        if len(self.blocks):
            ignore = unseen[..., 0] > 0.5  # padding slots of rows with fewer known cards
            ignore[:, 0] &= ~ignore.all(1)  # a row must attend to something
            for block in self.blocks:
                tokens = block(tokens, src_key_padding_mask=ignore)

        def pool(weight: torch.Tensor) -> torch.Tensor:
            return (tokens * weight[..., None]).sum(1) / (weight.sum(1, keepdim=True) + 1.0)

        in_seq = seq.sum(2)
        pools = [pool(sets[..., 0]), pool(in_seq), pool(sets[..., 3] + sets[..., 4]),
                 pool(sets[..., 1] + sets[..., 2])]
        scalars = torch.cat([obs[:, SLICES[name]] for name in SCALAR_SLICES], dim=1)
        extra = []
        if self.need:
            extra = [(to_go[:, :, None] <= self.steps + 0.5).flatten(1).to(scalars.dtype)]
        if self.reader is not None:
            extra.append(by_rank)
        if self.show:
            extra.append(self._show_inputs(obs, to_go).to(scalars.dtype))
        ctx = self.context(torch.cat([scalars, *pools, *extra], dim=1))
        hidden = torch.relu(self.logit_token(tokens) + self.logit_context(ctx)[:, None, :])
        known_logits = self.logit_out(hidden).squeeze(2)
        if feats is not None:
            known_logits = known_logits + self.feature_logit(feats).squeeze(2)
        logits = torch.full((batch, N_CARDS), UNSEEN_LOGIT, dtype=known_logits.dtype,
                            device=known_logits.device).scatter(1, slot, known_logits)
        return torch.cat([logits, self.value_head(ctx)], dim=1)

    def _show_inputs(self, obs: torch.Tensor, to_go: torch.Tensor) -> torch.Tensor:
        """(B, 3 + need) in the play, zero elsewhere: the own show over ``SHOW_SCALE``, the
        dealer's expected crib over ``CRIB_SCALE`` and the steps of the points to go less the
        show (see the class)."""
        play = obs[:, _PLAY_PHASE:_PLAY_PHASE + 1]
        # In the play the cards held and the cards laid are the kept four; the starter is cut.
        kept = torch.topk(obs[:, SLICES["hand"]] + obs[:, SLICES["played_own"]], 4, dim=1).indices
        starter = obs[:, SLICES["starter"]].argmax(1)
        points = score_hands(kept.cpu().numpy(), starter.cpu().numpy())
        show = torch.as_tensor(points, dtype=torch.float32, device=obs.device)[:, None] * play
        thrown = self.rank_id[torch.topk(obs[:, SLICES["discards"]], 2, dim=1).indices]
        crib = self.crib_points[thrown[:, 0], thrown[:, 1]][:, None] \
            * obs[:, _IS_DEALER:_IS_DEALER + 1] * play
        steps = (to_go[:, :1] - show <= self.show_steps + 0.5).to(show.dtype) * play
        return torch.cat([show / SHOW_SCALE, crib / CRIB_SCALE, steps], dim=1)

    def _read_replies(self, obs: torch.Tensor, feats: torch.Tensor, slot: torch.Tensor,
                      by_rank: torch.Tensor, by_value: torch.Tensor) -> torch.Tensor:
        """(B, K, 3) for each legal card of the play: how many of the opponent's cards (by the
        reader) would pair it, make fifteen after it, and make thirty-one after it (0 where the
        count restarts after it)."""
        count = torch.round(feats[..., _NEW_COUNT] * COUNT_SCALE).long().clamp(0, _TOP_COUNT)
        answers = self.reply_table[count]  # (B, K, values, 4): see reply_table
        fits_own = answers[..., 0].gather(2, self.value_id[slot][..., None]).squeeze(2)
        pairs = by_rank.gather(1, self.rank_id[slot]) * fits_own
        sums = (answers[..., 1:3] * by_value[:, None, :, None]).sum(2)  # fifteen, thirty-one
        asked = (feats[..., _LEGAL] > 0.5) & (obs[:, _PLAY_PHASE:_PLAY_PHASE + 1] > 0.5) \
            & (answers[..., 0, 3] < 0.5)
        return torch.cat([pairs[..., None], sums], dim=2) * asked[..., None].to(sums.dtype)


def reply_table() -> torch.Tensor:
    """(counts, values, 4) float, by the running count after a card (0 .. the highest count) and
    the counting value of an answer to it (0: none): whether the answer may be laid, whether it
    makes fifteen, whether it makes 31, and whether the count restarts instead (the same for
    every value), all from ``crib_env.rules``."""
    table = torch.zeros(_TOP_COUNT + 1, MAX_VALUE + 1, 4)
    for count in range(_TOP_COUNT + 1):
        table[count, :, 3] = float(count_restarts(count))
        for value in range(1, MAX_VALUE + 1):
            after = count_after(count, value)
            table[count, value, :3] = torch.tensor([
                fits(count, value), fifteen_points(after) > 0, thirty_one_points(after) > 0])
    return table


class MlpNet(nn.Module):
    """The plain baseline: an MLP over the flat input row, with a logit and a value head."""

    def __init__(self, features: bool = False, hidden: int = 256, layers: int = 2) -> None:
        super().__init__()
        self.features = features
        dims = [input_size(features)] + [hidden] * layers
        body: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(hidden, OUTPUT_SIZE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


#: the most networks one ``LogitPool`` holds
MAX_MEMBERS = 16


class LogitPool(nn.Module):
    """Several networks that read the same input row, pooled: each output is the weighted mean of
    theirs (the weights sum to 1). Its legal-card softmax is their softmaxes multiplied, each
    raised to its weight (a log-linear pool), so it lays the card they agree on; one forward pass
    of each member. ``members``: each a ``{"arch", "arch_kwargs"}`` of ``ARCHITECTURES`` (pools
    do not nest), all with this pool's ``features``. The members may be weighed apart by the
    situation the input row shows, so one network can throw or finish the game while others play:
    ``endgame_weights`` once either player is within ``endgame_need`` points of the target (every
    decision there), else ``discard_weights`` on the discards (the row's phase), else
    ``weights``; a weight may then be 0 in some of them."""

    def __init__(self, features: bool, members: list[dict[str, Any]], weights: list[float],
                 discard_weights: list[float] | None = None,
                 endgame_weights: list[float] | None = None, endgame_need: int = 0) -> None:
        super().__init__()
        check_pool(features, members, weights, discard_weights, endgame_weights, endgame_need)
        self.features = features
        self.members = nn.ModuleList(build_network(m["arch"], **m.get("arch_kwargs", {}))
                                     for m in members)
        self.weights = _shares(weights)
        self.discard_weights = None if discard_weights is None else _shares(discard_weights)
        self.endgame_weights = None if endgame_weights is None else _shares(endgame_weights)
        self.endgame_need = endgame_need

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs = [member(x) for member in self.members]

        def mixed(weights: list[float]) -> torch.Tensor:
            return sum(w * out for w, out in zip(weights, outputs, strict=True))

        pooled = mixed(self.weights)
        if self.discard_weights is not None:
            discarding = x[:, _DISCARD_PHASE:_DISCARD_PHASE + 1] > 0.5
            pooled = torch.where(discarding, mixed(self.discard_weights), pooled)
        if self.endgame_weights is not None:
            pooled = torch.where(near_the_end(x, self.endgame_need), mixed(self.endgame_weights),
                                 pooled)
        return pooled


#: the input row's column that is 1 in the discard phase (the observation comes first)
_DISCARD_PHASE = phase_column(Phase.DISCARD)
_SCORES, _TARGET = SLICES["scores"].start, SLICES["target"].start
_PEG_POINTS = FEATURE_NAMES.index("peg_points")
_NEW_COUNT, _LEGAL = FEATURE_NAMES.index("new_count"), FEATURE_NAMES.index("legal")
_PLAY_PHASE = phase_column(Phase.PLAY)
_IS_DEALER = SLICES["is_dealer"].start
#: ``CardNet(show=True)`` scales: the most a show can score, and the crib table's unit
SHOW_SCALE, CRIB_SCALE = 29.0, 10.0
_TOP_COUNT = int(COUNT_SCALE)  # the highest running count
#: what ``CardNet(reader=True)`` tells each legal card of the play about the opponent's answers
READ_REPLIES = ("pairs_it", "makes_fifteen", "makes_thirty_one")


def points_to_go(obs: torch.Tensor) -> torch.Tensor:
    """(B, 2): the points each player (the row's own, then the opponent) still needs to win, from
    the observation's scores and target (each over ``SCORE_SCALE``)."""
    short = obs[:, _TARGET:_TARGET + 1] - obs[:, _SCORES:_SCORES + 2]
    return torch.round(short * SCORE_SCALE)  # whole points: the scaled scores are not exact


def near_the_end(x: torch.Tensor, need: int) -> torch.Tensor:
    """(B, 1): whether either player is within ``need`` points of the target in each input row
    (the observation's scores and target, each over ``SCORE_SCALE``): the tensor form of
    ``agents.endgame.near_the_end``."""
    return points_to_go(x).amin(dim=1, keepdim=True) <= need


def _shares(weights: list[float]) -> list[float]:
    return [float(w) / float(sum(weights)) for w in weights]


def check_pool(features: Any, members: Any, weights: Any, discard_weights: Any = None,
               endgame_weights: Any = None, endgame_need: Any = 0) -> None:
    """Refuse (``ValueError`` naming the problem) a pool's members or weights that do not
    describe 2..``MAX_MEMBERS`` networks with the pool's ``features`` and a positive weight each
    (with ``discard_weights`` or ``endgame_weights``: a weight of 0 or more in each list, some
    positive in each, every member weighed in one of them; ``endgame_need`` a positive number of
    points)."""
    if not isinstance(members, list) or not 2 <= len(members) <= MAX_MEMBERS:
        raise ValueError(f"members must be a list of 2..{MAX_MEMBERS} networks, got {members!r}")
    lists = [(name, values) for name, values in (
        ("weights", weights), ("discard_weights", discard_weights),
        ("endgame_weights", endgame_weights)) if name == "weights" or values is not None]
    zero_allowed = len(lists) > 1
    for name, values in lists:
        if not isinstance(values, list) or len(values) != len(members) or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool)
                and (0 <= w if zero_allowed else 0 < w) and w < float("inf") for w in values):
            kind = "number of 0 or more" if zero_allowed else "positive number"
            raise ValueError(f"{name} must be one {kind} per member, got {values!r}")
        if not sum(values) > 0:
            raise ValueError(f"{name} must not all be 0, got {values!r}")
    if zero_allowed and any(all(w == 0 for w in ws) for ws in
                            zip(*(values for _, values in lists), strict=True)):
        raise ValueError(f"a member has weight 0 in every one of "
                         f"{', '.join(f'{n} {v!r}' for n, v in lists)}: it would never be heard")
    if endgame_weights is not None and (
            not isinstance(endgame_need, int) or isinstance(endgame_need, bool)
            or endgame_need < 1):
        raise ValueError(f"endgame_need must be a positive whole number of points with "
                         f"endgame_weights, got {endgame_need!r}")
    for member in members:
        if not isinstance(member, dict) or member.get("arch") not in ARCHITECTURES \
                or member["arch"] == "pool" or not isinstance(member.get("arch_kwargs", {}), dict):
            raise ValueError(f"a pool member must be {{'arch': one of "
                             f"{', '.join(a for a in ARCHITECTURES if a != 'pool')}, "
                             f"'arch_kwargs': {{...}}}}, got {member!r}")
        if reads_features(member) != features:
            raise ValueError(f"a pool member reads features={not features}, the pool "
                             f"features={features}: its members must read the same input row")


#: architecture name -> (class, allowed keyword arguments); the only classes a checkpoint may name
ARCHITECTURES: dict[str, tuple[type[nn.Module], tuple[str, ...]]] = {
    "cards": (CardNet, ("features", "hidden", "context", "embed", "prior", "attention", "need",
                        "reader", "show", "symmetric")),
    "mlp": (MlpNet, ("features", "hidden", "layers")),
    "afterstate": (AfterstateNet, ("features", "hidden", "layers")),
    "pool": (LogitPool, ("features", "members", "weights", "discard_weights", "endgame_weights",
                         "endgame_need")),
}


#: the largest value each size keyword may take (the shipped networks use at most 256 wide and 3
#: layers): a checkpoint's ``meta.json`` asking for more is refused before anything is allocated
MAX_SIZES = {"hidden": 4096, "context": 4096, "embed": 1024, "layers": 16, "attention": 16,
             "need": 121}
#: the smallest: ``attention`` and ``need`` may be 0 (none), the others need at least 1
MIN_SIZES = {"hidden": 1, "context": 1, "embed": 1, "layers": 1, "attention": 0, "need": 0}


def check_sizes(kwargs: dict[str, Any]) -> None:
    """Refuse (``ValueError`` naming the field) a size keyword that is not a whole number within
    ``MIN_SIZES`` .. ``MAX_SIZES``, or a flag that is not true or false."""
    for name, value in kwargs.items():
        if name in MAX_SIZES:
            if isinstance(value, bool) or not isinstance(value, int) \
                    or not MIN_SIZES[name] <= value <= MAX_SIZES[name]:
                raise ValueError(f"{name} must be a whole number {MIN_SIZES[name]}.."
                                 f"{MAX_SIZES[name]}, got {value!r}")
        elif name in ("members", "weights", "discard_weights", "endgame_weights", "endgame_need"):
            continue  # a pool's: check_pool
        elif not isinstance(value, bool):  # features, prior
            raise ValueError(f"{name} must be true or false, got {value!r}")


#: the ``CardNet`` options whose inputs come last, so a network without them widens into one with
#: them (``widen_into``)
WIDENING_INPUTS = ("need", "reader", "show")


def widen_into(network: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Load ``state``, the weights of a network like ``network`` but with fewer inputs (a
    ``CardNet`` without ``need``), into ``network``: each tensor into the leading part of its
    wider one, the rest zero, so the wider network computes what the narrower one did. Raises
    ``ValueError`` naming the first tensor that is missing or larger than its place."""
    own = network.state_dict()
    if set(own) != set(state):
        raise ValueError(f"the weights name other tensors than the network's: "
                         f"{sorted(set(own) ^ set(state))[:3]}")
    widened = {}
    for name, place in own.items():
        theirs = state[name]
        if theirs.dim() != place.dim() or any(
                a > b for a, b in zip(theirs.shape, place.shape, strict=True)):
            raise ValueError(f"{name}: weights of shape {tuple(theirs.shape)} do not fit in "
                             f"{tuple(place.shape)}")
        tensor = torch.zeros_like(place)
        tensor[tuple(slice(0, n) for n in theirs.shape)] = theirs
        widened[name] = tensor
    network.load_state_dict(widened)


def with_reader(state: dict[str, torch.Tensor], reader_state: dict[str, torch.Tensor]
                ) -> dict[str, torch.Tensor]:
    """``state`` (a network's weights, with or without a reader) with the hand reader's weights
    ``reader_state`` in the reader's place: what ``widen_into`` loads into a ``CardNet(reader=True)``
    started from a network fitted without it."""
    kept = {k: v for k, v in state.items() if not k.startswith("reader.")}
    return {**kept, **{f"reader.{k}": v for k, v in reader_state.items()}}


def reads_features(spec: dict[str, Any]) -> bool:
    """Whether the network a spec or a checkpoint's meta describes (``{"arch_kwargs": {...}}``)
    reads the per-card features after the observation (``network_input``'s ``features``)."""
    return bool(spec.get("arch_kwargs", {}).get("features"))


def build_network(arch: str, **kwargs: Any) -> nn.Module:
    """Build the network ``arch`` (a key of ``ARCHITECTURES``) with its keyword arguments, each
    checked first (``check_sizes``)."""
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown policy architecture {arch!r}: use one of "
                         f"{', '.join(ARCHITECTURES)}")
    cls, allowed = ARCHITECTURES[arch]
    extra = sorted(set(kwargs) - set(allowed))
    if extra:
        raise ValueError(f"architecture {arch!r} takes {', '.join(allowed)}; got {', '.join(extra)}")
    check_sizes(kwargs)
    return cls(**kwargs)
