"""``python -m mnemo`` runs the CLI."""

from mnemo.cli.main import main

main()
