"""The run config of ``crib train``: a pydantic schema, one section per part of a run, saved with
every run (reading and writing the YAML: ``training.config_file``).

Every field has a default, so a config file only states what it changes. Numbers must be finite
(no ``.inf`` or ``.nan``) and seeds fit in 32 bits (what NumPy takes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.registry import PREVIOUS_CHAMPION_PATH
from agents.renamed import RENAMED_PREFIX

SCRIPTED_OPPONENTS = ("random", "greedy", "standard", "expert")
STATEFUL_OPPONENTS = ("expert",)  # remember earlier moves: one copy per game
SELF = "self"  # the self-play pool of frozen earlier checkpoints of this run
SEED_MAX = 2**32 - 1  # np.random.seed takes 0 .. 2**32 - 1


class _Section(BaseModel):
    # inf and nan make no sense in any field here (a learning rate of .inf trains to NaN)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class EnvConfig(_Section):
    """The single-agent training environment."""

    reward: Literal["win", "points", "winprob"] = Field(
        "points", description="win: +1/-1 at the end; points: own minus opponent's points per step; "
                              "winprob: the change in the win-odds table's chance to win per step "
                              "(sums to +1/-1 over a game; needs episode: game, target_score: 121)")
    episode: Literal["game", "deal"] = Field(
        "deal", description="an episode is one deal, or a whole game to target_score")
    target_score: int = Field(121, ge=1, le=121, description="game target (121 standard)")
    seat: Literal["random", "player_0", "player_1"] = Field(
        "random", description="which seat the learner takes each episode")


def names_an_agent(spec: str, path_marks: str) -> bool:
    """Whether ``spec`` names a scripted agent, the champion or a checkpoint path (a name holding
    one of ``path_marks``), alone or after ``renamed:``."""
    inner = spec.removeprefix(RENAMED_PREFIX)
    return inner in (*SCRIPTED_OPPONENTS, "champion") or any(m in inner for m in path_marks)


class OpponentConfig(_Section):
    """One member of the training opponent mixture: a scripted level, 'self', or a checkpoint."""

    agent: str = Field(description="random, greedy, standard, expert, self, or a checkpoint path; "
                                   "any but self also after 'renamed:' (agents.renamed)")
    weight: float = Field(1.0, gt=0, description="relative chance of facing it in an episode")

    @field_validator("agent")
    @classmethod
    def _known(cls, value: str) -> str:
        if value == SELF or names_an_agent(value, path_marks="/\\"):
            return value
        allowed = ", ".join(repr(a) for a in (*SCRIPTED_OPPONENTS, SELF, "champion"))
        raise ValueError(f"got {value!r}; allowed: {allowed} or a checkpoint path, each but "
                         f"'self' also after {RENAMED_PREFIX!r}")


class SelfPlayConfig(_Section):
    """The pool of frozen snapshots the 'self' opponent draws from."""

    snapshot_every: int = Field(50_000, ge=1, description="steps between pool snapshots")
    pool_size: int = Field(5, ge=1, description="most recent snapshots kept in the pool")
    fallback: str = Field("greedy", description="opponent used while the pool is still empty")


class PolicyConfig(_Section):
    """The network (see ``agents.networks.ARCHITECTURES``)."""

    arch: Literal["cards", "mlp", "afterstate"] = Field(
        "cards", description="cards: per-card tokens; mlp: flat; afterstate: each hand card scored "
                             "by the position it leaves (observation only)")
    features: bool = Field(True, description="append agents.card_features to the input")
    hidden: int = Field(64, ge=8, le=1024, description="token (cards) or layer (mlp) width")
    context: int = Field(128, ge=8, le=1024, description="context width (cards only)")
    embed: int = Field(16, ge=2, le=256, description="rank / suit embedding size (cards only)")
    layers: int = Field(2, ge=1, le=8, description="hidden layers (mlp and afterstate)")
    prior: bool = Field(False, description="cards + features only: start the linear feature head "
                                           "from a rule of thumb (agents.networks.CardNet)")
    attention: int = Field(0, ge=0, le=8, description="cards only: self-attention blocks over "
                                                      "the known cards' tokens")
    need: int = Field(0, ge=0, le=121, description=(
        "cards only: each player's points to go as this many steps, and whether a card pegs out "
        "now (agents.networks.CardNet); init_from may name the same network without them"))
    reader: str | None = Field(None, description=(
        "cards with features only: a hand reader's folder (python -m training.hand_reader fit): "
        "the network reads how many of each rank the opponent is expected to hold and, for each "
        "legal card, its expected answers (agents.networks.CardNet), the reader frozen; "
        "init_from may name the same network without it"))
    show: bool = Field(False, description=(
        "cards with need only: in the play the network reads its own show (hand and starter), "
        "the dealer's expected crib, and its points to go less its hand as need + 1 steps "
        "(agents.networks.CardNet); init_from may name the same network without them"))

    def arch_kwargs(self) -> dict[str, Any]:
        if self.arch == "cards":
            kwargs = {"features": self.features, "hidden": self.hidden, "context": self.context,
                      "embed": self.embed}
            if self.prior:
                kwargs["prior"] = True
            if self.attention:
                kwargs["attention"] = self.attention
            if self.need:
                kwargs["need"] = self.need
            if self.reader:
                kwargs["reader"] = True
            if self.show:
                kwargs["show"] = True
            return kwargs
        return {"features": self.features, "hidden": self.hidden, "layers": self.layers}

    @model_validator(mode="after")
    def _afterstate_reads_the_observation(self) -> PolicyConfig:
        if self.arch == "afterstate" and (self.features or self.prior):
            raise ValueError("arch 'afterstate' reads the observation only: set features: false "
                             "and prior: false")
        if self.reader:
            from agents.reader import load_reader_state  # torch: only for a config that needs it

            if self.arch != "cards":
                raise ValueError(f"policy.reader: only arch 'cards' reads a hand reader, not "
                                 f"{self.arch!r}")
            if not self.features:
                raise ValueError("policy.reader: the reading of each legal card needs "
                                 "features: true")
            load_reader_state(self.reader)  # refused here, before any work, if it is not one
        if self.show and not (self.arch == "cards" and self.need):
            raise ValueError("policy.show: needs arch 'cards' and need > 0 (its steps are counted "
                             "like the points to go)")
        if self.need and self.arch != "cards":
            raise ValueError(f"policy.need: only arch 'cards' reads the points to go, not "
                             f"{self.arch!r}")
        if self.attention:
            from agents.networks import ATTENTION_HEADS  # torch: only for a config that needs it

            if self.arch != "cards":
                raise ValueError(f"policy.attention: only arch 'cards' has attention blocks, not "
                                 f"{self.arch!r}")
            if self.hidden % ATTENTION_HEADS:
                raise ValueError(f"policy.attention: hidden ({self.hidden}) must be a multiple of "
                                 f"the {ATTENTION_HEADS} attention heads")
        return self


class PPOConfig(_Section):
    """MaskablePPO hyper-parameters (sb3-contrib names).

    ``learning_rate`` and ``vf_coef`` differ from SB3's defaults (3e-4, 0.5) on measurements
    (BENCHMARKS.md, "Why PPO did not move"): Adam moves each weight by about the learning rate per
    step, so 3e-4 barely moved the policy in the steps a short run takes; and the value loss is in
    points squared (deal returns have a standard deviation of about 7 points), so at 0.5 its
    gradient was 10-300 times the policy's and, through the shared network and the gradient-norm
    clip, left the policy a few percent of each step. With the win reward the value gradient is
    small either way (the same result with 0.05 and 0.5).
    """

    learning_rate: float = Field(1e-3, gt=0)
    n_steps: int = Field(1024, ge=8, description="steps per env per rollout")
    batch_size: int = Field(256, ge=8)
    n_epochs: int = Field(4, ge=1)
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, gt=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.05, ge=0, description="weight of the value loss (points squared "
                                                  "with the points reward)")
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: float | None = Field(None, gt=0)
    normalize_advantage: bool = Field(True, description="scale each minibatch's advantages to "
                                                        "mean 0, std 1")


class DMCConfig(_Section):
    """Deep Monte-Carlo (``algo: dmc``, training.algos.dmc): Q(s, a) regressed on deal returns."""

    learning_rate: float = Field(3e-4, gt=0, le=1)
    epsilon: float = Field(0.05, ge=0, le=1, description="chance of a random legal card")
    samples_per_update: int = Field(16384, ge=64, description="finished decisions per update")
    batch_size: int = Field(1024, ge=8, description="minibatch of the regression")
    passes: int = Field(1, ge=1, le=16, description="passes over each update's samples")
    max_grad_norm: float = Field(10.0, gt=0)
    controllable_return: bool = Field(
        True, description="regress on the part of the deal return the decision can change: "
                          "the pegging for a card laid, all but the opponent's hand for a discard")

    @model_validator(mode="after")
    def _batch(self) -> DMCConfig:
        if self.batch_size > self.samples_per_update:
            raise ValueError(f"batch_size: got {self.batch_size}; allowed: at most "
                             f"samples_per_update = {self.samples_per_update}")
        return self


#: the teacher that records its per-card values next to its card (``ExpertAgent.last_margins``)
#: the teachers that record a value for every legal card (``distill.soft`` learns them)
VALUED_TEACHERS = ("expert", "champion-search", "rollouts")


class DistillConfig(_Section):
    """Policy distillation (``algo: distill``, training.algos.distill): the network learns the teacher's
    choices, recorded from the teacher's games against the config's opponents."""

    teacher: str = Field("expert", description="the agent whose choices are learned")
    chunks: int = Field(400, ge=1, description="chunks of recorded games (25 games: about 1,000 "
                                               "decisions each)")
    chunk_games: int = Field(25, ge=1, le=1000, description="games per recorded chunk")
    recording: str | None = Field(
        None, description="folder of the recording (reused where it holds the same teacher, "
                          "opponents and seed); default: recording/ in the run folder")
    also_from: list[str] = Field(default_factory=list, description=(
        "finished recordings (folders, each as a distillation run wrote it) whose decisions are "
        "learned from beside this run's own; their held-out chunks stay held out"))
    workers: int = Field(1, ge=1, le=64, description="processes recording games")
    opening: str | None = Field(None, description=(
        "an agent that plays both seats until a deal starts with either player within "
        "distill.opening_need points of the target: only the end of each game is recorded "
        "(not with the rollouts teacher, which keeps the end alone with rollouts:need=N)"))
    opening_need: int = Field(30, ge=1, le=120, description="see distill.opening")
    player: str | None = Field(None, description=(
        "an agent that lays the cards of the recorded games while the teacher's choice at each "
        "of its positions is recorded (DAgger: the learner, so that it learns on the positions "
        "its own play reaches); not with the rollouts teacher, whose network plays"))

    @field_validator("also_from")
    @classmethod
    def _also_from(cls, value: list[str]) -> list[str]:
        from pathlib import Path

        from .algos.distill_recording import finished_chunks

        for folder in value:
            finished_chunks(Path(folder))  # raises where it holds no finished recording
        return value
    ray: str | None = Field(None, description=(
        "record the chunks as Ray tasks: 'local' (a Ray on this machine), 'auto' (this machine's "
        "cluster) or HOST:PORT; crib train --ray sets it. The chunks are the same as local ones"))
    learning_rate: float = Field(1e-3, gt=0, le=1, description="Adam's rate, cosine to 0 over "
                                                              "train.total_timesteps")
    batch_size: int = Field(512, ge=8, description="decisions per gradient step")
    soft: float = Field(0.0, ge=0, le=1, description=(
        "weight of the teacher's values in the target: 0 learns its card alone; above 0 moves "
        "this share to a softmax of its per-card values where it recorded them (the expert's "
        "simulated pegging margins, outside the end game)"))
    temperature: float = Field(0.5, gt=0, description="points: the softmax temperature of "
                                                      "the values (distill.soft)")
    regret: float = Field(0.0, ge=0, le=100, description=(
        "weight of the expected regret in the loss: on the decisions where the teacher valued "
        "every legal card, the network's probability of each card times how far the teacher "
        "values it below its best (in units of distill.temperature); 0: cross-entropy alone"))
    advantage: float = Field(0.0, ge=0, le=100, description=(
        "weight of the advantage regression: on the decisions where the teacher valued every "
        "legal card, the network's legal logits, centred on their mean, learn the teacher's "
        "values over distill.temperature, centred likewise (least squares, so noisy values "
        "average out: the rollouts teacher's), in place of the cross-entropy; 0: off"))
    rename_suits: bool = Field(False, description=(
        "learn each decision of a minibatch under a random renaming of the suits (the rules "
        "never name a suit: crib_env.symmetry), drawn from the seed and the step"))
    departure_weight: float = Field(1.0, ge=1, le=100, description=(
        "weight in the loss of the decisions where the teacher chose another card than the "
        "network it starts from (init_from) would; 1: every decision alike"))
    anchor: str | None = Field(None, description=(
        "a network the fit is held near (a checkpoint path or 'champion'; a pool too): "
        "distill.anchor_weight times the KL divergence of the fitted network's legal-card "
        "softmax from the anchor's is added to every decision's loss, so the fit leaves the "
        "anchor's card only where the teacher's evidence outweighs it"))
    anchor_weight: float = Field(0.0, ge=0, le=100, description="see distill.anchor; 0: off")
    fit_seed: int | None = Field(None, ge=0, le=SEED_MAX, description=(
        "seed of the fit's minibatch order and suit renamings (the recording stays the seed's): "
        "several fits of one recording (exit.fits) differ only here; default: the run's seed"))


class ExitConfig(_Section):
    """Expert iteration (``algo: exit``, training.algos.exit): each generation distills the search over
    the previous generation's network (the ``distill`` section sets the recording and the fit)."""

    generations: int = Field(3, ge=1, le=100, description="generations to run")
    search: str = Field("champion-search:sims=64", description=(
        "the teacher: champion-search with its settings, or the rollouts teacher "
        "(training.algos.rollout_teacher); each generation adds net= the previous generation's "
        "network"))
    start: str = Field(
        default_factory=lambda: str(PREVIOUS_CHAMPION_PATH), description=(
            "generation 0's network, a checkpoint path: one network, not a pool (default: the "
            "shipped exit_default_gen3, the last single network shipped as the champion; the "
            "shipped configs name it or agents/checkpoints/distilled, the network the "
            "champion-search figures rest on)"))
    eval_games: int = Field(2000, ge=2, description="duplicate games of each generation's "
                                                    "network against each opponent")
    eval_seed: int = Field(0, ge=0, le=SEED_MAX, description="seed of those games")
    eval_workers: int = Field(1, ge=1, le=64, description="processes playing them")
    opponents: list[str] = Field(["expert", "standard"], description=(
        "besides the previous generation, who each generation's network plays"))
    keep_recordings: bool = Field(False, description=(
        "each generation learns from every earlier generation's recording too "
        "(distill.also_from), not from its own alone"))
    chunks: list[int] = Field(default_factory=list, description=(
        "chunks recorded by each generation in turn (a later generation can afford fewer); "
        "distill.chunks for the generations past the list"))
    fits: int = Field(1, ge=1, le=8, description=(
        "networks each generation fits on its recording, fit k with distill.fit_seed the "
        "generation's seed + k - 1; above 1 (or with pool_previous) the generation's network is "
        "their pool (training.pool), and the next generation's fits start from its first fit"))
    pool_previous: float = Field(0.0, ge=0, le=100, description=(
        "weight of the previous generation's network in the generation's pool, each fit's "
        "weight 1: above 0 the pool leaves the previous network's card only where the fits "
        "learned a large advantage for another (their small departures are the noisiest); 0: "
        "the fits alone"))

    @field_validator("chunks")
    @classmethod
    def _chunks(cls, value: list[int]) -> list[int]:
        if any(n < 1 for n in value):
            raise ValueError(f"got {value}; each generation records at least one chunk")
        return value

    @field_validator("search")
    @classmethod
    def _search(cls, value: str) -> str:
        from agents.search import SearchSettings

        from .algos.rollout_teacher import RolloutSettings, is_rollout_teacher

        name, _, settings = value.partition(":")
        if is_rollout_teacher(value):
            net = RolloutSettings.parse(value).net if "net=" in settings else ""
        elif name == "champion-search":
            net = SearchSettings.parse(settings).net
        else:
            raise ValueError(f"got {value!r}; the teacher is champion-search or rollouts with "
                             f"their settings")
        if net:
            raise ValueError("net= is set by each generation (exit.start for the first)")
        return value

    @model_validator(mode="after")
    def _even(self) -> ExitConfig:
        if self.eval_games % 2:
            raise ValueError(f"eval_games: got {self.eval_games}; duplicate games come in pairs")
        from agents.networks import MAX_MEMBERS

        # with the previous network in each pool, the pools grow by exit.fits a generation
        last = 1 + self.generations * self.fits if self.pool_previous > 0 else self.fits
        if last > MAX_MEMBERS:
            raise ValueError(f"fits: {self.fits} fits a generation for {self.generations} "
                             f"generations with pool_previous would pool {last} networks in the "
                             f"last generation; a pool holds at most {MAX_MEMBERS}")
        return self


