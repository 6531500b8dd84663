"""The hand reader: from one seat's observation alone, the chance that the opponent holds each card
the seat has not seen.

``HandReader`` is fitted on (observation, the opponent's held cards) pairs from played games
(``training.hand_reader``) and then frozen inside a ``CardNet(reader=True)``, which reads its
chances summed by rank (pegging depends on ranks alone) and as each legal card's expected
answers. A reader is saved as a folder: ``reader.pt`` (its weights) and ``meta.json``
(what it was fitted on and its held-out log-loss).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from crib_env.cards import N_CARDS
from crib_env.game import HAND_SIZE
from crib_env.observation import OBS_SIZE, OBSERVATION_VERSION, SEEN_SETS, SLICES

from .files import atomic_write, atomic_write_text

READER_HIDDEN = 256
READER_FILE = "reader.pt"
META_FILE = "meta.json"
_OPP_LEFT = SLICES["opp_cards_left"].start


def unseen_cards(obs: torch.Tensor) -> torch.Tensor:
    """(B, 52): 1 where the observation's seat has not seen the card."""
    seen = sum(obs[:, SLICES[name]] for name in SEEN_SETS)
    return (seen < 0.5).to(obs.dtype)


def uniform_probabilities(obs: torch.Tensor) -> torch.Tensor:
    """The reader that knows only which cards are unseen and how many the opponent holds: each
    unseen card's chance is their ratio."""
    unseen = unseen_cards(obs)
    held = torch.round(obs[:, _OPP_LEFT:_OPP_LEFT + 1] * HAND_SIZE)
    return unseen * held / unseen.sum(1, keepdim=True).clamp(min=1.0)


class HandReader(nn.Module):
    """An MLP over the observation that corrects the uniform reader: each card's logit is the
    uniform chance's logit plus the MLP's output (zero at the start, so a new reader is the
    uniform one); ``probabilities`` is each unseen card's chance to be in the opponent's hand (0
    for cards the seat has seen, and for every card when the opponent holds none)."""

    def __init__(self, hidden: int = READER_HIDDEN) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, N_CARDS))
        nn.init.zeros_(self.body[-1].weight)
        nn.init.zeros_(self.body[-1].bias)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, 52) logits; only the unseen cards' mean anything."""
        prior = uniform_probabilities(obs).clamp(1e-4, 1 - 1e-4)
        return torch.log(prior) - torch.log1p(-prior) + self.body(obs)

    def probabilities(self, obs: torch.Tensor) -> torch.Tensor:
        holds = obs[:, _OPP_LEFT:_OPP_LEFT + 1] > 0.5 / HAND_SIZE
        return torch.sigmoid(self(obs)) * unseen_cards(obs) * holds.to(obs.dtype)


def log_loss(probs: torch.Tensor, held: torch.Tensor, unseen: torch.Tensor) -> torch.Tensor:
    """Mean binary log-loss per unseen card of ``probs`` against the held cards."""
    p = probs.clamp(1e-6, 1 - 1e-6)
    loss = -(held * torch.log(p) + (1 - held) * torch.log(1 - p))
    return (loss * unseen).sum() / unseen.sum()


def save_reader(folder: str | Path, reader: HandReader, meta: dict) -> None:
    """Write ``reader`` and its ``meta`` (what it was fitted on, how well it reads) to ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / READER_FILE, lambda tmp: torch.save(reader.state_dict(), tmp))
    atomic_write_text(folder / META_FILE, json.dumps(
        {"kind": "hand_reader", "hidden": READER_HIDDEN,
         "observation_version": OBSERVATION_VERSION, **meta}, indent=2) + "\n")


def load_reader_state(path: str | Path) -> dict[str, torch.Tensor]:
    """A saved reader's weights; ``ValueError`` naming the problem if ``path`` holds none."""
    folder = Path(path)
    try:
        meta = json.loads((folder / META_FILE).read_text())
        state = torch.load(folder / READER_FILE, map_location="cpu", weights_only=True)
    except (OSError, ValueError, RuntimeError) as err:
        raise ValueError(f"{folder}: not a hand reader ({type(err).__name__}: {err})") from err
    if meta.get("kind") != "hand_reader" or meta.get("hidden") != READER_HIDDEN \
            or meta.get("observation_version") != OBSERVATION_VERSION:
        raise ValueError(f"{folder}: a hand reader needs kind hand_reader, hidden {READER_HIDDEN} "
                         f"and observation version {OBSERVATION_VERSION} in {META_FILE}")
    return state
