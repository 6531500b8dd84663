"""``POST /api/replay``'s answer: every position of a recorded game, both hands visible.

The record is checked against ``limits.check_record`` first; the replay then costs time linear in
its actions (the engine steps once per action, twice in all, and the pegs and the talk are read
from the growing log once)."""

from __future__ import annotations

from typing import Any

from crib_env.cards import card_str
from crib_env.game import Phase

from .talk import PegCounter, announcements


def replay_frames(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every position of a recorded game, both hands visible: one frame before the first move
    and one after each move, with the table talk that move produced."""
    from training.record import replay, replay_steps

    finished = replay(record)  # checks the whole record first
    names = record["players"]
    talk = announcements(finished.log, names)
    frames, said, counter = [], 0, PegCounter()
    for step, game in enumerate(replay_steps(record)):
        end = len(game.log)
        new = []
        while said < len(talk) and talk[said].log_index < end:
            new.append(talk[said].text)
            said += 1
        counter.update(game.log)
        deal = game.records[-1]
        over = game.phase in (Phase.GAME_OVER, Phase.DEAL_OVER)
        frames.append({
            "step": step,
            "action": record["actions"][step - 1] if step else None,
            "deal": len(game.records),
            "dealer": game.dealer,
            "phase": game.phase.name.lower(),
            "to_move": None if over else game.to_move,
            "scores": [{"front": counter.front[p], "back": counter.back[p]} for p in (0, 1)],
            "hands": [[card_str(c) for c in game.hands[p]] for p in (0, 1)],
            "dealt": [[card_str(c) for c in deal.hands[p]] for p in (0, 1)],
            "discards": [[card_str(c) for c in game.discards[p]] for p in (0, 1)],
            "played": [[card_str(c) for c in game.played[p]] for p in (0, 1)],
            "starter": card_str(game.starter) if game.starter is not None else None,
            "count": game.count,
            "sequence": [card_str(c) for c in game.sequence],
            "talk": new,
        })
    return frames
