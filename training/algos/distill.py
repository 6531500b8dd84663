"""Policy distillation (``algo: distill``): a network learns to choose the card a search agent
chooses.

The expert decides each card with hundreds of simulated deals (milliseconds per decision); a
network that imitates it decides in microseconds and plays in batches. The run has two parts, both
restartable:

* **Recording** (``training.algos.distill_recording``). The teacher plays whole games against the
  config's opponents, and every decision it makes with more than one legal card is kept, in
  numbered chunks written one file each, so a killed recording resumes by skipping the chunks on
  disk, and a recording folder can be shared by runs that ask for the same one.
* **Fitting.** Cross-entropy of the network's legal-card logits against the teacher's card
  (``imitation_step``), or against a mix of that card and a softmax of the teacher's per-card
  values where it recorded them (``teacher_targets``, ``distill.soft``): the values say how much
  worse each other card is, which one chosen card cannot. With ``distill.anchor`` the loss
  also holds the network near another one (the previous champion) by the KL divergence of its
  softmax from the anchor's. Every ``HELD_OUT_EVERY``-th chunk is kept out to measure agreement.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from agents.learned import legal_argmax, load_learned_agent
from crib_env.cards import N_CARDS
from crib_env.symmetry import N_RENAMINGS, rename_suits

from ..trainer import Trainer, initial_network, progress_bar
from .distill_recording import (
    Decisions,
    finished_chunks,
    load_recordings,
    record,
    recorded_without_margins,
    rotation,
)

#: the logit given to illegal cards in the loss (far below any legal one)
ILLEGAL_LOGIT = -1e9
#: the random stream of the suit renamings (distill.rename_suits), apart from the epochs' orders
RENAMING_STREAM = 1


@functools.lru_cache(maxsize=1)
def epoch_order(seed: int, epoch: int, size: int) -> np.ndarray:
    """The order in which epoch ``epoch`` visits the ``size`` training decisions: a function of
    the seed and the epoch alone, so a resumed fit continues exactly."""
    return np.random.default_rng([seed, epoch]).permutation(size)


def minibatch(seed: int, size: int, step: int, batch: int, end: int) -> np.ndarray:
    """The rows learned from at ``step`` (one decision is one step): up to ``batch`` rows of the
    epoch's order from ``step``'s place in it, never past the epoch's end or step ``end``."""
    epoch, offset = divmod(step, size)
    return epoch_order(seed, epoch, size)[offset:offset + min(batch, end - step)]


def minibatch_decisions(data: Decisions, rows: np.ndarray, seed: int, step: int,
                        renamed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                np.ndarray | None]:
    """The observations, masks, teacher's cards and values (None where not kept) of ``rows``; with
    ``renamed`` each row seen through a suit renaming drawn from the seed and the step, so a
    resumed fit draws the same ones."""
    margins = None if data.margins is None else data.margins[rows]
    obs = data.observations(rows)
    if not renamed:
        return obs, data.masks[rows], data.cards[rows], margins
    renamings = np.random.default_rng([seed, step, RENAMING_STREAM]).integers(N_RENAMINGS,
                                                                           size=len(rows))
    return rename_suits(renamings, obs, data.masks[rows], data.cards[rows], margins)


