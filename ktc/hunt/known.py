"""Findings already made (findings/ in the repo), as shapes a history can have: a failure of one of a finding's
clauses, on a history of its shape, on a release it affects, is that finding again, not a new one.

Each shape is a predicate on the history alone (what was sent), so a hunt that meets the same root cause through
another clause is not stopped by it, and a failure of the same clause on a history without the shape still is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ktc.reference.types import CreateTopic, History, Produce, TimestampType
from ktc.specs import versions

LAT, CT = TimestampType.LOG_APPEND_TIME, TimestampType.CREATE_TIME


@dataclass(frozen=True)
class KnownFinding:
    folder: str  # under findings/
    what: str
    affected: str  # releases its triage reproduced it on, "a-b"
    clauses: frozenset[str]
    shape: Callable[[History], bool]


def lat_batch_on_create_time_topic(history: History) -> bool:
    """A batch carrying the LogAppendTime attribute, produced to a topic created CreateTime."""
    created = {op.topic: op.config.timestamp_type for op in history.ops if isinstance(op, CreateTopic)}
    return any(
        isinstance(op, Produce) and op.batch.timestamp_type is LAT and created.get(op.topic) is CT for op in history.ops
    )


# what a stored MaxTimestamp that is not the records' max reaches: lookups, MAX_TIMESTAMP, the time index,
# and retention and rolling by the segment's largest timestamp
STORED_MAX = frozenset(
    {
        "KIP-33.list-offsets-first-offset-at-or-after",
        "KIP-33.list-offsets-not-found",
        "KIP-33.list-offsets-first-segment-only",
        "KIP-33.list-offsets-max-timestamp",
        "KIP-33.list-offsets-max-timestamp-compressed",
        "KIP-33.read-max-timestamp-holder",
        "KIP-33.read-lookup-first-match",
        "KIP-33.time-index-running-max",
        "KIP-33.time-index-strictly-increasing",
        "KIP-32.batch-max-timestamp",
        "KIP-32.retention-by-last-timestamp",
        "KIP-32.retention-segment-level",
        "KIP-32.roll-by-first-timestamp",
        "KIP-32.future-timestamp-pins-retention",
        "KIP-937.read-within-bounds",
    }
)

FINDINGS = (
    KnownFinding(
        "lat-batch-on-createtime-topic",
        "a LogAppendTime-flagged batch on a CreateTime topic is stored "
        "with its header as MaxTimestamp, not its records' max",
        "3.6.0-4.4.0",
        STORED_MAX,
        lat_batch_on_create_time_topic,
    ),
)


def known(clause: str, history: History, version: str) -> str | None:
    """The finding a failure of ``clause`` on ``history`` repeats, on an Apache Kafka ``version``, or None."""
    if not versions.RELEASE.match(version):
        return None
    for found in FINDINGS:
        if clause in found.clauses and versions.in_span(version, found.affected) and found.shape(history):
            return f"known: findings/{found.folder} ({found.what})"
    return None
