"""A client library under test, as a declaration: its name, language, versions, and how its driver is launched.

    KAFKAJS = Library(
        name="kafkajs", language="javascript", default_version="2.2.4",
        versions=("1.11.0", "1.12.0", "2.2.4"),
        launcher="ktc.implementations.clients.drivers.node:launch",   # (Library, version) -> argv
    )

``launcher`` is an object or a ``module:attribute`` string imported when the driver is first needed; it builds or
installs the driver into ktc's cache once and returns the argv that starts it, or raises ``Unavailable`` with
the reason (a missing toolchain, a registry that refused the version): the library's rows are then ``not run``
with that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class Unavailable(RuntimeError):
    """The driver cannot be built or started here; the message says why in one line."""


@dataclass(frozen=True)
class Library:
    name: str
    language: str
    default_version: str
    versions: tuple[str, ...]
    launcher: Callable[[Library, str], list[str]] | str
