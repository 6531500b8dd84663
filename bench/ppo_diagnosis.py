"""Why does (or doesn't) MaskablePPO move the policy? Per-update diagnostics of ``crib train``.

Runs ``training.algos.ppo.PPOTrainer`` on a config (with ``--set`` changes) and, around every PPO
update (``MaskablePPO.train``, wrapped here; SB3 itself is not changed), measures on that update's
rollout:

* ``kl``: the exact KL(old || new) of the masked action distributions over the rollout's states,
  old = the policy that collected the rollout, new = after the update (SB3's ``approx_kl`` is also
  kept: its estimate on the last epoch's minibatches, before each step);
* ``entropy``: mean entropy of the masked policy over the rollout, before the update;
* gradient norms at the optimizer's batch size (``ppo.batch_size``), on up to ``--minibatches``
  minibatches, before the update: ``|g_pi|`` of the policy (surrogate) loss with SB3's advantage
  normalisation, ``vf*|g_v|`` of the value loss times ``vf_coef``, ``|g|`` of the whole loss, and
  ``clip``: the factor ``min(1, max_grad_norm / |g|)`` that SB3's ``clip_grad_norm_`` applies to
  every parameter's gradient, the policy's included;
* ``snr``: the policy gradient's signal-to-noise ratio per minibatch: ``|E g|^2 / E|g - E g|^2``
  estimated from the minibatch gradients (unbiased for the signal); about 0 means each
  minibatch's policy gradient is mostly noise, 1 means the signal is as large as the noise;
* advantages: mean |A| and std of the raw GAE advantages, and the value function's explained
  variance of the returns (SB3's ``explained_variance``);
* ``|dθ|``: how far the update moved the parameters.

Prints one line per update and, per variant, the medians over its updates; ``--eval-games`` then
plays the final network (argmax, as ``crib evaluate`` does) against ``--eval-opponent``.

    .venv/bin/python bench/ppo_diagnosis.py --config configs/smoke.yaml --steps 8192 \\
        --variant old: --variant clip10:ppo.max_grad_norm=10
    .venv/bin/python bench/ppo_diagnosis.py --config configs/smoke.yaml --steps 200000 \\
        --set train.n_envs=256 ppo.n_steps=32 ppo.batch_size=2048 ppo.n_epochs=4 \\
        --variant clip0.5: --variant clip10:ppo.max_grad_norm=10

``--variant NAME:KEY=VALUE,KEY=VALUE`` (repeatable) adds its changes on top of ``--set``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import cpu_model, load_average, set_key  # noqa: E402

from training.algos.ppo import PPOTrainer  # noqa: E402
from training.config_file import parse_config  # noqa: E402

COLUMNS = ("kl", "approx_kl", "entropy", "g_pi", "vf_g_v", "g", "clip", "clip_g_pi", "snr",
           "adv_abs", "adv_std", "explained_var", "d_theta", "clip_fraction")


def _flat_grad(params: list[torch.nn.Parameter]) -> torch.Tensor:
    return torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                      for p in params])


def _masked_dist(policy, obs: torch.Tensor, masks: torch.Tensor):
    dist = policy.get_distribution(obs, action_masks=masks.numpy())
    return dist.distribution


def _rollout(model, limit: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    buf = model.rollout_buffer
    n = buf.buffer_size * buf.n_envs
    take = rng.permutation(n)[:limit] if n > limit else np.arange(n)

    def flat(a: np.ndarray) -> np.ndarray:
        return a.swapaxes(0, 1).reshape(n, *a.shape[2:])[take]

    return {"obs": torch.as_tensor(flat(buf.observations)),
            "actions": torch.as_tensor(flat(buf.actions)).long().flatten(),
            "masks": torch.as_tensor(flat(buf.action_masks)).bool(),
            "advantages": torch.as_tensor(flat(buf.advantages)).flatten(),
            "returns": torch.as_tensor(flat(buf.returns)).flatten(),
            "old_log_prob": torch.as_tensor(flat(buf.log_probs)).flatten()}


def gradient_stats(model, data: dict[str, torch.Tensor], batch: int, minibatches: int,
                   rng: np.random.Generator) -> dict[str, float]:
    """Gradient norms of the policy and value losses and the policy gradient's SNR, at the
    optimizer's batch size, at the current weights (no step is taken)."""
    policy = model.policy
    params = [p for p in policy.parameters() if p.requires_grad]
    n = len(data["actions"])
    order = rng.permutation(n)
    k = max(1, min(minibatches, n // batch))
    g_pis, rows = [], []
    policy.set_training_mode(True)
    for j in range(k):
        idx = torch.as_tensor(order[j * batch:(j + 1) * batch])
        values, log_prob, entropy = policy.evaluate_actions(
            data["obs"][idx], data["actions"][idx], action_masks=data["masks"][idx])
        adv = data["advantages"][idx]
        if model.normalize_advantage and len(adv) > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(log_prob - data["old_log_prob"][idx])
        pg_loss = -(adv * ratio).mean()  # the clipped surrogate's gradient at ratio 1
        v_loss = torch.nn.functional.mse_loss(data["returns"][idx], values.flatten())
        e_loss = -entropy.mean()
        grads = []
        for loss in (pg_loss, v_loss, e_loss):
            policy.optimizer.zero_grad()
            loss.backward(retain_graph=True)
            grads.append(_flat_grad(params).clone())
        policy.optimizer.zero_grad()
        g_pi, g_v, g_e = grads
        total = g_pi + model.vf_coef * g_v + model.ent_coef * g_e
        clip = min(1.0, model.max_grad_norm / (float(total.norm()) + 1e-6))
        g_pis.append(g_pi)
        rows.append({"g_pi": float(g_pi.norm()), "vf_g_v": model.vf_coef * float(g_v.norm()),
                     "g": float(total.norm()), "clip": clip,
                     "clip_g_pi": clip * float(g_pi.norm())})
    out = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
    stack = torch.stack(g_pis)
    if k > 1:
        mean = stack.mean(0)
        noise = float(((stack - mean) ** 2).sum(1).mean()) * k / (k - 1)
        signal = float(mean.pow(2).sum()) - noise / k
        out["snr"] = signal / noise if noise > 0 else float("nan")
    else:
        out["snr"] = float("nan")
    return out


class Diagnosis:
    """Wraps ``model.train`` to measure each update (see the module docstring)."""

    def __init__(self, model, sample: int, minibatches: int, seed: int) -> None:
        self.model = model
        self.sample = sample
        self.minibatches = minibatches
        self.rng = np.random.default_rng(seed)
        self.rows: list[dict[str, float]] = []
        self.original = model.train
        model.train = self.train

    def train(self) -> None:
        model, policy = self.model, self.model.policy
        data = _rollout(model, self.sample, self.rng)
        row: dict[str, float] = {"step": model.num_timesteps}
        with torch.no_grad():
            policy.set_training_mode(False)
            old = _masked_dist(policy, data["obs"], data["masks"])
            old_logp = old.logits.clone()
            probs = old.probs.clamp_min(1e-12)
            row["entropy"] = float(-(probs * probs.log()).where(data["masks"], 0.0).sum(1).mean())
        row.update(gradient_stats(model, data, model.batch_size, self.minibatches, self.rng))
        adv = data["advantages"]
        row["adv_abs"] = float(adv.abs().mean())
        row["adv_std"] = float(adv.std())
        before = torch.cat([p.detach().reshape(-1).clone() for p in policy.parameters()])
        self.original()
        after = torch.cat([p.detach().reshape(-1) for p in policy.parameters()])
        row["d_theta"] = float((after - before).norm())
        with torch.no_grad():
            policy.set_training_mode(False)
            new = _masked_dist(policy, data["obs"], data["masks"])
            p_old = old_logp.exp()
            kl = (p_old * (old_logp - new.logits)).where(data["masks"], 0.0).sum(1)
            row["kl"] = float(kl.mean())
        logged = model.logger.name_to_value
        for key, name in (("approx_kl", "train/approx_kl"), ("clip_fraction", "train/clip_fraction"),
                          ("explained_var", "train/explained_variance"),
                          ("value_loss", "train/value_loss")):
            row[key] = float(logged.get(name, float("nan")))
        self.rows.append(row)
        print("  " + "  ".join(f"{k} {_fmt(row.get(k))}" for k in ("step", *COLUMNS)), flush=True)

    def medians(self) -> dict[str, float]:
        rows = self.rows[1:] if len(self.rows) > 2 else self.rows  # the first update is atypical
        return {k: statistics.median(r[k] for r in rows) for k in COLUMNS if k in rows[0]}


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and (abs(value) < 1e-2 or abs(value) >= 1e4):
        return f"{value:.2e}"
    return f"{value:.3f}"


def run_variant(base: dict[str, Any], name: str, changes: list[str], steps: int, sample: int,
                minibatches: int, eval_games: int, eval_opponent: str) -> dict[str, Any]:
    data = copy.deepcopy(base)
    data.setdefault("train", {}).update(total_timesteps=steps, progress_bar=False, torch_threads=1)
    for assignment in changes:
        set_key(data, assignment)
    data.setdefault("eval", {}).update(every=10 * steps + 10**9, final_games=0, at_start=False)
    data.setdefault("train", {})["save_every"] = 10 * steps + 10**9  # no checkpoint saves
    cfg = parse_config(data, name)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        trainer = PPOTrainer(cfg, run_dir, resume=False)
        trainer.build()
        diagnosis = Diagnosis(trainer.model, sample, minibatches, cfg.seed)
        trainer.started = time.time()
        trainer.eval_seconds = 0.0
        trainer.steps_at_start = 0
        trainer.schedule_from(0)
        print(f"{name}: {' '.join(changes) or '(config as is)'}", flush=True)
        t0 = time.perf_counter()
        trainer.learn(steps)
        wall = time.perf_counter() - t0
        result: dict[str, Any] = {"variant": name, "changes": changes, "steps": trainer.num_timesteps,
                                  "updates": len(diagnosis.rows), "wall_seconds": round(wall, 1),
                                  "medians": diagnosis.medians(),
                                  "last": {k: diagnosis.rows[-1].get(k) for k in COLUMNS},
                                  "rows": diagnosis.rows, "load": load_average()}
        if eval_games:
            from agents.learned import LearnedAgent
            from training.evaluate import evaluate

            agent = LearnedAgent(trainer.network, cfg.policy.features, name=name)
            report = evaluate(agent, eval_opponent, games=eval_games, seed=cfg.eval.seed,
                              progress=False, regret=False)
            result["eval"] = {"opponent": eval_opponent, "games": eval_games,
                              "win_rate": report.win_rate,
                              "win_rate_ci95": list(report.win_rate_ci95),
                              "points_per_game": report.points_per_game}
        trainer.close()
    return result


def summary_table(results: list[dict[str, Any]]) -> str:
    cols = ("kl", "entropy", "g_pi", "vf_g_v", "clip", "clip_g_pi", "snr", "adv_std",
            "explained_var", "d_theta")
    head = "| variant | steps | s | " + " | ".join(cols) + " | last kl | last entropy | eval |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        m = r["medians"]
        ev = r.get("eval")
        ev_text = (f"{ev['win_rate']:.1%} vs {ev['opponent']} ({ev['games']})" if ev else "-")
        lines.append(f"| {r['variant']} | {r['steps']:,} | {r['wall_seconds']:.0f} | "
                     + " | ".join(_fmt(m.get(c)) for c in cols)
                     + f" | {_fmt(r['last']['kl'])} | {_fmt(r['last']['entropy'])} | {ev_text} |")
    return "\n".join(lines)


def _split(text: str) -> list[str]:
    """``a=1,b=[x, y]`` -> ``["a=1", "b=[x, y]"]``: commas inside brackets belong to the value."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/smoke.yaml"))
    parser.add_argument("--steps", type=int, default=8192)
    parser.add_argument("--set", nargs="*", default=[], action="extend", dest="sets",
                        metavar="KEY=VALUE")
    parser.add_argument("--variant", action="append", default=[],
                        metavar="NAME:KEY=VALUE,...", help="repeatable; default: the config")
    parser.add_argument("--sample", type=int, default=8192,
                        help="rollout rows used for KL, entropy and gradients")
    parser.add_argument("--minibatches", type=int, default=8)
    parser.add_argument("--eval-games", type=int, default=0)
    parser.add_argument("--eval-opponent", default="random")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    base = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    variants = args.variant or ["config:"]
    print(f"config {args.config}; CPU: {cpu_model()} ({os.cpu_count()} logical); "
          f"load average: {load_average()}", flush=True)
    results = []
    for spec in variants:
        name, _, rest = spec.partition(":")
        changes = [*args.sets, *_split(rest)]
        results.append(run_variant(base, name, changes, args.steps, args.sample,
                                   args.minibatches, args.eval_games, args.eval_opponent))
        print(summary_table(results[-1:]), flush=True)
    print("\nmedians over each variant's updates (the first update left out):")
    print(summary_table(results))
    print(f"\nCPU: {cpu_model()}; load average after: {load_average()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
