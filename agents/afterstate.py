"""A network that scores each candidate card by the position it leaves: ``AfterstateNet``.

In cribbage the player's own move changes the position in a way the player can see in full: a
discard moves a card from the hand to the crib, a card laid joins the count sequence. So the value
of a move is best learned as the value of the position right after it (the "afterstate"), read from
the observation with the card moved. Two moves that leave the same kept four, or the same count
sequence, then share what is learned about them, which a network with one output per card id has to
learn 52 times.

Each candidate (every card in the hand: the legal ones are among them) is encoded from the
observation alone:

* every card set after the move (hand, own discards, starter, own and opponent's played cards,
  unseen cards) as its multi-hot row, its rank counts and its suit counts (a fixed projection,
  the weight sharing that makes a five of hearts teach about a five of spades);
* the count sequence after the move, newest card first, as ranks by position;
* the count after the move and the observation's scalars (phase, dealer, scores, target,
  opponent's cards left, go).

An MLP maps that to one number per candidate. As a policy network it returns the usual 52 outputs
plus one: each hand card's score (``NOT_A_CANDIDATE`` for the other cards, which are never legal)
and, last, the best candidate's score (the state's value under greedy play). No decision feature
and no rule of thumb goes in: the network starts from the observation only.
"""

from __future__ import annotations

import torch
from torch import nn

from crib_env.cards import N_CARDS, N_RANKS, N_SUITS, RANK, SUIT, VALUE
from crib_env.game import Phase
from crib_env.observation import COUNT_SCALE, MAX_SEQUENCE, OBS_SIZE, SEEN_SETS, SLICES, phase_column

#: the output of cards that are not in the hand (never legal, so never chosen)
NOT_A_CANDIDATE = -1.0e4
_SCALARS = ("phase", "is_dealer", "scores", "target", "opp_cards_left", "opp_said_go")
_SCALAR_WIDTH = sum(SLICES[n].stop - SLICES[n].start for n in _SCALARS)
#: per card set: multi-hot, rank counts, suit counts
_SET_WIDTH = N_CARDS + N_RANKS + N_SUITS
#: the five observed sets and the unseen cards, the sequence by recency, the count, the scalars
INPUT_WIDTH = (len(SEEN_SETS) + 1) * _SET_WIDTH + MAX_SEQUENCE * N_RANKS + 1 + _SCALAR_WIDTH


