"""Where ktc's own files are, installed or in a clone: found from the packages, never from the clone's layout."""

from __future__ import annotations

from pathlib import Path

from ktc import expectations, suites


def suites_dir() -> Path:
    return Path(suites.__file__).resolve().parent


def expectations_dir() -> Path:
    return Path(expectations.__file__).resolve().parent


def install_root() -> Path:
    """The directory holding ktc's top-level packages: the clone, or site-packages for a wheel."""
    return suites_dir().parent


def checkout() -> Path | None:
    """The git checkout ktc runs from, if it runs from one (a wheel does not)."""
    root = install_root()
    return root if (root / ".git").exists() else None
