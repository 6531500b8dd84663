"""Which way the opponent plays, learned through a game (``standard_prior``).

The search models the opponent's cards as the policy network would lay them. An opponent that
pegs by fixed tactics (``agents.standard``) lays cards the network finds less likely, so its
hands are read less sharply and its answers predicted less well. With a prior chance that the
opponent plays as ``standard`` does, the search keeps two styles, the network and standard, and
weighs them by how well each explains the opponent's plays:

* a sampled deal's weight is the mixture ``sum_t P(t) L_t(s)`` of its likelihoods under each
  style (``L_standard``: ``standard_floor`` for each of the opponent's plays standard would not
  have made with that hand, 1 for each it would);
* ``P(t)`` is the prior times each style's evidence over the game's earlier deals and this one so
  far, the evidence of a deal being the mean likelihood of its plays over the sampled deals;
* the opponent's answers in the search are the mixture of the network's probabilities and
  standard's card, weighted by ``P(t)``.

Everything comes from the player's own observations of the opponent's plays: the hidden cards
are sampled, never read. Against an opponent that plays like the network the standard style loses
weight deal by deal and the search returns to the network alone.
"""

from __future__ import annotations

import numpy as np

#: the styles, in the order of the arrays below
NETWORK_STYLE, STANDARD_STYLE = 0, 1


class OpponentStyles:
    """The game's evidence for each style and the current deal's (agent memory; ``reset`` it at
    each new game)."""

    def __init__(self, standard_prior: float) -> None:
        self.log_prior = np.log(np.array([1.0 - standard_prior, standard_prior]))
        self.reset()

    def reset(self) -> None:
        self.game_evidence = np.zeros(2)  # log evidence of the game's finished deals
        self.deal_evidence = np.zeros(2)  # of this deal's plays seen so far
        self.probs = self._normalise(self.log_prior)

    def new_deal(self) -> None:
        """Fold the deal just played into the game's evidence."""
        self.game_evidence += self.deal_evidence
        self.deal_evidence = np.zeros(2)
        self.probs = self._normalise(self.log_prior + self.game_evidence)

    def sample_weights(self, likelihoods: np.ndarray) -> np.ndarray:
        """Sampled deals' weights from their likelihoods under each style, (2, S); updates the
        deal's evidence and the styles' probabilities ``probs``."""
        mean = likelihoods.mean(axis=1)
        self.deal_evidence = np.log(np.maximum(mean, 1e-300))
        log_before = self.log_prior + self.game_evidence
        self.probs = self._normalise(log_before + self.deal_evidence)
        before = self._normalise(log_before)
        return before @ likelihoods

    def answers(self, network: np.ndarray, standard_cards: np.ndarray) -> np.ndarray:
        """The opponent's card probabilities (rows, 52): the network's and standard's card,
        mixed by the styles' probabilities."""
        out = self.probs[NETWORK_STYLE] * network
        out[np.arange(len(standard_cards)), standard_cards] += self.probs[STANDARD_STYLE]
        return out

    @staticmethod
    def _normalise(log_weights: np.ndarray) -> np.ndarray:
        w = np.exp(log_weights - log_weights.max())
        return w / w.sum()
