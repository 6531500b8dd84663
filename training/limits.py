"""The stated limits on what a command or a file may ask for, in one place (no imports, so the
command line can read them without loading the engine).

Each limit is far above any real use and low enough that the work or memory it allows stays
bounded; going over one is a ``ValueError`` that names the option or field and the limit.

* ``MAX_GAMES``: games per evaluation (``crib evaluate --games``, a tournament's games per
  pairing). Every game's result is kept for the report (about 2 KB each, measured in
  ``tests/test_limits.py``), so a million games hold about 2 GB.
* ``MAX_RECORD_TARGET``, ``MAX_RECORD_DEALS``, ``MAX_RECORD_ACTIONS``: a recorded game
  (``training.record``): its target score, its deals and its actions (one card each). A game
  to 121 has about 10 deals and 120 actions; a deal has exactly ``ACTIONS_PER_DEAL`` actions and
  scores at least one point (the last card), so a record's deals never exceed twice its target
  and its actions never exceed ``ACTIONS_PER_DEAL`` times its deals.
"""

MAX_GAMES = 1_000_000
MAX_RECORD_TARGET = 10_000
MAX_RECORD_DEALS = 2_500
ACTIONS_PER_DEAL = 12  # four discards and eight cards played
MAX_RECORD_ACTIONS = MAX_RECORD_DEALS * ACTIONS_PER_DEAL


def check_games(games: object, option: str = "--games") -> None:
    """Refuse (``ValueError`` naming ``option``) a game count above ``MAX_GAMES``; whether it is a
    positive whole number is checked where the games are played."""
    if isinstance(games, int) and games > MAX_GAMES:
        raise ValueError(f"{option} must be at most {MAX_GAMES:,} (training.limits: every game's "
                         f"result is kept for the report), got {games:,}")
