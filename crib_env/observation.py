"""The observation layout: one flat float32 vector of named slices, seen from one player's seat.

Everything is relative to the observing player ("own" / "opp"), so one policy plays either seat.
The layout is defined once in ``LAYOUT``; ``SLICES`` maps each name to its slice of the vector.
Change it and bump ``OBSERVATION_VERSION`` (and so the env's ``_vN`` suffix).

| slice          | size   | meaning                                                              |
|----------------|--------|----------------------------------------------------------------------|
| hand           | 52     | cards the player holds now (multi-hot by card id)                    |
| discards       | 52     | the player's own discards to the crib                                |
| starter        | 52     | the starter, one-hot, once cut (all zero before)                     |
| played_own     | 52     | cards the player has laid in this deal's play                        |
| played_opp     | 52     | cards the opponent has laid in this deal's play                      |
| sequence       | 8 x 52 | the current count sequence, oldest first, one one-hot row per card   |
| count          | 1      | the running count / 31                                               |
| phase          | 4      | one-hot: discard, play, deal over, game over                         |
| is_dealer      | 1      | 1 if the player deals this hand (and owns the crib)                  |
| scores         | 2      | own score, opponent's score, each / 121                              |
| target         | 1      | the target score / 121                                               |
| opp_cards_left | 1      | cards the opponent still holds / 6                                   |
| opp_said_go    | 1      | 1 if the opponent has said go in the current count sequence         |

Never in it: the opponent's hand, the opponent's discards, the stock. Before the show ends the
crib is visible only as the player's own two discards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import N_CARDS
from .game import HAND_SIZE, Game, Phase
from .rules import COUNT_LIMIT

OBSERVATION_VERSION = 0
MAX_SEQUENCE = 8  # two players lay at most 4 + 4 cards in one count sequence
SCORE_SCALE = 121.0
COUNT_SCALE = float(COUNT_LIMIT)  # the count's highest value

LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", N_CARDS),
    ("discards", N_CARDS),
    ("starter", N_CARDS),
    ("played_own", N_CARDS),
    ("played_opp", N_CARDS),
    ("sequence", MAX_SEQUENCE * N_CARDS),
    ("count", 1),
    ("phase", len(Phase)),
    ("is_dealer", 1),
    ("scores", 2),
    ("target", 1),
    ("opp_cards_left", 1),
    ("opp_said_go", 1),
)


def _slices() -> dict[str, slice]:
    slices, start = {}, 0
    for name, size in LAYOUT:
        slices[name] = slice(start, start + size)
        start += size
    return slices


SLICES: dict[str, slice] = _slices()
OBS_SIZE: int = sum(size for _, size in LAYOUT)
#: the 52-card slices that together hold every card the seat has seen (the sequence holds played
#: cards again); a card in none of them is unseen. The learned networks read them in this order
#: (agents.networks' card tokens, agents.afterstate's blocks): reordering changes their inputs
SEEN_SETS: tuple[str, ...] = ("hand", "discards", "starter", "played_own", "played_opp")


def phase_column(phase: Phase) -> int:
    """The observation's column that is 1 while the game is in ``phase`` (one-hot phase block)."""
    return SLICES["phase"].start + int(phase)

_SEQ0 = SLICES["sequence"].start


def _scales() -> np.ndarray:
    scales = np.ones(OBS_SIZE)
    for name, scale in (("count", COUNT_SCALE), ("scores", SCORE_SCALE),
                        ("target", SCORE_SCALE), ("opp_cards_left", HAND_SIZE)):
        scales[SLICES[name]] = scale
    return scales


#: what each entry of the observation is divided by: every entry is a whole number over its scale
OBS_SCALES: np.ndarray = _scales()


def pack(observations: np.ndarray) -> np.ndarray:
    """Rows of observations as the whole numbers they are made of (entry times its scale): a
    quarter of the memory as uint8 (wider only for a target score past 255), and ``unpack``
    gives back the very same float32 vectors. Raises ``ValueError`` for rows that are not
    observations."""
    observations = np.asarray(observations, dtype=np.float32)
    if observations.ndim != 2 or observations.shape[1] != OBS_SIZE:
        raise ValueError(f"pack: observations of layout version {OBSERVATION_VERSION} are rows "
                         f"of {OBS_SIZE}, got shape {observations.shape}")
    codes = np.rint(observations.astype(np.float64) * OBS_SCALES)
    if codes.size == 0:
        return codes.astype(np.uint8)
    if codes.min() < 0 or not np.array_equal(unpack(codes), observations):
        raise ValueError("pack: these rows are not observations of layout version "
                         f"{OBSERVATION_VERSION} (an entry is not a whole number over its scale)")
    return codes.astype(np.min_scalar_type(int(codes.max())))


