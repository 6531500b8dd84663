"""What an evaluation reports: one game's figures (``GameResult``) and the whole report.

``game_result`` reads a finished ``Game`` from the agent's side of its ``GamePlan``: the final
scores, skunks, the points of every completed deal by side and role (pegging, hand, crib, heels),
the discard regret against the exact analyzer and the win probability each deal added (from the
win-odds table). ``summarize`` turns the games' results into an ``EvaluationReport``: wins, win
rate with a Wilson 95% interval (over pairs too in duplicate mode), mean final margin with a 95%
interval, skunks, points per deal by role, regret and win chance added per deal.
``EvaluationReport.to_dict`` is the JSON of ``crib evaluate --json`` (DESIGN.md contract); the
rich tables that print it belong to the command line (``crib_cli.evaluate``).

Every figure except ``VOLATILE_KEYS`` is reproducible.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from crib_env.game import DISCARDS_PER_PLAYER, Game

from .eval_plans import ROLES, SIDES, GamePlan
from .stats import mean_interval, wilson_interval

#: the only report keys that vary from run to run
VOLATILE_KEYS = ("seconds", "games_per_second", "workers", "ms_per_decision")
#: per side and role, ``GameResult.role_points`` sums these over completed deals
ROLE_POINT_FIELDS = ("pegging", "hand", "crib", "heels", "deals")
_PEG, _HAND, _CRIB, _HEELS, _DEALS = range(len(ROLE_POINT_FIELDS))
#: ``GameResult.winprob``: win probability added as dealer, dealer deals, as pone, pone deals;
#: then by decision: added over the shows, the agent's discards, over the plays, its cards laid
WINPROB_FIELDS = ("dealer", "dealer deals", "pone", "pone deals",
                  "show", "discards", "play", "cards laid")
(_W_DEALER, _W_DEALER_DEALS, _W_PONE, _W_PONE_DEALS,
 _W_SHOW, _W_DISCARDS, _W_PLAY, _W_LAID) = range(len(WINPROB_FIELDS))

@dataclass(slots=True)
class GameResult:
    """What the report needs from one finished game (small, so it pickles cheaply)."""

    index: int
    agent_deals_first: bool
    agent_score: int
    opponent_score: int
    skunk: bool
    double_skunk: bool
    deals: int
    #: role_points[side][role] = [pegging, hand, crib, heels, completed deals]
    role_points: list[list[list[int]]]
    #: regret[side] = [summed regret, discards analyzed]
    regret: list[list[float]]
    #: the game as ``training.record`` writes it, when the evaluation records games
    record: dict[str, Any] | None = None
    #: the agent's win probability added (``deal_win_probability``), by ``WINPROB_FIELDS``; None
    #: without the win-odds table
    winprob: list[float] | None = None
    #: [[seconds, decisions] of the agent, of the opponent] choosing cards; None where both
    #: sides act in batch (``eval_play.run_block``)
    decision_time: list[list[float]] | None = None

    @property
    def agent_won(self) -> bool:
        return self.agent_score > self.opponent_score

    @property
    def margin(self) -> int:
        return self.agent_score - self.opponent_score


RegretFn = Callable[[Sequence[int], Sequence[int], bool], float]


def game_result(game: Game, plan: GamePlan, regret_fn: RegretFn | None = None) -> GameResult:
    """Summarise a finished game from the agent's side of ``plan``."""
    seat = plan.agent_seat
    role_points = [[[0] * len(ROLE_POINT_FIELDS) for _ in ROLES] for _ in SIDES]
    regret = [[0.0, 0.0] for _ in SIDES]
    for record in game.records:
        for player in (0, 1):
            side = 0 if player == seat else 1
            is_dealer = player == record.dealer
            if regret_fn is not None and len(record.discards[player]) == DISCARDS_PER_PLAYER:
                regret[side][0] += regret_fn(record.hands[player], record.discards[player],
                                             is_dealer)
                regret[side][1] += 1
            if not record.completed:  # a deal cut short by the game's end would bias the means
                continue
            acc = role_points[side][0 if is_dealer else 1]
            acc[_PEG] += record.pegging[player]
            acc[_HAND] += record.hand[player]
            if is_dealer:
                acc[_CRIB] += record.crib
                acc[_HEELS] += record.heels
            acc[_DEALS] += 1
    winprob = deal_win_probability(game, seat)
    return GameResult(
        index=plan.index,
        agent_deals_first=plan.agent_deals_first,
        agent_score=game.scores[seat],
        opponent_score=game.scores[1 - seat],
        skunk=game.skunk,
        double_skunk=game.double_skunk,
        deals=len(game.records),
        role_points=role_points,
        regret=regret,
        winprob=winprob,
    )


