"""The training algorithms, one module each beside its own building blocks (as DouZero keeps its
loop next to its learner), every one a ``Trainer`` (``training.trainer``): ``ppo`` MaskablePPO,
``dmc`` Deep Monte-Carlo, ``distill`` policy distillation (its recording in
``distill_recording``). ``exit``, expert iteration, trains no network itself: it runs generations
of ``distill`` runs through ``training.train.train``."""

from ..trainer import Trainer
from .distill import DistillTrainer
from .dmc import DMCTrainer
from .ppo import PPOTrainer

#: the Trainer of each ``algo:`` that trains one network in one run
TRAINERS: dict[str, type[Trainer]] = {"ppo": PPOTrainer, "dmc": DMCTrainer,
                                      "distill": DistillTrainer}