def unpack(codes: np.ndarray) -> np.ndarray:
    """The float32 observations ``pack`` made ``codes`` from (divided as ``encode`` divides)."""
    return (np.asarray(codes, dtype=np.float64) / OBS_SCALES).astype(np.float32)


@dataclass(frozen=True, slots=True)
class ObservationView:
    """A decoded observation: what the player knows, in plain Python values."""

    hand: tuple[int, ...]
    discards: tuple[int, ...]
    starter: int | None
    played_own: tuple[int, ...]
    played_opp: tuple[int, ...]
    sequence: tuple[int, ...]
    count: int
    phase: Phase
    is_dealer: bool
    own_score: int
    opp_score: int
    target: int
    opp_cards_left: int
    opp_said_go: bool

    @property
    def unseen(self) -> tuple[int, ...]:
        """Cards this player has not seen: the opponent's hand, their discards and the stock."""
        seen = set(self.hand) | set(self.discards) | set(self.played_own) | set(self.played_opp)
        if self.starter is not None:
            seen.add(self.starter)
        return tuple(c for c in range(N_CARDS) if c not in seen)


_HAND0, _DISCARDS0, _STARTER0 = (SLICES[n].start for n in ("hand", "discards", "starter"))
_PLAYED_OWN0, _PLAYED_OPP0 = SLICES["played_own"].start, SLICES["played_opp"].start
_COUNT, _PHASE0, _IS_DEALER = SLICES["count"].start, SLICES["phase"].start, SLICES["is_dealer"].start
_SCORES0, _TARGET = SLICES["scores"].start, SLICES["target"].start
_OPP_LEFT, _OPP_GO = SLICES["opp_cards_left"].start, SLICES["opp_said_go"].start


def encode(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``player`` (0 or 1) in ``game``; writes into ``out`` if given."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32) if out is None else out
    if out is not None:
        obs.fill(0.0)
    opp = 1 - player
    # This runs on every env step. A dozen scalar stores cost less than one fancy-index store
    # (1.9 against 4.6 microseconds per observation), hence the plain loops.
    for card in game.hands[player]:
        obs[_HAND0 + card] = 1.0
    for card in game.discards[player]:
        obs[_DISCARDS0 + card] = 1.0
    for card in game.played[player]:
        obs[_PLAYED_OWN0 + card] = 1.0
    for card in game.played[opp]:
        obs[_PLAYED_OPP0 + card] = 1.0
    row = _SEQ0
    for card in game.sequence:
        obs[row + card] = 1.0
        row += N_CARDS
    if game.starter is not None:
        obs[_STARTER0 + game.starter] = 1.0
    obs[_PHASE0 + game.phase] = 1.0
    if game.dealer == player:
        obs[_IS_DEALER] = 1.0
    if game.said_go[opp]:
        obs[_OPP_GO] = 1.0
    obs[_COUNT] = game.count / COUNT_SCALE
    obs[_SCORES0] = game.scores[player] / SCORE_SCALE
    obs[_SCORES0 + 1] = game.scores[opp] / SCORE_SCALE
    obs[_TARGET] = game.target / SCORE_SCALE
    obs[_OPP_LEFT] = len(game.hands[opp]) / HAND_SIZE
    return obs


def _cards(obs: np.ndarray, name: str) -> tuple[int, ...]:
    return tuple(int(c) for c in np.flatnonzero(obs[SLICES[name]]))


def decode(obs: np.ndarray) -> ObservationView:
    """Read an observation vector back into an ``ObservationView`` (what scripted agents use)."""
    obs = np.asarray(obs)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},) for layout version "
                         f"{OBSERVATION_VERSION}, got {obs.shape}")
    starter = _cards(obs, "starter")
    rows = obs[SLICES["sequence"]].reshape(MAX_SEQUENCE, N_CARDS)
    filled = np.flatnonzero(rows.any(axis=1))
    sequence = tuple(int(np.argmax(rows[i])) for i in filled)

    def scalar(name: str, scale: float) -> int:
        return int(round(float(obs[SLICES[name].start]) * scale))

    scores = obs[SLICES["scores"]]
    return ObservationView(
        hand=_cards(obs, "hand"),
        discards=_cards(obs, "discards"),
        starter=starter[0] if starter else None,
        played_own=_cards(obs, "played_own"),
        played_opp=_cards(obs, "played_opp"),
        sequence=sequence,
        count=scalar("count", COUNT_SCALE),
        phase=Phase(int(np.argmax(obs[SLICES["phase"]]))),
        is_dealer=bool(obs[SLICES["is_dealer"].start] > 0.5),
        own_score=int(round(float(scores[0]) * SCORE_SCALE)),
        opp_score=int(round(float(scores[1]) * SCORE_SCALE)),
        target=scalar("target", SCORE_SCALE),
        opp_cards_left=scalar("opp_cards_left", HAND_SIZE),
        opp_said_go=bool(obs[SLICES["opp_said_go"].start] > 0.5),
    )
