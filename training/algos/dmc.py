"""Deep Monte-Carlo (DMC, ``algo: dmc``): a Q-network regressed on each decision's Monte-Carlo return.

The method of DouZero, fitted to cribbage. Hundreds of games step together on the compiled vector
env; the learner picks the legal card with the highest Q (a random legal card with probability
``epsilon``). Each decision's target is the learner's points minus the opponent's from that move to
the end of its deal: a deal is where the cards a decision was made with stop mattering, so the
return is unbiased for the deal and the game's later deals add no noise to it. Games still run to
the target, so the network sees every score situation it will meet in evaluation.

The network is any of ``agents.networks``': its 52 "logits" are read as the Q-values, so a DMC
checkpoint plays through ``LearnedAgent`` (argmax over the legal cards) with nothing new to load.

Why not only policy gradients: a deal's point margin has a standard deviation of about 10 points
while a discard moves its expectation by one or two, and the value of a discard shows only at the
show. A regression on returns averages that noise directly, per action, with every sample
reusable; a policy gradient needs an advantage estimate for the taken action alone.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.base import random_legal_cards
from agents.learned import legal_argmax
from crib_env.cards import N_CARDS
from crib_env.game import Phase
from crib_env.observation import phase_column
from crib_env.vector import DEAL_POINT_FIELDS

from ..trainer import Trainer, initial_network, progress_bar

#: most learner decisions in one deal: two discards and four cards laid
MAX_DECISIONS_PER_DEAL = 6
#: targets are points / RETURN_SCALE, so a network's outputs stay near unit size
RETURN_SCALE = 10.0
_PLAYING = phase_column(Phase.PLAY)
_HAND0, _CRIB, _DEALER = (DEAL_POINT_FIELDS.index(f) for f in ("hand0", "crib", "dealer"))
#: decisions of each update on which the greedy policy is compared before and after it
POLICY_PROBE = 4096


@dataclass
class DealBuffer:
    """Per row, the learner's decisions in the current deal (observation, action, rewards)."""

    obs: np.ndarray       # (B, MAX, obs_width) float32
    masks: np.ndarray     # (B, MAX, 52) int8: the legal cards
    actions: np.ndarray   # (B, MAX) int64
    rewards: np.ndarray   # (B, MAX) float32: reward received at each decision's step
    playing: np.ndarray   # (B, MAX) bool: the decision lays a card (else it discards)
    length: np.ndarray    # (B,) int64

    @classmethod
    def empty(cls, rows: int, width: int) -> DealBuffer:
        return cls(np.zeros((rows, MAX_DECISIONS_PER_DEAL, width), dtype=np.float32),
                   np.zeros((rows, MAX_DECISIONS_PER_DEAL, N_CARDS), dtype=np.int8),
                   np.zeros((rows, MAX_DECISIONS_PER_DEAL), dtype=np.int64),
                   np.zeros((rows, MAX_DECISIONS_PER_DEAL), dtype=np.float32),
                   np.zeros((rows, MAX_DECISIONS_PER_DEAL), dtype=np.bool_),
                   np.zeros(rows, dtype=np.int64))

    def record(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> None:
        """One decision per row; ``obs`` starts with the observation (features may follow)."""
        rows = np.arange(len(self.length))
        if (self.length >= MAX_DECISIONS_PER_DEAL).any():
            raise RuntimeError("a deal with more learner decisions than a deal can hold")
        self.obs[rows, self.length] = obs
        self.masks[rows, self.length] = masks
        self.actions[rows, self.length] = actions
        self.rewards[rows, self.length] = 0.0
        self.playing[rows, self.length] = obs[:, _PLAYING] > 0
        self.length += 1

    def reward(self, rewards: np.ndarray) -> None:
        rows = np.arange(len(self.length))
        self.rewards[rows, self.length - 1] += rewards

    def close(self, rows: np.ndarray, deal_points: np.ndarray, seats: np.ndarray,
              controllable: bool) -> tuple[np.ndarray, ...]:
        """The finished deals of ``rows``: (obs, masks, actions, targets) of every decision; those
        rows start empty. ``deal_points`` (len(rows), 7) are the vector env's per-deal points
        (``crib_env.vector.DEAL_POINT_FIELDS``), ``seats`` the learner's seat in each row.

        The target is the learner's margin from the decision to the end of the deal; with
        ``controllable`` less what the decision cannot change (see ``fixed_part``)."""
        lengths = self.length[rows]
        returns = np.cumsum(self.rewards[rows, ::-1], axis=1)[:, ::-1]
        if controllable:
            returns = returns - fixed_part(deal_points, seats, self.playing[rows])
        keep = np.arange(MAX_DECISIONS_PER_DEAL)[None, :] < lengths[:, None]
        out = (self.obs[rows][keep], self.masks[rows][keep], self.actions[rows][keep],
               returns[keep])
        self.length[rows] = 0
        return out


def fixed_part(deal_points: np.ndarray, seats: np.ndarray, playing: np.ndarray) -> np.ndarray:
    """The part of a decision's deal return that no choice of the learner at that decision can
    change, per decision (rows, MAX):

    * a discard: the opponent's hand, fixed by the opponent's own cards and the random starter;
    * a card laid: the whole show (both hands and the crib), fixed once the play begins.

    Its expectation given the position is the same for every legal card, so subtracting it keeps
    the ranking of the cards (the greedy policy) and removes its variance from the regression:
    the play learns from the pegging margin alone, a discard from everything it can affect. (If
    the game ends in the play the show is never counted; the credited points are used, so a
    peg-out still shows in the target.)"""
    hands = deal_points[:, _HAND0:_HAND0 + 2]
    own_hand = np.take_along_axis(hands, seats[:, None], axis=1)[:, 0]
    opp_hand = np.take_along_axis(hands, 1 - seats[:, None], axis=1)[:, 0]
    crib = np.where(deal_points[:, _DEALER] == seats, 1, -1) * deal_points[:, _CRIB]
    show = (own_hand - opp_hand + crib).astype(np.float32)
    return np.where(playing, show[:, None], -opp_hand.astype(np.float32)[:, None])


def choose(q: np.ndarray, masks: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Greedy legal action per row; a uniformly random legal one with probability ``epsilon``."""
    legal = masks > 0
    scores = np.where(legal, q, -np.inf)
    actions = np.argmax(scores, axis=1)
    explore = rng.random(len(q)) < epsilon
    if explore.any():
        actions[explore] = random_legal_cards(masks[explore], rng)
    return actions


class SampleStore:
    """Finished decisions waiting for the next update (each used ``passes`` times, then dropped)."""

    def __init__(self, width: int, capacity: int) -> None:
        self.obs = np.zeros((capacity, width), dtype=np.float32)
        self.masks = np.zeros((capacity, N_CARDS), dtype=np.int8)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.returns = np.zeros(capacity, dtype=np.float32)
        self.size = 0

    def add(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
            returns: np.ndarray) -> None:
        """Keep as many as fit (the rest of a last batch of deals is dropped: the store is
        cleared after every update, so nothing is ever learned from twice across updates)."""
        n = min(len(actions), len(self.actions) - self.size)
        s = self.size
        self.obs[s:s + n] = obs[:n]
        self.masks[s:s + n] = masks[:n]
        self.actions[s:s + n] = actions[:n]
        self.returns[s:s + n] = returns[:n]
        self.size += n

    def full(self) -> bool:
        return self.size >= len(self.actions)

    def clear(self) -> None:
        self.size = 0


def action_values(net: nn.Module, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Q(s, a) of the taken actions; a network that can score single moves (``score``) is asked
    for just those, not for all 52."""
    if hasattr(net, "score"):
        return net.score(obs, actions[:, None]).squeeze(1)
    return net(obs)[:, :N_CARDS].gather(1, actions[:, None]).squeeze(1)


def q_update(net: nn.Module, optimizer: torch.optim.Optimizer, store: SampleStore,
             batch_size: int, passes: int, max_grad_norm: float,
             rng: np.random.Generator) -> dict[str, float]:
    """Regress Q(s, a) on the stored returns (mean squared error); returns the update's figures."""
    n = store.size
    obs = torch.from_numpy(store.obs[:n])
    probe = slice(0, min(n, POLICY_PROBE))
    before = greedy_cards(net, store.obs[probe], store.masks[probe])
    actions = torch.from_numpy(store.actions[:n])
    targets = torch.from_numpy(store.returns[:n] / RETURN_SCALE)
    losses, norms = [], []
    net.train()
    for _ in range(passes):
        order = torch.from_numpy(rng.permutation(n))
        for start in range(0, n - batch_size + 1, batch_size):
            idx = order[start:start + batch_size]
            q = action_values(net, obs[idx], actions[idx])
            loss = nn.functional.mse_loss(q, targets[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norms.append(float(nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)))
            optimizer.step()
            losses.append(loss.item())
    var = float(targets.var()) if n > 1 else 0.0
    loss = float(np.mean(losses)) if losses else float("nan")
    after = greedy_cards(net, store.obs[probe], store.masks[probe])
    return {"loss": loss, "explained_variance": 1.0 - loss / var if var > 0 else 0.0,
            "policy_change": float((before != after).mean()),
            "grad_norm": float(np.mean(norms)) if norms else 0.0,
            "return_mean": float(store.returns[:n].mean()), "samples": float(n)}


def greedy_cards(net: nn.Module, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The legal card with the highest Q in each row (what the evaluated policy plays)."""
    with torch.inference_mode():
        net.eval()
        q = net(torch.from_numpy(obs))[:, :N_CARDS].numpy()
    return legal_argmax(q, masks)


class DMCTrainer(Trainer):
    """Deep Monte-Carlo on the fast vector env: rollouts of ``train.n_envs`` games fill a
    ``SampleStore`` with closed deals, then ``q_update`` learns from it and the store empties."""

    def build(self) -> None:
        from crib_env.vector import CribbageVectorEnv

        cfg = self.cfg
        torch.set_num_threads(cfg.train.torch_threads)
        self.network = initial_network(cfg)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=cfg.dmc.learning_rate)
        self.num_timesteps = 0
        self.n_updates = 0
        self.env = CribbageVectorEnv(cfg.train.n_envs, opponent=self.fast_opponents(),
                                     seat=cfg.env.seat, reward="points", episode=cfg.env.episode,
                                     target_score=cfg.env.target_score)
        self.start_weights()
        self.logger = self.tensorboard()

    def learn(self, steps: int) -> None:
        from agents.networks import network_input_batch

        cfg = self.cfg
        d = cfg.dmc
        env = self.env
        features = cfg.policy.features
        rng = np.random.default_rng([cfg.seed, self.num_timesteps])
        obs, info = env.reset(seed=self.env_seed())
        masks = info["action_mask"]
        width = network_input_batch(obs[:1], masks[:1], features).shape[1]
        deals = DealBuffer.empty(env.num_envs, width)
        store = SampleStore(width, d.samples_per_update)
        end = self.num_timesteps + steps
        margins: deque[float] = deque(maxlen=100)  # final margins of the latest training games
        games = 0
        progress = progress_bar(self.cfg.train.progress_bar, steps)
        while self.num_timesteps < end and not self.out_of_time():
            self.between_updates()
            while not store.full() and self.num_timesteps < end and not self.stopping:
                t0 = time.time()
                inputs = network_input_batch(obs, masks, features) if features else obs
                with torch.inference_mode():
                    self.network.eval()
                    q = self.network(torch.from_numpy(inputs))[:, :N_CARDS].numpy()
                t1 = time.time()
                actions = choose(q, masks, d.epsilon, rng)
                deals.record(inputs, masks, actions)
                seats = env.seats.copy()  # a finished game's row is restarted with a new seat
                obs, rewards, done, _, info = env.step(actions)
                masks = info["action_mask"]
                deals.reward(rewards)
                ended = np.flatnonzero(info["_deal_points"])
                if ended.size:
                    store.add(*deals.close(ended, info["deal_points"][ended], seats[ended],
                                           d.controllable_return))
                for own, opp in info["final_scores"][done]:
                    margins.append(float(own - opp))
                    games += 1
                self.num_timesteps += env.num_envs
                progress.update(env.num_envs)
                self.timings["forward"] += t1 - t0
                self.timings["env"] += time.time() - t1
            if self.stopping:
                self.rollout_cut = True
                break  # train() saves at the last update's step count
            if store.size < d.batch_size:
                break  # the budget ended before a full minibatch: nothing more to learn from
            t0 = time.time()
            stats = q_update(self.network, self.optimizer, store, d.batch_size, d.passes,
                             d.max_grad_norm, rng)
            self.timings["update"] += time.time() - t0
            store.clear()
            self.n_updates += 1
            for key, value in stats.items():
                self.logger.record(f"train/{key}", value)
            self.logger.record("train/epsilon", d.epsilon)
            self.logger.record("train/n_updates", self.n_updates)
            if margins:
                self.logger.record("rollout/ep_rew_mean", float(np.mean(margins)))
                self.logger.record("rollout/games", games)
            self.log_speed()
            self.logger.dump(self.num_timesteps)
        progress.close()