def legal_logits(net: nn.Module, inputs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return net(inputs)[:, :N_CARDS].masked_fill(masks == 0, ILLEGAL_LOGIT)


def valued_cards(masks: torch.Tensor, margins: torch.Tensor) -> torch.Tensor:
    """Per row and card (B, 52), whether the card is legal and the teacher gave it a value."""
    return ~torch.isnan(margins) & (masks != 0)


def teacher_targets(cards: torch.Tensor, masks: torch.Tensor, margins: torch.Tensor | None,
                    soft: float, temperature: float) -> torch.Tensor:
    """What the network learns: the teacher's cards (B,) when ``soft`` is 0 or no row has values;
    else distributions over the cards (B, 52): the teacher's card, with weight ``soft`` moved to a
    softmax of the teacher's values (``margins``, points) at ``temperature`` on the rows that
    have them (legal cards not NaN)."""
    if margins is None or soft == 0.0:
        return cards
    valued = valued_cards(masks, margins)
    has = valued.any(1)
    if not bool(has.any()):
        return cards
    target = nn.functional.one_hot(cards, N_CARDS).to(torch.float32)
    logits = (margins.nan_to_num(0.0) / temperature).masked_fill(~valued, float("-inf"))
    target[has] = (1.0 - soft) * target[has] + soft * torch.softmax(logits[has], dim=1)
    return target


def regret_costs(masks: torch.Tensor, margins: torch.Tensor | None,
                 temperature: float) -> torch.Tensor | None:
    """Per row and card (B, 52), how far the teacher values the card below its best legal card,
    in units of ``temperature``; 0 on illegal cards and on rows without values (None where no
    row has any)."""
    if margins is None:
        return None
    valued = valued_cards(masks, margins)
    if not bool(valued.any()):
        return None
    values = margins.masked_fill(~valued, float("-inf"))
    best = values.max(dim=1, keepdim=True).values
    return ((best - values) / temperature).masked_fill(~valued, 0.0)


def advantage_losses(logits: torch.Tensor, masks: torch.Tensor, margins: torch.Tensor,
                     temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row (B,): the mean squared gap between the network's logits and the teacher's values
    over ``temperature`` on the cards it valued, each centred on its mean over those cards (a
    softmax ignores a shift, so only the gaps between cards are learned); and which rows have
    values (the loss is 0 on the others)."""
    valued = valued_cards(masks, margins)
    count = valued.sum(1, keepdim=True).clamp(min=1)

    def centred(x: torch.Tensor) -> torch.Tensor:
        x = x.masked_fill(~valued, 0.0)
        return (x - x.sum(1, keepdim=True) / count).masked_fill(~valued, 0.0)

    gaps = centred(logits) - centred(margins.nan_to_num(0.0) / temperature)
    return (gaps ** 2).sum(1) / count.squeeze(1), valued.any(1)


def anchor_divergences(logits: torch.Tensor, anchor_logits: torch.Tensor) -> torch.Tensor:
    """Per row (B,): the KL divergence of the network's legal-card softmax from the anchor's
    (both given as legal logits, ``legal_logits``): the anchor's expected log-odds of each card
    over the network's, which is large where the network drops a card the anchor plays."""
    return nn.functional.kl_div(torch.log_softmax(logits, dim=1),
                                torch.log_softmax(anchor_logits, dim=1),
                                reduction="none", log_target=True).sum(1)


class Step(NamedTuple):
    """What one gradient step measured on its minibatch: the loss, the mean entropy of the
    network's legal-card softmax (how sure it is) and the mean KL divergence from the anchor (0
    without one)."""

    loss: float
    entropy: float
    anchor_kl: float


def legal_entropies(logits: torch.Tensor) -> torch.Tensor:
    """Per row (B,): the entropy of the softmax over the legal cards (illegal ones, at
    ``ILLEGAL_LOGIT``, have probability 0 and add nothing)."""
    log_p = torch.log_softmax(logits, dim=1)
    return -(log_p.exp() * log_p).sum(1)


def imitation_step(net: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
                   masks: torch.Tensor, targets: torch.Tensor,
                   weights: torch.Tensor | None = None, costs: torch.Tensor | None = None,
                   regret: float = 0.0, margins: torch.Tensor | None = None,
                   advantage: float = 0.0, temperature: float = 1.0,
                   anchor_logits: torch.Tensor | None = None, anchor: float = 0.0) -> Step:
    """One gradient step of cross-entropy against the teacher's cards, ``targets``: card ids (B,)
    or distributions over the cards (B, 52) (``teacher_targets``), plus ``regret`` times the
    network's expected cost of its card where ``costs`` (B, 52) are given (``regret_costs``);
    with ``advantage`` and ``margins``, the rows with values learn ``advantage`` times their
    ``advantage_losses`` instead of the cross-entropy; with ``anchor`` and ``anchor_logits`` (an
    anchor network's legal logits), every row adds ``anchor`` times its ``anchor_divergences``.
    Rows weighted by ``weights`` (B,) where given. The entropy and the anchor's divergence are
    those of the network before the step."""
    logits = legal_logits(net, inputs, masks)
    losses = nn.functional.cross_entropy(logits, targets, reduction="none")
    if costs is not None and regret > 0:
        losses = losses + regret * (torch.softmax(logits, dim=1) * costs).sum(1)
    if margins is not None and advantage > 0:
        gaps, has = advantage_losses(logits, masks, margins, temperature)
        losses = torch.where(has, advantage * gaps, losses)
    divergence = 0.0
    if anchor_logits is not None and anchor > 0:
        divergences = anchor_divergences(logits, anchor_logits)
        losses = losses + anchor * divergences
        divergence = float(divergences.detach().mean())
    loss = losses.mean() if weights is None else (weights * losses).sum() / weights.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return Step(float(loss.detach()), float(legal_entropies(logits.detach()).mean()), divergence)


def network_cards(agent: Any, obs: np.ndarray, masks: np.ndarray,
                  batch: int = 4096) -> np.ndarray:
    """A learned agent's card of highest logit among the legal ones, row by row, in batches."""
    out = [np.zeros(0, np.int64)]
    for start in range(0, len(obs), batch):
        m = masks[start:start + batch]
        logits = agent.logits_batch(obs[start:start + batch], m)
        out.append(legal_argmax(logits, m))
    return np.concatenate(out)


def departures(start: Any, data: Decisions) -> np.ndarray:
    """Where the teacher's card is not the one the ``start`` network (a learned agent) would lay,
    decision by decision."""
    block = 1 << 16  # unpacked a block at a time: the whole set as float32 may not fit
    cards = [network_cards(start, data.observations(slice(first, first + block)),
                           data.masks[first:first + block])
             for first in range(0, len(data), block)]
    return np.concatenate([np.zeros(0, np.int64), *cards]) != data.cards


#: held-out rows per forward pass of ``legal_logits_in_blocks``: a wide network's activations over
#: a whole held-out set (hundreds of thousands of rows) would not fit in memory at once
AGREEMENT_BLOCK = 8192


def legal_logits_in_blocks(net: nn.Module, inputs: torch.Tensor,
                           masks: torch.Tensor) -> torch.Tensor:
    """``legal_logits`` of every row (N, 52), ``AGREEMENT_BLOCK`` rows a forward pass."""
    with torch.inference_mode():
        return torch.cat([torch.zeros(0, N_CARDS)]
                         + [legal_logits(net, inputs[first:first + AGREEMENT_BLOCK],
                                         masks[first:first + AGREEMENT_BLOCK])
                            for first in range(0, len(inputs), AGREEMENT_BLOCK)])


def held_out_measures(logits: torch.Tensor, cards: torch.Tensor,
                      start_logits: torch.Tensor | None = None) -> dict[str, float]:
    """From the network's legal logits on the held-out decisions: the mean loss, the share where
    its best card is the teacher's (``agreement``) and the mean entropy of its legal-card softmax;
    with the start network's logits on them, also the mean KL divergence of the network's softmax
    from the start's (``kl_from_start``) and the share of decisions where its best card is not the
    start's (``changed``): how far the fit has moved, whatever the teacher says."""
    measures = {"loss": float(nn.functional.cross_entropy(logits, cards)),
                "agreement": float((logits.argmax(1) == cards).float().mean()),
                "entropy": float(legal_entropies(logits).mean())}
    if start_logits is not None:
        measures["kl_from_start"] = float(anchor_divergences(logits, start_logits).mean())
        measures["changed"] = float((logits.argmax(1) != start_logits.argmax(1)).float().mean())
    return measures


def cosine_rate(base: float, step: int, total: int) -> float:
    """The learning rate at ``step`` of ``total``: cosine from ``base`` down to 0."""
    return 0.5 * base * (1.0 + float(np.cos(np.pi * min(step, total) / total)))


class DistillTrainer(Trainer):
    """Record the teacher, then fit the network to its choices. A step is one recorded decision
    learned from; the minibatches walk a fixed permutation of the training decisions per epoch,
    so a resumed run continues exactly."""

    def build(self) -> None:
        from agents.networks import network_input_batch

        cfg = self.cfg
        d = cfg.distill
        torch.set_num_threads(cfg.train.torch_threads)
        self.network = initial_network(cfg)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=d.learning_rate)
        self.num_timesteps = 0
        self.n_updates = 0
        self.recording = Path(d.recording) if d.recording else self.run_dir / "recording"
        opponents = rotation([(o.agent, o.weight) for o in cfg.opponents])
        earlier = [(Path(folder), finished_chunks(Path(folder))) for folder in d.also_from]
        valued = d.soft > 0 or d.regret > 0 or d.advantage > 0
        for folder in [self.recording, *(folder for folder, _ in earlier)]:
            old = recorded_without_margins(folder) if valued and folder.exists() else []
            if old:
                raise ValueError(f"distill.soft / distill.regret: {len(old)} chunks of {folder} "
                                 f"(the first: {old[0].name}) hold the teacher's cards without "
                                 f"its values; record into a new distill.recording or set both "
                                 f"to 0")
        missing = record(self.recording, d.teacher, opponents, d.chunks, cfg.seed,
                         workers=d.workers, progress=cfg.train.progress_bar,
                         should_stop=lambda: self.stopping, games=d.chunk_games, ray=d.ray,
                         opening=(d.opening, d.opening_need) if d.opening else None,
                         player=d.player)
        self.start_weights()
        from agents.checkpoint import load_network
        from agents.registry import network_path

        self.anchor = None
        if d.anchor:  # checked by preflight.check_anchor before anything was written
            self.anchor = load_network(network_path(d.anchor))[0].requires_grad_(False)
        self.logger = self.tensorboard()
        if missing:  # stopped while recording: train() saves step 0 and the run resumes here
            self.data = None
            return
        parts = [(self.recording, d.chunks), *earlier]
        self.data, held, self.recording_seconds = load_recordings(parts)
        self.held = (torch.from_numpy(network_input_batch(held.obs, held.masks,
                                                          cfg.policy.features)),
                     torch.from_numpy(held.masks), torch.from_numpy(held.cards.astype(np.int64)))
        # the network the fit started from, from init_from (so the same on a resumed fit): its
        # held-out logits, once (they do not change), measure how far the fit has moved, and its
        # cards give the departures
        start = load_learned_agent(cfg.init_from) if cfg.init_from else None
        self.start_logits = (legal_logits_in_blocks(start.net, *self.held[:2])
                             if start is not None and len(held) else None)
        if d.soft == 0 and d.regret == 0 and d.advantage == 0:
            self.data.margins = None  # the cards alone: no need to keep the values in memory
        self.weights = (None if d.departure_weight == 1 else np.where(
            departures(start, self.data), d.departure_weight, 1.0).astype(np.float32))
        print(f"distill: {len(self.data):,} decisions to learn from, {len(held):,} held out, "
              f"recorded in {self.recording} and {len(earlier)} earlier recordings", flush=True)

    def record_steps(self, steps: list[Step]) -> None:
        """Log the mean loss, entropy and (anchored) divergence of the steps since the last log,
        then forget them."""
        if not steps:
            return
        self.logger.record("train/loss", float(np.mean([s.loss for s in steps])))
        self.logger.record("train/entropy", float(np.mean([s.entropy for s in steps])))
        if self.anchor is not None:
            self.logger.record("train/anchor_kl", float(np.mean([s.anchor_kl for s in steps])))
        steps.clear()

    def extra_info(self) -> dict[str, Any]:
        if self.data is None:
            return {}
        return {"distill": {"recording": str(self.recording),
                            "also_from": list(self.cfg.distill.also_from),
                            "decisions": len(self.data),
                            "held_out": len(self.held[2]),
                            "recording_seconds": round(self.recording_seconds, 1)}}

    def periodic(self) -> None:
        if self.data is not None and len(self.held[2]):
            inputs, masks, cards = self.held
            measures = held_out_measures(legal_logits_in_blocks(self.network, inputs, masks),
                                         cards, self.start_logits)
            for key, value in measures.items():
                self.logger.record(f"train/held_out_{key}", value)
        super().periodic()

    def learn(self, steps: int) -> None:
        from agents.networks import network_input_batch

        if self.data is None:
            return
        cfg = self.cfg
        d = cfg.distill
        fit_seed = cfg.seed if d.fit_seed is None else d.fit_seed
        data = self.data
        end = self.num_timesteps + steps
        steps_taken: list[Step] = []
        progress = progress_bar(cfg.train.progress_bar, steps)
        self.network.train()
        while self.num_timesteps < end and not self.out_of_time() and not self.stopping:
            if self.num_timesteps >= min(self.next_eval, self.next_save):
                self.record_steps(steps_taken)
                self.log_speed()
                self.between_updates()
                self.network.train()
            rows = minibatch(fit_seed, len(data), self.num_timesteps, d.batch_size, end)
            t0 = time.time()
            obs, masks, cards, margins = minibatch_decisions(data, rows, fit_seed,
                                                             self.num_timesteps, d.rename_suits)
            inputs = network_input_batch(obs, masks, cfg.policy.features)
            t1 = time.time()
            for group in self.optimizer.param_groups:
                group["lr"] = cosine_rate(d.learning_rate, self.num_timesteps,
                                          cfg.train.total_timesteps)
            masks = torch.from_numpy(masks)
            values = None if margins is None else torch.from_numpy(margins)
            targets = teacher_targets(torch.from_numpy(cards.astype(np.int64)), masks, values,
                                      d.soft, d.temperature)
            weights = None if self.weights is None else torch.from_numpy(self.weights[rows])
            costs = regret_costs(masks, values, d.temperature) if d.regret > 0 else None
            inputs = torch.from_numpy(inputs)
            anchor_logits = None
            if self.anchor is not None:
                with torch.no_grad():  # (inference tensors could not be saved for backward)
                    anchor_logits = legal_logits(self.anchor, inputs, masks)
            steps_taken.append(imitation_step(self.network, self.optimizer, inputs, masks, targets,
                                         weights, costs, d.regret, values, d.advantage,
                                         d.temperature, anchor_logits, d.anchor_weight))
            self.timings["forward"] += t1 - t0
            self.timings["update"] += time.time() - t1
            self.num_timesteps += len(rows)
            self.n_updates += 1
            progress.update(len(rows))
        self.record_steps(steps_taken)
        self.logger.record("train/learning_rate", self.optimizer.param_groups[0]["lr"])
        self.logger.record("distill/recording_seconds", self.recording_seconds)
        progress.close()
