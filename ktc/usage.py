"""The one usage error of every ktc command (one line, exit 2, no traceback), and the check of an option
more than one command takes: the report root ``ktc run``, ``ktc matrix``, ``ktc audit`` and ``ktc hunt``
write into.  It sits below ktc/cli and ktc/hunt, so both raise the same error: the cli registers hunt's
subcommand, and hunt never imports the cli."""

from __future__ import annotations

import os
from pathlib import Path


class UsageError(Exception):
    pass


def report_root(value: str) -> Path:
    """The report root, checked now and created only when the run starts: a writable directory, or a
    path whose nearest existing ancestor is one; never a file."""
    root = Path(value).expanduser().resolve()
    existing = next(p for p in (root, *root.parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(
            f"--report {value}: {existing} is a file; give a directory (each run writes a new folder inside)"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--report {value}: {existing} is not writable; give a writable directory")
    return root
