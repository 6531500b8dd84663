"""The peg board the page draws (``GET /api/board``): where every hole is, as a cribbage board has
them.

The holes 1..target - 1 run in streets of ``STREET`` holes (four streets for a game to 121), each
street in groups of ``GROUP`` with a wider gap between groups, the streets back and forth (the
first left to right, the next right to left, ...). Every player has a track, a lane of holes in
each street (two tracks, or three for three players). Score 0 is a start hole before the first
street in each track; the target is the one game hole after the last street, shared by the
tracks. The skunk line is drawn across the tracks just past hole ``target - SKUNK_MARGIN`` (90 of
121) and the double skunk line past ``target - DOUBLE_SKUNK_MARGIN`` (60): the loser's front peg
at or behind a line at the end is a skunk or a double skunk (``crib_env.game``).

Coordinates are SVG user units, (0, 0) the top left corner.
"""

from __future__ import annotations

import math
from typing import Any

from crib_env.game import DEFAULT_TARGET, DOUBLE_SKUNK_MARGIN, SKUNK_MARGIN

STREET = 30  # holes in a street, as on a real board
GROUP = 5  # holes in a group
HOLE_DX = 16.0  # between two holes of a group
GROUP_GAP = 10.0  # extra space between two groups
LANE_DY = 14.0  # between the tracks of a street
STREET_GAP = 16.0  # between two streets
MARGIN = 40.0  # left and right of the streets: the start holes and the game hole sit there
TOP = 16.0
HOLE_R = 3.0
MAX_TRACKS = 3


def _street_width() -> float:
    groups = math.ceil(STREET / GROUP)
    return (STREET - 1) * HOLE_DX + (groups - 1) * GROUP_GAP


def board_layout(target: int = DEFAULT_TARGET, tracks: int = 2) -> dict[str, Any]:
    """The board for a game to ``target`` with ``tracks`` tracks: ``width``, ``height``,
    ``target``, ``streets`` (each a box: ``x``, ``y``, ``width``, ``height``, and its first and
    last hole), ``holes`` (``holes[track][score]`` = [x, y] for every score 0..target),
    ``lines`` (``name`` skunk or double skunk, ``score``: the last hole behind it, ``x1``, ``y1``,
    ``x2``, ``y2``) and the geometry's constants. ``ValueError`` for a target or track count
    the board cannot have."""
    if isinstance(target, bool) or not isinstance(target, int) or not 2 <= target <= DEFAULT_TARGET:
        raise ValueError(f"board: target must be a whole number 2..{DEFAULT_TARGET}, got "
                         f"{target!r}")
    if isinstance(tracks, bool) or tracks not in range(2, MAX_TRACKS + 1):
        raise ValueError(f"board: tracks must be 2..{MAX_TRACKS}, got {tracks!r}")
    n_streets = math.ceil((target - 1) / STREET)
    street_w = _street_width()
    street_h = (tracks - 1) * LANE_DY + 2 * HOLE_R + 8.0
    width = 2 * MARGIN + street_w
    height = 2 * TOP + n_streets * street_h + (n_streets - 1) * STREET_GAP

    def street_top(k: int) -> float:
        return TOP + k * (street_h + STREET_GAP)

    def lane_y(k: int, track: int) -> float:
        return street_top(k) + 4.0 + HOLE_R + track * LANE_DY

    def along(i: int) -> float:  # the i-th hole of a street (0-based) from the street's start
        return i * HOLE_DX + (i // GROUP) * GROUP_GAP

    def hole(score: int, track: int) -> tuple[float, float]:
        k, i = divmod(score - 1, STREET)
        x = MARGIN + (along(i) if k % 2 == 0 else street_w - along(i))
        return x, lane_y(k, track)

    last = n_streets - 1
    game_side_x = MARGIN / 2 if last % 2 else width - MARGIN / 2  # past the last street's end
    middle_y = (lane_y(last, 0) + lane_y(last, tracks - 1)) / 2
    holes = []
    for track in range(tracks):
        row = [[MARGIN / 2, lane_y(0, track)]]  # the start hole, before the first street
        row += [list(hole(s, track)) for s in range(1, target)]
        row.append([game_side_x, middle_y])  # the game hole
        holes.append([[round(x, 2), round(y, 2)] for x, y in row])
    streets = [{"x": MARGIN - HOLE_R - 4, "y": street_top(k), "width": street_w + 2 * HOLE_R + 8,
                "height": street_h, "first": k * STREET + 1,
                "last": min((k + 1) * STREET, target - 1)} for k in range(n_streets)]
    lines = []
    for name, margin in (("skunk", SKUNK_MARGIN), ("double skunk", DOUBLE_SKUNK_MARGIN)):
        score = target - margin
        if score < 1:
            continue
        k, i = divmod(score - 1, STREET)
        x, _ = hole(score, 0)
        step = HOLE_DX / 2 if (i + 1) % GROUP else (HOLE_DX + GROUP_GAP) / 2
        x += step if k % 2 == 0 else -step  # just past the hole, the way the street runs
        lines.append({"name": name, "score": score, "x1": round(x, 2),
                      "y1": round(street_top(k), 2), "x2": round(x, 2),
                      "y2": round(street_top(k) + street_h, 2)})
    return {"width": round(width, 2), "height": round(height, 2), "target": target,
            "tracks": tracks, "street": STREET, "group": GROUP, "hole_r": HOLE_R,
            "streets": streets, "holes": holes, "lines": lines}
