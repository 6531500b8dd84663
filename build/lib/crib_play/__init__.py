"""Play and watch: a person against any agent, in the terminal (``crib play``) and in a browser
(``crib serve``), and replays of recorded games (``crib replay``).

``session.GameSession`` is the one game model both use; ``talk`` says what happens the way players
say it; ``terminal`` and ``server`` (FastAPI, the ``play`` extra) are the two front ends. This layer
sits on top of ``crib_env``, ``agents`` and ``training`` and nothing below imports it.
"""