class TrainConfig(_Section):
    """Budget and parallelism."""

    total_timesteps: int = Field(100_000, ge=1, description="learner decisions in all")
    n_envs: int = Field(2, ge=1, le=8192, description="games stepped in parallel (fast "
                                                      "engine: rows; python: one env each)")
    engine: Literal["fast", "python"] = Field(
        "fast", description="fast: all games in lockstep on the compiled core, opponents in batch; "
                            "python: one Python env per game (any opponent, the expert included)")
    vec_env: Literal["subproc", "dummy"] = Field(
        "subproc", description="python engine: subproc, one process per env; dummy: in process")
    save_every: int = Field(
        20_000, ge=1, description="steps between saves of latest/ (also saved at every "
                                  "evaluation and when the run stops): what a crash can lose")
    torch_threads: int = Field(1, ge=1, le=64, description="torch threads for the learner")
    max_wall_seconds: float | None = Field(
        None, gt=0, description="also stop once the run (all resumed sessions together) has "
                                "trained this long, evaluations included")
    progress_bar: bool = Field(True, description="show a progress bar in the terminal")


class EvalConfig(_Section):
    """Periodic evaluation with training.evaluate (full games to 121, seats alternating)."""

    every: int = Field(50_000, ge=1, description="steps between evaluations (and checkpoints)")
    games: int = Field(200, ge=2, description="games per opponent per evaluation")
    opponents: list[str] = Field(["greedy"], min_length=1)
    best_by: str = Field("mean", description="'mean' win rate over the opponents, or one of them")
    final_games: int = Field(0, ge=0, description="games per opponent in the closing table")
    seed: int = Field(12345, ge=0, le=SEED_MAX,
                      description="evaluation seed (the same deals every time)")
    at_start: bool = Field(False, description="also evaluate the untrained network at step 0")

    @field_validator("opponents")
    @classmethod
    def _scripted(cls, value: list[str]) -> list[str]:
        for name in value:
            if not names_an_agent(name, path_marks="/"):
                allowed = ", ".join(repr(a) for a in (*SCRIPTED_OPPONENTS, "champion"))
                raise ValueError(f"got {name!r}; allowed: {allowed} or a checkpoint path, each "
                                 f"also after {RENAMED_PREFIX!r}")
        return value

    @model_validator(mode="after")
    def _best_by(self) -> EvalConfig:
        if self.best_by != "mean" and self.best_by not in self.opponents:
            allowed = ", ".join(repr(a) for a in ["mean", *self.opponents])
            raise ValueError(f"best_by: got {self.best_by!r}; allowed: {allowed}")
        return self


