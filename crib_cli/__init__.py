"""The ``crib`` command and its subcommands (``crib_cli.main:main``, the console script), the top
layer: it may import every other package of the project (``crib_env`` < ``agents`` < ``training``
< ``crib_play``), and none of them imports it."""
