"""``ktc audit``: does the data in a topic obey the timestamp rules its config promises?

    from ktc.audit import audit
    result = audit(records_df, facts, live=True, answer=ask)   # records: the Kafka source's columns
    result.rows          # one AuditRow per check: verdict, counts, sample offsets, clause ids
    result.violations    # a DataFrame: check, clause, topic, partition, offset, timestamp_ms, detail

Checks are data with provenance (``checks.py``: clause ids, one signature); each is decided from
stored data alone or says why it cannot be (``unknown``).  Spark does the counting; the time index
is audited by asking the broker ListOffsets for sampled timestamps (``offsets.py``).  This is a judge
of stored data, not an implementation under test: it reads the specs and profiles like ``ktc/checks``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from pyspark.sql import DataFrame

from . import engine, offsets
from .engine import AuditRow
from .facts import TopicFacts
from .sources import normalised, now_ms

__all__ = ["Audit", "AuditDoc", "AuditRow", "TopicFacts", "audit"]


class AuditDoc(TypedDict):
    """One audited topic in the audit's JSON (``ktc audit`` adds its source and failure count)."""

    topic: str
    facts: dict[str, Any]  # TopicFacts' fields
    records: int
    seconds: float
    rows: list[dict[str, Any]]  # AuditRow.as_dict()


@dataclass
class Audit:
    facts: TopicFacts
    records: int
    seconds: float
    rows: list[AuditRow]
    violations: DataFrame | None
    cached: DataFrame | None = None  # the records as read, persisted: ``violations`` reads them

    def release(self) -> None:
        """Drop the cached records (after ``violations`` was written or is no longer wanted)."""
        if self.cached is not None:
            self.cached.unpersist()

    @property
    def failed(self) -> list[AuditRow]:
        """Failing checks whose clause holds in the audit's profile."""
        return [r for r in self.rows if r.verdict == "fail" and r.promised]

    def as_dict(self) -> AuditDoc:
        return {
            "topic": self.facts.topic,
            "facts": vars(self.facts),
            "records": self.records,
            "seconds": round(self.seconds, 3),
            "rows": [r.as_dict() for r in self.rows],
        }


def audit(
    records: DataFrame, facts: TopicFacts, *, live: bool = False, answer=None, samples: int = 32, seed: int = 0
) -> Audit:
    """Audit one topic's stored ``records``.  ``live``: the frame reads the topic when first used, so the
    read time is taken after that; ``answer(partition, target)`` asks the broker ListOffsets."""
    started = time.perf_counter()
    base = engine.prepare(normalised(records, facts.topic))
    count = base.count()
    facts = replace(facts, read_ms=now_ms()) if live else facts
    rows, violations = engine.run_checks(base, facts)
    rows.append(offsets.audit_offsets(base, answer, samples, seed))
    return Audit(facts, count, time.perf_counter() - started, rows, violations, base)