class RunConfig(_Section):
    """A whole ``crib train`` run."""

    name: str = Field(description="config name, part of the run name", pattern=r"^[A-Za-z0-9_.-]+$")
    seed: int = Field(0, ge=0, le=SEED_MAX,
                      description="seeds Python, NumPy, Torch and the environments")
    algo: Literal["ppo", "dmc", "distill", "exit"] = Field(
        "ppo", description="ppo: MaskablePPO; dmc: Deep Monte-Carlo Q regression (training.algos.dmc); "
                           "distill: learn a teacher's choices (training.algos.distill); exit: expert "
                           "iteration, distilling the search over the network (training.algos.exit)")
    env: EnvConfig = EnvConfig()
    opponents: list[OpponentConfig] = Field(
        default_factory=lambda: [OpponentConfig(agent="greedy")], min_length=1)
    selfplay: SelfPlayConfig = SelfPlayConfig()
    policy: PolicyConfig = PolicyConfig()
    ppo: PPOConfig = PPOConfig()
    dmc: DMCConfig = DMCConfig()
    distill: DistillConfig = DistillConfig()
    exit: ExitConfig = ExitConfig()
    train: TrainConfig = TrainConfig()
    eval: EvalConfig = EvalConfig()
    init_from: str | None = Field(None, description="start from this checkpoint's weights")

    @model_validator(mode="after")
    def _batch(self) -> RunConfig:
        rollout = self.ppo.n_steps * self.train.n_envs
        if self.algo == "ppo" and self.ppo.batch_size > rollout:
            raise ValueError(f"ppo.batch_size: got {self.ppo.batch_size}; allowed: at most "
                             f"ppo.n_steps * train.n_envs = {rollout}")
        # an opponent that keeps memory plays one copy per row on the fast engine
        # (training.batch_opponents); a self-play slot's stand-in acts for its rows in one batch
        if self.train.engine == "fast" and self.selfplay.fallback in STATEFUL_OPPONENTS:
            raise ValueError(f"selfplay.fallback: {self.selfplay.fallback!r} keeps memory "
                             f"between moves and cannot act for a slot's rows in one batch; "
                             f"use a scripted level without memory or a checkpoint")
        if self.env.reward == "winprob" and (self.env.episode != "game"
                                             or self.env.target_score != 121):
            raise ValueError("env.reward: winprob needs env.episode: game and env.target_score: 121 "
                             "(the win-odds table's game)")
        if self.algo in ("distill", "exit"):
            if self.train.engine != "python":
                raise ValueError(f"algo {self.algo!r} records the teacher's games on the python "
                                 "engine: set train.engine: python")
            for o in self.opponents:
                if o.agent == SELF:
                    raise ValueError(f"opponents: algo {self.algo!r} records games against "
                                     f"fixed opponents; 'self' is not one")
                if o.weight != int(o.weight):
                    raise ValueError(f"opponents: {o.agent!r} has weight {o.weight}; algo "
                                     f"{self.algo!r} needs whole weights (chunks in turn)")
            valued = [name for name in ("soft", "regret", "advantage")
                      if getattr(self.distill, name) > 0]
            if valued and self.distill.teacher.split(":")[0] not in VALUED_TEACHERS:
                names = f"{', '.join(VALUED_TEACHERS[:-1])} and {VALUED_TEACHERS[-1]}"
                raise ValueError(f"distill.{valued[0]}: only the {names} teachers record "
                                 f"per-card values; {self.distill.teacher!r} gives its card "
                                 f"alone (set distill.{valued[0]}: 0)")
            if (self.distill.anchor is None) != (self.distill.anchor_weight == 0):
                raise ValueError("distill.anchor and distill.anchor_weight: set both (a network "
                                 "and a weight above 0) or neither")
            if self.distill.anchor is not None and self.algo != "distill":
                raise ValueError("distill.anchor: only algo 'distill' fits toward an anchor")
            if self.algo == "distill" and self.distill.departure_weight != 1 \
                    and not self.init_from:
                raise ValueError("distill.departure_weight: the departures are from the network "
                                 "the fit starts from; set init_from")
        if self.algo == "dmc":
            if self.train.engine != "fast":
                raise ValueError("algo 'dmc' runs on train.engine: fast only")
            if self.env.reward != "points":
                raise ValueError("algo 'dmc' learns from deal returns in points: set "
                                 "env.reward: points")
        return self

    @property
    def env_id(self) -> str:
        from crib_env.observation import OBSERVATION_VERSION

        return f"crib_v{OBSERVATION_VERSION}-{self.env.reward}-{self.env.episode}"
