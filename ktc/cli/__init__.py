"""The ``ktc`` command: ``commands`` (the subcommands and their parsers), ``run`` (``ktc run`` as a
supervised process), ``reports`` (report, replay, diff, failures, expectations), ``common`` (the
one-line usage error), ``citations`` (which tests cite which clause)."""

from ktc.cli.commands import main

__all__ = ["main"]
