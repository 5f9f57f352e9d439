"""The reference model as an implementation under test (the oracle judged by its own suites)."""

from __future__ import annotations

from collections.abc import Sequence

from ktc import reference
from ktc.reference import kip228
from ktc.reference.types import History, Trace
from ktc.specs.profiles import names

from .protocol import Capabilities


class ReferenceImplementation:
    name = "reference"
    version = "1"
    kip228_tables = kip228  # the oracle answers the KIP-228 tables itself

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset(names()))

    def describe(self) -> str:
        return "ktc's reference model (the oracle judged by its own suites)"

    def run(self, histories: Sequence[History]) -> list[Trace]:
        return [reference.run(h) for h in histories]
