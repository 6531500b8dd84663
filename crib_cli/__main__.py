"""``python -m crib_cli ...`` runs the ``crib`` command."""

from crib_cli.main import main

main()