@lru_cache(maxsize=1)
def _odds_table() -> Any:
    from crib_env.odds import OddsTableError, default_table

    try:
        return default_table()
    except OddsTableError:
        return None  # reported as unavailable, never guessed


def deal_win_probability(game: Game, seat: int) -> list[float] | None:
    """The change in ``seat``'s chance to win (the win-odds table) over each deal, from the deal's
    start (scores, who deals) to the next deal's start, or to 1 / 0 when the deal ends the game;
    as ``WINPROB_FIELDS``:

    * by role: summed over the deals ``seat`` dealt and those it did not, with their counts. Under
      the table's own strategy (standard vs standard) each deal's change averages zero, so the
      mean says how much win probability a side adds per deal over that level, and in which role;
    * by decision: the change over each deal's play (both sides' pegging, from the board after
      the cut) summed with the cards ``seat`` laid, and the change over its show (hands and crib,
      what the discards decided) with the cards ``seat`` discarded. The heels, luck of the cut,
      count in neither.

    None without the table or for a target other than the table's."""
    table = _odds_table()
    if table is None or game.target != table.target:
        return None
    target = game.target
    out = [0.0] * len(WINPROB_FIELDS)

    def chance(board: list[int], seat_deals_next: bool) -> float:
        if max(board) >= target:
            return 1.0 if board[seat] >= target else 0.0
        return table.win_probability(board[seat], board[1 - seat], seat_deals_next)

    start = [0, 0]
    for record in game.records:
        deals = record.dealer == seat
        heels = [record.heels if p == record.dealer else 0 for p in (0, 1)]
        cut = [min(start[p] + heels[p], target) for p in (0, 1)]
        played = [min(cut[p] + record.pegging[p], target) for p in (0, 1)]  # none after a win
        end = [min(start[p] + record.points(p), target) for p in (0, 1)]
        before = chance(start, deals)
        after_cut, after_play = chance(cut, deals), chance(played, deals)
        after = chance(end, not deals)  # the next deal is dealt by this deal's pone
        role = _W_DEALER if deals else _W_PONE
        out[role] += after - before
        out[role + 1] += 1  # the role's deal count follows its sum
        out[_W_PLAY] += after_play - after_cut
        out[_W_LAID] += record.laid[seat]
        out[_W_SHOW] += after - after_play
        out[_W_DISCARDS] += len(record.discards[seat])
        start = end
    return out


def exact_regret_fn() -> RegretFn | None:
    """Expected points a discard gives away against the best one by the exact analyzer
    (``agents.analysis.analyze_discards``), or None while that analyzer is not available."""
    try:
        from agents.analysis import analyze_discards
    except ImportError:
        return None

    # Duplicate mode deals every hand twice, so a small cache halves the analyzer's work there.
    @lru_cache(maxsize=1024)
    def regrets(hand: tuple[int, ...], dealer: bool) -> dict[frozenset[int], float]:
        options = analyze_discards(hand, dealer)
        best = float(options[0].net)
        return {frozenset(o.discard): max(0.0, best - float(o.net)) for o in options}

    def regret(hand: Sequence[int], discard: Sequence[int], dealer: bool) -> float:
        by_discard = regrets(tuple(sorted(hand)), dealer)
        try:
            return by_discard[frozenset(discard)]
        except KeyError:
            raise ValueError(f"discard {sorted(discard)} is not one of the analyzer's options "
                             f"for hand {sorted(hand)}") from None

    return regret



def _r(x: float) -> float:
    return round(float(x), 6)


