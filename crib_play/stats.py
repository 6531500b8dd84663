"""A player's statistics, from their finished games' records (``training.record`` format, the
person in seat 0, the opponent's name in ``players[1]``).

``game_summary(record)`` boils one game down once, when it ends (``saved.SavedStore`` keeps it
with the game, so the page never runs the analyzer again); ``player_stats(games)`` adds summaries
up by opponent:

- ``games``, ``wins``, ``win_rate`` and its 95% Wilson interval ``win_rate_ci95``;
- ``skunks_given`` / ``skunks_taken`` (the loser ended 61..90 of 121) and ``double_skunks_given`` /
  ``double_skunks_taken`` (60 or less): each game is in at most one of these;
- ``points_per_deal``: the person's mean points per completed deal, as dealer (pegging, hand, crib,
  heels) and as pone (pegging, hand), with the number of deals;
- ``discard_regret``: the mean, over the person's discards, of the best throw's exact expected net
  (``agents.analysis``) minus that of the throw made (0 = always the analyzer's choice), in points;
- ``count_practice``: claims made and how many were right (games played with count practice);
- ``over_time`` and ``points_over_time``: after each game, in the order played, the running win
  rate and the running points per game (the mean final margin), for the plot.

``over_time_svg`` draws both, one line per opponent in each of two panels (win rate above, points
per game below), as a self-contained SVG (every text escaped), for ``<img>`` on the statistics
page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from xml.sax.saxutils import escape

from crib_env.game import DOUBLE_SKUNK_MARGIN, SKUNK_MARGIN
from training.stats import wilson_interval

PERSON = 0
ROLES = {"dealer": ("pegging", "hand", "crib", "heels"), "pone": ("pegging", "hand")}


def discard_regret(hand6: list[str], thrown: list[str], dealer: bool) -> float:
    """Best expected net of the 15 throws minus that of ``thrown`` (exact analyzer), >= 0."""
    from agents.analysis import analyze_discards
    from crib_env.cards import parse_cards

    options = analyze_discards(hand6, dealer=dealer)
    throw = set(parse_cards(" ".join(thrown)))
    chosen = next(o for o in options if set(o.discard) == throw)
    return max(0.0, options[0].net - chosen.net)


def game_summary(record: dict[str, Any]) -> dict[str, Any]:
    """One finished game from the person's side (see the module docstring)."""
    winner, scores = record["winner"], record["scores"]
    won = winner == PERSON
    loser_score = scores[1 - winner]
    double = loser_score <= record["target"] - DOUBLE_SKUNK_MARGIN
    skunk = loser_score <= record["target"] - SKUNK_MARGIN and not double
    roles = {role: {"deals": 0, **dict.fromkeys(parts, 0)} for role, parts in ROLES.items()}
    regrets = []
    for deal in record["deals"]:
        dealer = deal["dealer"] == PERSON
        if len(deal["discards"][PERSON]) == 2:
            regrets.append(discard_regret(deal["hands"][PERSON], deal["discards"][PERSON], dealer))
        if not deal["completed"]:
            continue  # a deal the game ended in is not a deal's worth of points
        role = roles["dealer" if dealer else "pone"]
        role["deals"] += 1
        points = deal["points"]
        role["pegging"] += points["pegging"][PERSON]
        role["hand"] += points["hand"][PERSON]
        if dealer:
            role["crib"] += points["crib"]
            role["heels"] += points["heels"]
    claims = record.get("claims") or []
    return {"opponent": record["players"][1], "won": won, "margin": scores[0] - scores[1],
            "skunk_given": won and skunk, "double_skunk_given": won and double,
            "skunk_taken": not won and skunk, "double_skunk_taken": not won and double,
            "roles": roles, "regret_sum": sum(regrets), "discards": len(regrets),
            "claims": len(claims), "claims_right": sum(bool(c["right"]) for c in claims)}


