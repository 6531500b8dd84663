"""The SB3 side of the learned policy: MaskablePPO runs the networks of ``agents.networks``.

The network (``CardNet`` or ``MlpNet``) maps an input row to 52 action logits plus a value. It is
wrapped as SB3's features extractor; the policy's action head then just takes the first 52 outputs
and the value head the last one, so the trained network *is* ``policy.features_extractor.net`` and a
checkpoint stores exactly the module ``LearnedAgent`` plays (no SB3 needed to play it).

``CardFeatureWrapper`` appends ``agents.card_features`` to each observation when the policy uses
them; ``LearnedAgent`` computes the same block from the same (observation, mask) at play time.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.networks import ACTION_N, OUTPUT_SIZE, build_network, input_size, network_input


class NetworkExtractor(BaseFeaturesExtractor):
    """Runs the whole policy network; its 53 outputs are split by the heads below."""

    def __init__(self, observation_space: spaces.Box, arch: str,
                 arch_kwargs: dict[str, Any]) -> None:
        super().__init__(observation_space, features_dim=OUTPUT_SIZE)
        self.net = build_network(arch, **arch_kwargs)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


class _Take(nn.Module):
    """Select a fixed slice of the last dimension (the logits, or the value)."""

    def __init__(self, start: int, stop: int) -> None:
        super().__init__()
        self.start, self.stop = start, stop

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[..., self.start:self.stop]


class NetworkPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy whose actor and critic are the two outputs of one network."""

    def __init__(self, *args: Any, arch: str = "cards", arch_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        kwargs.update(
            features_extractor_class=NetworkExtractor,
            features_extractor_kwargs={"arch": arch, "arch_kwargs": dict(arch_kwargs or {})},
            net_arch=[],  # the network has its own layers; the mlp_extractor is the identity
            ortho_init=False,  # keep PyTorch's default init of the network's layers
            share_features_extractor=True,
        )
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = _Take(0, ACTION_N)
        self.value_net = _Take(ACTION_N, ACTION_N + 1)
        # Re-create the optimizer so it holds only parameters that are used.
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)

    @property
    def network(self) -> nn.Module:
        return self.features_extractor.net


class CardFeatureWrapper(gymnasium.Wrapper):
    """Appends the card-feature block to every observation (``agents.networks.network_input``)."""

    def __init__(self, env: gymnasium.Env, features: bool) -> None:
        super().__init__(env)
        self.features = features
        self.observation_space = spaces.Box(-np.inf, np.inf, (input_size(features),), np.float32)

    def _row(self, observation: np.ndarray) -> np.ndarray:
        return network_input(observation, self.env.unwrapped.action_masks(), self.features)

    def reset(self, **kwargs: Any):
        observation, info = self.env.reset(**kwargs)
        return self._row(observation), info

    def step(self, action: int):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._row(observation), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()