@dataclass
class EvaluationReport:
    """The result of ``evaluate``. ``to_dict()`` is the JSON of ``crib evaluate --json``."""

    agent: str
    opponent: str
    games: int
    seed: int
    duplicate: bool
    target: int
    wins: int
    losses: int
    win_rate: float
    win_rate_ci95: tuple[float, float]
    points_per_game: float  # mean final margin, agent minus opponent
    points_per_game_ci95: tuple[float, float]
    #: duplicate mode: the win-rate interval over pairs (Wilson treats games as independent,
    #: which is conservative when the deals are shared); None in plain mode
    win_rate_ci95_paired: tuple[float, float] | None
    mean_score: float
    mean_opponent_score: float
    skunks_given: int
    skunks_taken: int
    double_skunks_given: int
    double_skunks_taken: int
    first_dealer_wins: int  # games won by whichever side dealt first
    deals_per_game: float
    #: per_deal[side][role] = {"pegging", "hand", "crib", "heels", "total", "deals"}: mean points
    #: per completed deal (a deal cut short by the game's end is left out)
    per_deal: dict[str, dict[str, dict[str, float]]]
    #: mean expected points lost per discard against the exact analyzer, by side; None if the
    #: analyzer is unavailable or regret was switched off
    discard_regret: dict[str, float] | None
    #: the agent's mean win probability added per deal by role (``deal_win_probability``):
    #: {"dealer", "pone", "all"}; None without the win-odds table
    winprob_per_deal: dict[str, float] | None = None
    #: the agent's mean win probability added per decision (``deal_win_probability``):
    #: "discard" (the shows, per card discarded) and "play" (the plays, per card laid); None
    #: without the win-odds table
    winprob_per_decision: dict[str, float] | None = None
    seconds: float = 0.0
    games_per_second: float = 0.0
    workers: int = 1
    #: mean milliseconds per decision {"agent", "opponent"}, each side timed in the same games;
    #: None where both sides act in batch (a decision's time is then a share of one call)
    ms_per_decision: dict[str, float] | None = None
    margins: list[int] = field(default_factory=list, repr=False)  # per game, in index order
    #: per game, in index order, when ``evaluate(record_games=True)`` (``training.record``)
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_dict(self, volatile: bool = True) -> dict[str, Any]:
        """JSON-ready dict; ``volatile=False`` leaves out the timing keys (``VOLATILE_KEYS``)."""
        out: dict[str, Any] = {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "win_rate": _r(self.win_rate),
            "win_rate_ci95": [_r(v) for v in self.win_rate_ci95],
            "points_per_game": _r(self.points_per_game),
            "points_per_game_ci95": [_r(v) for v in self.points_per_game_ci95],
            "win_rate_ci95_paired": (None if self.win_rate_ci95_paired is None
                                     else [_r(v) for v in self.win_rate_ci95_paired]),
            "seed": self.seed,
            "duplicate": self.duplicate,
            "target": self.target,
            "mean_score": _r(self.mean_score),
            "mean_opponent_score": _r(self.mean_opponent_score),
            "skunks_given": self.skunks_given,
            "skunks_taken": self.skunks_taken,
            "double_skunks_given": self.double_skunks_given,
            "double_skunks_taken": self.double_skunks_taken,
            "first_dealer_wins": self.first_dealer_wins,
            "deals_per_game": _r(self.deals_per_game),
            "per_deal": {side: {role: {k: _r(v) for k, v in values.items()}
                                for role, values in roles.items()}
                         for side, roles in self.per_deal.items()},
            "discard_regret": (None if self.discard_regret is None
                               else {k: _r(v) for k, v in self.discard_regret.items()}),
            "winprob_per_deal": (None if self.winprob_per_deal is None
                                 else {k: _r(v) for k, v in self.winprob_per_deal.items()}),
            "winprob_per_decision": (None if self.winprob_per_decision is None else
                                     {k: _r(v) for k, v in self.winprob_per_decision.items()}),
        }
        if volatile:
            out.update(seconds=_r(self.seconds), games_per_second=_r(self.games_per_second),
                       workers=self.workers,
                       ms_per_decision=(None if self.ms_per_decision is None else
                                        {k: _r(v) for k, v in self.ms_per_decision.items()}))
        return out

    def to_json(self, volatile: bool = True) -> str:
        return json.dumps(self.to_dict(volatile), indent=2)