class AfterstateNet(nn.Module):
    """Scores each hand card by the afterstate it leaves (see the module docstring).

    Moving one card changes the input row linearly: the row of the position with the sequence
    already shifted for a card laid ("base"), plus a term that depends only on the card and on
    whether it is discarded or laid. So the first layer runs once per position and once per
    (card, phase) pair; only the layers after it run per candidate. ``encode`` builds the full
    rows the slow way, which the tests compare against.
    """

    def __init__(self, features: bool = False, hidden: int = 256, layers: int = 3) -> None:
        super().__init__()
        if features:
            raise ValueError("the afterstate network reads the observation only (features: false)")
        self.features = False
        ranks = torch.zeros(N_CARDS, N_RANKS)
        ranks[torch.arange(N_CARDS), torch.tensor(RANK)] = 1.0
        suits = torch.zeros(N_CARDS, N_SUITS)
        suits[torch.arange(N_CARDS), torch.tensor(SUIT)] = 1.0
        self.register_buffer("card_ranks", ranks, persistent=False)
        self.register_buffer("card_suits", suits, persistent=False)
        self.register_buffer("card_values", torch.tensor(VALUE, dtype=torch.float32),
                             persistent=False)
        self.first = nn.Linear(INPUT_WIDTH, hidden)
        rest: list[nn.Module] = [nn.ReLU()]
        for _ in range(layers - 1):
            rest += [nn.Linear(hidden, hidden), nn.ReLU()]
        self.rest = nn.Sequential(*rest, nn.Linear(hidden, 1))
        eye = torch.eye(N_CARDS)
        moves = torch.stack([self._rows(torch.zeros(N_CARDS, OBS_SIZE), eye, playing)
                             - self._rows(torch.zeros(N_CARDS, OBS_SIZE), 0 * eye, playing)
                             for playing in (0.0, 1.0)])
        self.register_buffer("move_rows", moves, persistent=False)  # (2, 52, INPUT_WIDTH)

    # -- encoding ------------------------------------------------------------------------------

    def _set_block(self, bits: torch.Tensor) -> torch.Tensor:
        return torch.cat([bits, bits @ self.card_ranks, bits @ self.card_suits], dim=-1)

    def _rows(self, obs: torch.Tensor, move: torch.Tensor, playing: torch.Tensor | float
              ) -> torch.Tensor:
        """Input rows (N, INPUT_WIDTH) for observations (N, OBS_SIZE) after moving the card in
        the one-hot ``move`` (N, 52) (all zero: no card moved, sequence shifted if playing);
        ``playing`` is 1 where the card is laid in the play, 0 where it is discarded."""
        playing = torch.as_tensor(playing, dtype=obs.dtype).reshape(-1, 1) \
            .expand(obs.shape[0], 1)
        sets = {n: obs[:, SLICES[n]] for n in SEEN_SETS}
        sets["hand"] = sets["hand"] - move
        sets["discards"] = sets["discards"] + move * (1.0 - playing)
        sets["played_own"] = sets["played_own"] + move * playing
        seen = sum(sets.values()).clamp(max=1.0)
        blocks = [self._set_block(sets[n]) for n in SEEN_SETS]
        blocks.append(self._set_block(1.0 - seen))
        seq = obs[:, SLICES["sequence"]].reshape(-1, MAX_SEQUENCE, N_CARDS)
        blocks.append(self._recent_ranks(seq, move @ self.card_ranks, playing))
        blocks.append(obs[:, SLICES["count"]] + playing * (move @ self.card_values)[:, None]
                      / COUNT_SCALE)
        blocks.append(torch.cat([obs[:, SLICES[n]] for n in _SCALARS], dim=1))
        return torch.cat(blocks, dim=-1)

    def _recent_ranks(self, seq: torch.Tensor, laid: torch.Tensor,
                      playing: torch.Tensor) -> torch.Tensor:
        """Ranks of the count sequence after the move, newest first: (N, MAX_SEQUENCE * 13);
        ``laid`` (N, 13) is the rank of the card laid (used where ``playing``)."""
        ranks = seq @ self.card_ranks  # (N, 8, 13), oldest first, zero rows past the end
        length = seq.sum(dim=(1, 2)).long()
        # Position p from the newest card of the old sequence is index length - 1 - p.
        pos = length[:, None] - 1 - torch.arange(MAX_SEQUENCE, device=seq.device)[None, :]
        old = torch.gather(ranks, 1, pos.clamp(min=0)[..., None].expand(-1, -1, N_RANKS))
        old = old * (pos >= 0)[..., None].to(ranks.dtype)
        shifted = torch.cat([laid[:, None, :], old[:, :-1, :]], dim=1)
        after = torch.where(playing[..., None] > 0, shifted, old)
        return after.reshape(-1, MAX_SEQUENCE * N_RANKS)

    def encode(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        """Full input rows (B, K, INPUT_WIDTH) for candidate cards (B, K)."""
        batch, k = cards.shape
        obs = obs[:, :OBS_SIZE].repeat_interleave(k, dim=0)
        move = nn.functional.one_hot(cards.reshape(-1), N_CARDS).to(obs.dtype)
        return self._rows(obs, move, _playing(obs)).reshape(batch, k, INPUT_WIDTH)

    # -- scores --------------------------------------------------------------------------------

    def _pair_scores(self, obs: torch.Tensor, rows: torch.Tensor, cards: torch.Tensor
                     ) -> torch.Tensor:
        """Scores of the (row, card) pairs: first layer once per row, then per pair."""
        playing = _playing(obs)
        base = self.first(self._rows(obs, torch.zeros_like(obs[:, :N_CARDS]), playing))
        moves = self.move_rows @ self.first.weight.T  # (2, 52, hidden): first layer of a move
        z = base[rows] + moves[playing[rows].long(), cards]
        return self.rest(z).squeeze(-1)

    def score(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        """The score of laying (or discarding) each of ``cards`` (B, K) -> (B, K)."""
        obs = obs[:, :OBS_SIZE]
        batch, k = cards.shape
        rows = torch.arange(batch, device=obs.device).repeat_interleave(k)
        return self._pair_scores(obs, rows, cards.reshape(-1)).reshape(batch, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        obs = x[:, :OBS_SIZE]
        rows, cards = obs[:, SLICES["hand"]].nonzero(as_tuple=True)
        scores = self._pair_scores(obs, rows, cards)
        out = torch.full((obs.shape[0], N_CARDS + 1), NOT_A_CANDIDATE, dtype=obs.dtype,
                         device=obs.device)
        out[rows, cards] = scores
        best = torch.full((obs.shape[0],), NOT_A_CANDIDATE, dtype=obs.dtype, device=obs.device)
        out[:, N_CARDS] = best.scatter_reduce(0, rows, scores, reduce="amax")
        return out


def _playing(obs: torch.Tensor) -> torch.Tensor:
    """1.0 for rows in the play phase (a card moved is laid), else 0.0 (discarded)."""
    return obs[:, phase_column(Phase.PLAY)]