def _opponent_stats(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    games = len(summaries)
    wins = sum(s["won"] for s in summaries)
    lo, hi = wilson_interval(wins, games)
    per_deal = {}
    for role, parts in ROLES.items():
        deals = sum(s["roles"][role]["deals"] for s in summaries)
        per_deal[role] = {"deals": deals, **{part: (sum(s["roles"][role][part] for s in summaries)
                                                    / deals if deals else None)
                                             for part in parts}}
    discards = sum(s["discards"] for s in summaries)
    claims = sum(s["claims"] for s in summaries)
    running, points, won, margin = [], [], 0, 0
    for n, s in enumerate(summaries, 1):
        won += s["won"]
        margin += s["margin"]
        running.append(won / n)
        points.append(margin / n)
    return {
        "games": games, "wins": wins, "win_rate": wins / games, "win_rate_ci95": [lo, hi],
        "points_per_game": sum(s["margin"] for s in summaries) / games,
        "skunks_given": sum(s["skunk_given"] for s in summaries),
        "skunks_taken": sum(s["skunk_taken"] for s in summaries),
        "double_skunks_given": sum(s["double_skunk_given"] for s in summaries),
        "double_skunks_taken": sum(s["double_skunk_taken"] for s in summaries),
        "points_per_deal": per_deal,
        "discard_regret": sum(s["regret_sum"] for s in summaries) / discards if discards else None,
        "discards": discards,
        "count_practice": {"claims": claims,
                           "right": sum(s["claims_right"] for s in summaries),
                           "accuracy": (sum(s["claims_right"] for s in summaries) / claims
                                        if claims else None)},
        "over_time": running,
        "points_over_time": points,
    }


def player_stats(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{"games", "wins", "opponents": {name: figures}}`` from game summaries in the order
    played (see the module docstring for the figures)."""
    by_opponent: dict[str, list[dict[str, Any]]] = {}
    for s in summaries:
        by_opponent.setdefault(s["opponent"], []).append(s)
    return {"games": sum(len(v) for v in by_opponent.values()),
            "wins": sum(s["won"] for v in by_opponent.values() for s in v),
            "opponents": {name: _opponent_stats(v) for name, v in sorted(by_opponent.items())}}


COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


def over_time_svg(stats: dict[str, Any], width: int = 640, height: int = 420) -> str:
    """The running win rate and the running points per game against each opponent after each
    game, as an SVG document: two panels over the same games axis, one line per opponent."""
    left, right, top, bottom, gap = 48, 150, 22, 30, 34
    plot_w = width - left - right
    panel_h = (height - top - bottom - gap) / 2
    opponents = list(stats["opponents"].items())
    most = max([len(o["over_time"]) for _, o in opponents] or [1])
    reach = max([abs(x) for _, o in opponents for x in o["points_over_time"]] or [0])
    reach = max(10, 10 * -(-reach // 10))  # points axis: +-reach, a multiple of 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             '<title>win rate and points per game over time</title>']

    def x_of(n: int) -> float:
        return left + plot_w * (n / (most - 1) if most > 1 else 0.5)

    panels = (("win rate", top, "over_time", lambda v: 1 - v,
               [(f, f"{f:.0%}") for f in (0, 0.25, 0.5, 0.75, 1)]),
              ("points per game", top + panel_h + gap, "points_over_time",
               lambda v: 0.5 - v / (2 * reach),
               [(v, f"{v:+g}" if v else "0") for v in (-reach, -reach / 2, 0, reach / 2, reach)]))
    for title, y0, key, place, ticks in panels:
        parts.append(f'<text x="{left}" y="{y0 - 6:.1f}" font-weight="bold">{title} (running, '
                     f'after each game)</text>')
        parts.append(f'<rect x="{left}" y="{y0:.1f}" width="{plot_w}" height="{panel_h:.1f}" '
                     f'fill="#fafafa" stroke="#999"/>')
        for value, label in ticks:
            y = y0 + panel_h * place(value)
            parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" '
                         f'stroke="#ddd"/><text x="{left - 4}" y="{y + 4:.1f}" '
                         f'text-anchor="end">{label}</text>')
        for i, (_, o) in enumerate(opponents):
            colour = COLOURS[i % len(COLOURS)]
            points = [(x_of(n), y0 + panel_h * place(v)) for n, v in enumerate(o[key])]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(f'<polyline class="{key}" points="{path}" fill="none" '
                         f'stroke="{colour}" stroke-width="2"/>')
            parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>'
                         for x, y in points)
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">'
                 f'games played (1..{most})</text>')
    for i, (name, o) in enumerate(opponents):
        colour = COLOURS[i % len(COLOURS)]
        label = escape(name if len(name) <= 22 else name[:21] + "\u2026")
        y = top + 14 + 16 * i
        parts.append(f'<rect x="{left + plot_w + 10}" y="{y - 8}" width="10" height="10" '
                     f'fill="{colour}"/><text x="{left + plot_w + 24}" y="{y + 1}">{label} '
                     f'({o["games"]})</text>')
    parts.append("</svg>")
    return "".join(parts)