def summarize(results: Sequence[GameResult], agent: str, opponent: str, seed: int,
              duplicate: bool, target: int, regret: bool) -> EvaluationReport:
    """Build the report from per-game results (in index order)."""
    n = len(results)
    margins = [r.margin for r in results]
    wins = sum(r.agent_won for r in results)
    win_rate = wins / n
    limits = (-float(target), float(target))
    if duplicate:
        # Games 2k and 2k+1 share their deals: the pair, not the game, is the independent unit.
        pair_margins = [(margins[i] + margins[i + 1]) / 2 for i in range(0, n, 2)]
        pair_wins = [(results[i].agent_won + results[i + 1].agent_won) / 2 for i in range(0, n, 2)]
        points, lo, hi = mean_interval(pair_margins, limits)
        _, wlo, whi = mean_interval(pair_wins, (0.0, 1.0))
        paired: tuple[float, float] | None = (wlo, whi)
    else:
        points, lo, hi = mean_interval(margins, limits)
        paired = None

    per_deal: dict[str, dict[str, dict[str, float]]] = {}
    for s, side in enumerate(SIDES):
        per_deal[side] = {}
        for ro, role in enumerate(ROLES):
            sums = [sum(r.role_points[s][ro][k] for r in results)
                    for k in range(len(ROLE_POINT_FIELDS))]
            deals = sums[_DEALS]
            mean = [x / deals if deals else 0.0 for x in sums[:_DEALS]]
            per_deal[side][role] = {"pegging": mean[_PEG], "hand": mean[_HAND],
                                    "crib": mean[_CRIB], "heels": mean[_HEELS],
                                    "total": sum(mean), "deals": float(deals)}

    discard_regret = None
    if regret and any(r.regret[0][1] for r in results):
        discard_regret = {}
        for s, side in enumerate(SIDES):
            count = sum(r.regret[s][1] for r in results)
            discard_regret[side] = math.fsum(r.regret[s][0] for r in results) / count

    winprob_per_deal = winprob_per_decision = None
    if results and all(r.winprob is not None for r in results):
        sums = [math.fsum(r.winprob[k] for r in results) for k in range(len(WINPROB_FIELDS))]
        dealer, dealer_deals = sums[_W_DEALER], sums[_W_DEALER_DEALS]
        pone, pone_deals = sums[_W_PONE], sums[_W_PONE_DEALS]
        winprob_per_deal = {"dealer": dealer / max(dealer_deals, 1),
                            "pone": pone / max(pone_deals, 1),
                            "all": (dealer + pone) / max(dealer_deals + pone_deals, 1)}
        winprob_per_decision = {"discard": sums[_W_SHOW] / max(sums[_W_DISCARDS], 1),
                                "play": sums[_W_PLAY] / max(sums[_W_LAID], 1)}

    ms_per_decision = None
    if results and all(r.decision_time is not None for r in results):
        ms_per_decision = {}
        for s, side in enumerate(SIDES):
            seconds = math.fsum(r.decision_time[s][0] for r in results)
            decisions = sum(r.decision_time[s][1] for r in results)
            ms_per_decision[side] = 1e3 * seconds / max(decisions, 1)

    return EvaluationReport(
        agent=agent, opponent=opponent, games=n, seed=seed, duplicate=duplicate, target=target,
        wins=wins, losses=n - wins, win_rate=win_rate,
        win_rate_ci95=wilson_interval(wins, n),
        points_per_game=points, points_per_game_ci95=(lo, hi),
        win_rate_ci95_paired=paired,
        mean_score=sum(r.agent_score for r in results) / n,
        mean_opponent_score=sum(r.opponent_score for r in results) / n,
        skunks_given=sum(r.skunk and r.agent_won for r in results),
        skunks_taken=sum(r.skunk and not r.agent_won for r in results),
        double_skunks_given=sum(r.double_skunk and r.agent_won for r in results),
        double_skunks_taken=sum(r.double_skunk and not r.agent_won for r in results),
        first_dealer_wins=sum(r.agent_won == r.agent_deals_first for r in results),
        deals_per_game=sum(r.deals for r in results) / n,
        per_deal=per_deal,
        discard_regret=discard_regret,
        winprob_per_deal=winprob_per_deal,
        winprob_per_decision=winprob_per_decision,
        ms_per_decision=ms_per_decision,
        margins=margins,
    )
