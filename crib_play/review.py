"""The review of a finished game (``crib review``, the page's "Review this game"): for each of one
seat's decisions, what was done, the best choice and the chance to win each gives.

- Discards: the exact analyzer's hand, crib and net for the 15 throws (``agents.analysis``), and
  each throw's chance to win at the board position, the rest of the deal simulated from it and
  then the win-odds table (``chances.throw_win_chances``, ``sims`` simulations a throw, the same
  deals for every throw, with the standard error). The best throw is the one most likely to win.
- Plays: the chance to win after each legal card, as the search agent (``champion-search``, or
  another agent whose ``last_values`` give it) values it from the seat's own observation, the
  agent having been shown every earlier observation of that seat in the game (its memory of the
  deal is the one it would have had in that seat). A card that was the only one legal is not a
  decision.

``loss`` is the best choice's chance minus the chosen one's (0 when the best was chosen);
``biggest`` lists the decisions that lost most, biggest first (at most ``MAX_BIGGEST``, each
losing at least ``MIN_LOSS``). The game is replayed from its record (``training.record``), so a
review needs nothing but the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crib_env.cards import RANK, SUIT, card_str
from crib_env.game import HAND_SIZE, Phase
from crib_env.observation import encode

from .chances import THROW_SIMS, check_sims, throw_win_chances

REVIEW_AGENT = "champion-search"
#: ``crib serve``'s reviews: a standard error of about 1.5% a throw (the differences between throws,
#: on the same deals, far less); a game to 121 reviewed in well under a minute on one core
REVIEW_SIMS = 1000
MAX_BIGGEST = 5
MIN_LOSS = 0.001  # a loss under a tenth of a percent is below what the review can tell apart
REVIEW_VERSION = 1


@dataclass(frozen=True)
class ReviewSettings:
    """How ``review_record`` is run: ``sims`` simulations a throw, plays valued by ``agent``."""

    sims: int = THROW_SIMS
    agent: str = REVIEW_AGENT
    seed: int = 0

    def review(self, record: dict[str, Any], seat: int = 0) -> dict[str, Any]:
        return review_record(record, seat=seat, sims=self.sims, agent=self.agent, seed=self.seed)


def check_seat(seat: Any) -> int:
    if isinstance(seat, bool) or seat not in (0, 1):
        raise ValueError(f"--seat must be 0 or 1 (the record's players[0] or players[1]), got "
                         f"{seat!r}")
    return int(seat)


def review_record(record: dict[str, Any], seat: int = 0, sims: int = THROW_SIMS,
                  agent: str = REVIEW_AGENT, seed: int = 0) -> dict[str, Any]:
    """The review of ``record``'s game from ``seat``'s side (see the module docstring):
    ``players``, ``seat``, ``target``, ``scores``, ``winner``, ``settings`` {sims, agent, seed},
    ``decisions`` (in the order made) and ``biggest`` (indices into ``decisions``). A record that
    does not replay, a bad seat or ``sims`` raise ``ValueError`` before any simulation."""
    from training.eval_play import build_agent
    from training.record import replay, replay_steps

    seat = check_seat(seat)
    check_sims(sims)
    replay(record)  # the whole record checked first
    player = build_agent(agent, seed=seed)
    if not hasattr(player, "last_values"):
        raise ValueError(f"review agent {agent!r} does not value its choices (no last_values): "
                         f"use {REVIEW_AGENT}")
    player.reset()
    steps = replay_steps(record)
    game = next(steps)
    decisions: list[dict[str, Any]] = []
    for index, action in enumerate(record["actions"]):
        if game.to_move == seat and game.phase in (Phase.DISCARD, Phase.PLAY):
            if game.phase == Phase.DISCARD and len(game.hands[seat]) == HAND_SIZE:
                deal = record["deals"][len(game.records) - 1]
                decisions.append(_discard_decision(game, seat, deal["discards"][seat], sims,
                                                   seed, index))
            legal = game.legal_actions()
            player.act(encode(game, seat), game.legal_mask())  # the agent sees every observation
            if game.phase == Phase.PLAY and len(legal) > 1 and player.last_values:
                decisions.append(_play_decision(game, seat, action, dict(player.last_values),
                                                index))
        next(steps)
    for n, decision in enumerate(decisions):
        decision["n"] = n
        decision["text"] = decision_text(decision)
    ranked = sorted((d for d in decisions if d["loss"] >= MIN_LOSS), key=lambda d: -d["loss"])
    return {"version": REVIEW_VERSION, "players": list(record["players"]), "seat": seat,
            "target": record["target"], "scores": list(record["scores"]),
            "winner": record.get("winner"),
            "settings": {"sims": sims, "agent": agent, "seed": seed},
            "decisions": decisions, "biggest": [d["n"] for d in ranked[:MAX_BIGGEST]]}


def _discard_decision(game: Any, seat: int, thrown: list[str], sims: int, seed: int,
                      index: int) -> dict[str, Any]:
    from agents.analysis import analyze_discards

    hand6 = sorted(game.hands[seat], key=lambda c: (RANK[c], SUIT[c]))  # as players hold them
    dealer = game.dealer == seat
    own, opp = game.scores[seat], game.scores[1 - seat]
    wins = throw_win_chances(hand6, dealer, own, opp, game.target, sims, seed)
    options = []
    for o in analyze_discards(hand6, dealer=dealer):
        chance = wins[frozenset(o.discard)]
        options.append({"throw": [card_str(c) for c in o.discard],
                        "keep": [card_str(c) for c in o.keep], "hand": round(o.hand, 3),
                        "crib": round(o.crib, 3), "net": round(o.net, 3),
                        "win_chance": chance.chance, "win_stderr": chance.stderr})
    chosen = next(o for o in options if set(o["throw"]) == set(thrown))
    best = max(options, key=lambda o: o["win_chance"])
    return {"kind": "discard", "action": index, "deal": len(game.records), "dealer": dealer,
            "scores": [own, opp], "hand": [card_str(c) for c in hand6],
            "chosen": chosen["throw"], "best": best["throw"], "best_net": options[0]["throw"],
            "chosen_win": chosen["win_chance"], "best_win": best["win_chance"],
            "loss": best["win_chance"] - chosen["win_chance"], "options": options}


def _play_decision(game: Any, seat: int, action: str, values: dict[int, float],
                   index: int) -> dict[str, Any]:
    from crib_env.cards import parse_card

    chosen = parse_card(action)
    best = max(values, key=lambda c: values[c])
    options = [{"card": card_str(c), "win_chance": v}
               for c, v in sorted(values.items(), key=lambda cv: -cv[1])]
    return {"kind": "play", "action": index, "deal": len(game.records),
            "dealer": game.dealer == seat,
            "scores": [game.scores[seat], game.scores[1 - seat]],
            "hand": [card_str(c) for c in sorted(game.hands[seat], key=lambda c: (RANK[c], SUIT[c]))],
            "count": game.count,
            "sequence": [card_str(c) for c in game.sequence],
            "chosen": card_str(chosen), "best": card_str(best),
            "chosen_win": values[chosen], "best_win": values[best],
            "loss": values[best] - values[chosen], "options": options}


def decision_text(decision: dict[str, Any]) -> str:
    """One line: what was done, the best choice, and the chance each gives."""
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    if decision["kind"] == "discard":
        did, best = " ".join(decision["chosen"]), " ".join(decision["best"])
        what = f"deal {decision['deal']}, threw {did} from {' '.join(decision['hand'])}"
    else:
        did, best = decision["chosen"], decision["best"]
        what = f"deal {decision['deal']}, laid {did} on a count of {decision['count']}"
    if decision["loss"] < MIN_LOSS:
        return f"{what}: the best choice ({pct(decision['chosen_win'])} to win)"
    return (f"{what}: {pct(decision['chosen_win'])} to win; {best} gave "
            f"{pct(decision['best_win'])} (-{pct(decision['loss'])})")
