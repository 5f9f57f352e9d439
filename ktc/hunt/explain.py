"""Which failures are already explained: an expectations entry for the target (expectations/*.toml and
``--expectations FILE``, as ``ktc run`` reads them), a Kafka bug in specs/kafka-versions.toml whose
affected releases include the target's version, or a finding already made, on a history of its shape
(known.py).  What nothing explains is a finding."""

from __future__ import annotations

from dataclasses import dataclass

from ktc.hunt.known import known
from ktc.plugin.expected import load_index
from ktc.specs import versions


@dataclass(frozen=True)
class Explainer:
    index: dict  # (clause, implementation, profile) -> expectations entry
    bugs: tuple  # (clause, change) for the Kafka bugs the target's version has
    implementation: str
    version: str = ""

    def why(self, clause: str, history) -> str | None:
        entry = self.index.get((clause, self.implementation, history.profile))
        if entry is not None:
            return f"expected ({entry['file']}): {entry['reason']}"
        bug = next((f"known: {change.id} ({change.what})" for c, change in self.bugs if c == clause), None)
        return bug or known(clause, history, self.version)


def explainer(impl, explicit) -> Explainer:
    version = str(getattr(impl, "version", ""))
    return Explainer(load_index([impl], explicit), bugs_of(version), impl.name, version)


def bugs_of(version: str) -> tuple:
    """(clause, change) for each Kafka bug whose affected range holds ``version``."""
    if not versions.RELEASE.match(version):
        return ()
    return tuple(
        (clause, change)
        for change in versions.changes()
        if change.affected and versions.in_span(version, change.affected)
        for clause in change.clauses
    )
