"""Learned agents: ``LearnedAgent`` plays a network (``agents.networks``) and
``load_learned_agent`` loads one from a checkpoint (``agents.checkpoint``), the agent behind
``make_agent(PATH)``. It plays the legal card with the highest logit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from .base import legal_cards
from .checkpoint import load_network
from .networks import ACTION_N, network_input, network_input_batch, reads_features


def legal_argmax(scores: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Each row's legal card of highest score (the first such card on ties)."""
    return np.argmax(np.where(masks > 0, scores, -np.inf), axis=1)


def legal_softmax(logits: np.ndarray, masks: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Softmax of each row's logits at ``temperature`` over the cards its mask allows."""
    z = np.where(masks > 0, logits.astype(np.float64) / temperature, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class LearnedAgent:
    """Plays a trained network: the legal card with the highest logit (or a sample, if
    ``deterministic=False``)."""

    def __init__(self, net: nn.Module, features: bool, name: str = "learned",
                 seed: int | None = None, deterministic: bool = True) -> None:
        self.net = net.eval()
        self.features = features
        self.name = name
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The 52 action logits for one decision (illegal cards included, unmasked)."""
        row = network_input(observation, action_mask, self.features)
        with torch.inference_mode():
            out = self.net(torch.from_numpy(row)[None])
        return out[0, :ACTION_N].numpy()

    stateless = True

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act`` on every row with one forward pass. Deterministic agents choose the same cards
        as row by row (up to the rounding of a batched matrix product on near ties); sampling
        agents draw from the same distributions but consume their random stream differently."""
        masks = np.asarray(action_masks)
        if masks.ndim != 2 or masks.shape[1] != ACTION_N:
            raise ValueError(f"action_masks must have shape (rows, {ACTION_N}), got {masks.shape}")
        if len(masks) == 0:
            return np.zeros(0, dtype=np.int64)
        if not masks.any(axis=1).all():
            raise ValueError("action_mask allows no action in some row")
        if len(observations) != len(masks):
            raise ValueError(f"{len(observations)} observations but {len(masks)} action masks")
        logits = self.logits_batch(observations, masks).astype(np.float64)
        if self.deterministic:
            return legal_argmax(logits, masks)
        p = legal_softmax(logits, masks)
        return np.array([self.rng.choice(ACTION_N, p=row) for row in p], dtype=np.int64)

    def logits_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The 52 action logits of every row (unmasked), with one forward pass."""
        rows = network_input_batch(observations, action_masks, self.features)
        with torch.inference_mode():
            return self.net(torch.from_numpy(rows))[:, :ACTION_N].numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_cards(action_mask)
        if legal.size == 1:
            return int(legal[0])
        scores = self.logits(observation, action_mask)[legal].astype(np.float64)
        if self.deterministic:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        return int(self.rng.choice(legal, p=p / p.sum()))

    def reset(self) -> None:
        pass


def load_learned_agent(path: str | Path, seed: int | None = None, deterministic: bool = True,
                       name: str | None = None) -> LearnedAgent:
    """The agent stored at ``path`` (a checkpoint folder, a file in one, or a run folder), named
    ``name`` or else by its checkpoint."""
    net, meta = load_network(path)
    return LearnedAgent(net, features=reads_features(meta),
                        name=name or meta.get("name") or Path(path).name, seed=seed,
                        deterministic=deterministic)
