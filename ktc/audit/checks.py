"""The audit's checks: rules decidable from stored data alone, as data with provenance.

Every check has one signature, ``rule(facts, columns) -> Rule | str``: a Rule says, as Spark
Columns over the stored records (or, for ``unit="batches"``, over one row per batch), which rows
it applies to, which of them violate it, and a one-line detail; a string says why the check cannot
be decided from what was read (its verdict is then ``unknown``).  ``kind="notice"`` counts what is
worth knowing but breaks no clause (NO_TIMESTAMP and negative timestamps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from ktc.specs.profiles import get as get_profile

from .facts import LONG_MAX, TopicFacts


@dataclass(frozen=True)
class Rule:
    applies: Column
    violates: Column
    detail: Column


@dataclass(frozen=True)
class AuditCheck:
    id: str
    clauses: tuple[str, ...]
    unit: str  # "records" or "batches"
    kind: str  # "check" (a clause's rule) or "notice"
    describe: str
    rule: Callable[[TopicFacts, frozenset], Rule | str]


CHECKS: dict[str, AuditCheck] = {}


def audit_check(check_id: str, *clauses: str, describe: str, unit: str = "records", kind: str = "check"):
    def register(rule):
        CHECKS[check_id] = AuditCheck(check_id, clauses, unit, kind, describe, rule)
        return rule

    return register


def text(*parts) -> Column:
    return F.concat(*[p if isinstance(p, Column) else F.lit(str(p)) for p in parts])


def data() -> Column:
    return ~F.col("control")


def ts() -> Column:
    return F.col("timestamp_ms")


@audit_check(
    "timestamp-type-matches-config",
    "KIP-32.log-append-time-assigned",
    "KIP-32.create-time-kept",
    describe="every record's timestamp type is the one message.timestamp.type names now",
)
def type_matches(facts: TopicFacts, columns: frozenset) -> Rule:
    wanted = 1 if facts.timestamp_type == "LogAppendTime" else 0
    return Rule(
        data(),
        F.col("timestampType") != wanted,
        text("timestampType ", F.col("timestampType"), f" in a {facts.timestamp_type} topic"),
    )


@audit_check(
    "create-time-within-after-bound",
    "KIP-937.after-bound",
    describe="no CreateTime record is later than its append time + the after bound (append time <= the read's end)",
)
def after_bound(facts: TopicFacts, columns: frozenset) -> Rule | str:
    latest = facts.latest_append_ms()
    if latest is None:
        return "the read time is unknown (a file source): no upper bound on any record's append time"
    after = facts.window()[1]
    applies = data() & (F.col("timestampType") == 0) & (ts() != facts.sentinel)
    if latest + after >= LONG_MAX:
        return Rule(applies, F.lit(False), F.lit(None).cast("string"))
    return Rule(
        applies, ts() > F.lit(latest + after), text("timestamp ", ts(), f" > read end {latest} + after bound {after}")
    )


@audit_check(
    "create-time-within-before-bound",
    "KIP-937.before-bound",
    describe="no CreateTime record was older than its append time - the before bound",
)
def before_bound(facts: TopicFacts, columns: frozenset) -> str:
    return (
        "undecidable from stored data: a CreateTime record does not store when it was appended, and a "
        "timestamp that is old now may have been recent then"
    )


@audit_check(
    "log-append-time-not-after-read",
    "KIP-32.log-append-time-assigned",
    describe="no LogAppendTime is later than the read's end: the broker's clock was not ahead",
)
def lat_not_ahead(facts: TopicFacts, columns: frozenset) -> Rule | str:
    latest = facts.latest_append_ms()
    if latest is None:
        return "the read time is unknown (a file source)"
    return Rule(
        data() & (F.col("timestampType") == 1),
        ts() > F.lit(latest),
        text("LogAppendTime ", ts(), f" > read end {latest}"),
    )


@audit_check(
    "log-append-time-never-backwards",
    "KIP-32.log-append-time-never-backwards",
    describe="LogAppendTime never decreases along a partition's offsets, across leader epochs too",
)
def lat_monotone(facts: TopicFacts, columns: frozenset) -> Rule:
    epochs = "leader_epoch" in columns
    where = (
        text(" (leader epoch ", F.col("leader_epoch"), ", earlier ", F.col("prev_lat_epoch"), ")")
        if epochs
        else F.lit("")
    )
    return Rule(
        data() & (F.col("timestampType") == 1) & F.col("prev_lat_max").isNotNull(),
        ts() < F.col("prev_lat_max"),
        text("LogAppendTime ", ts(), " < ", F.col("prev_lat_max"), " earlier in the partition", where),
    )


@audit_check(
    "negative-timestamp-not-rebuilt",
    "KIP-228.rebuild-fails-on-negative",
    describe="no record below -1 sits in a batch the broker must rebuild (topic codec != batch codec)",
)
def negative_rebuilt(facts: TopicFacts, columns: frozenset) -> Rule | str:
    if "codec" not in columns:
        return "the source has no codec column (Spark's Kafka source has none; --source ktc reads each batch's)"
    if get_profile(facts.profile).negative_timestamps != "rebuild-fails":
        return f"{facts.profile} does not refuse negative timestamps on a rebuild"
    if facts.compression_type == "producer":
        return "compression.type=producer: the broker keeps every batch's codec, nothing is rebuilt"
    target = "none" if facts.compression_type == "uncompressed" else facts.compression_type
    return Rule(
        data() & (F.col("timestampType") == 0) & (F.col("codec") != target),
        ts() < -1,
        text("timestamp ", ts(), " in a ", F.col("codec"), f" batch of a compression.type={target} topic"),
    )


@audit_check(
    "batch-max-matches-records",
    "KIP-32.batch-max-timestamp",
    unit="batches",
    describe="a CreateTime batch's header MaxTimestamp is the max of its records' timestamps",
)
def batch_max(facts: TopicFacts, columns: frozenset) -> Rule | str:
    if not {"batch_offset", "batch_max_ms"} <= columns:
        return (
            "the source has no batch headers (batch_offset, batch_max_ms; Spark's Kafka source has none: "
            "--source ktc reads them)"
        )
    floored = get_profile(facts.profile).batch_max_floor == "minus-one"
    expected = (
        F.greatest(F.lit(-1).cast("bigint"), F.col("record_max"))
        if floored
        else F.coalesce(F.col("real_max"), F.lit(facts.sentinel).cast("bigint"))
    )
    return Rule(
        data() & (F.col("timestampType") == 0),
        F.col("batch_max_ms") != expected,
        text("header MaxTimestamp ", F.col("batch_max_ms"), ", records' max ", expected),
    )


@audit_check(
    "no-timestamp-records",
    "KIP-228.minus-one-is-no-timestamp",
    kind="notice",
    describe="CreateTime records carrying NO_TIMESTAMP (-1): ignored by retention, rolling and ListOffsets",
)
def no_timestamp(facts: TopicFacts, columns: frozenset) -> Rule:
    return Rule(data() & (F.col("timestampType") == 0), ts() == facts.sentinel, text("timestamp ", ts()))


@audit_check(
    "negative-timestamps",
    "KIP-228.broker-serves-negative",
    kind="notice",
    describe="CreateTime records below -1: served as is, but Kafka's batch max, time index and retention ignore them",
)
def negative(facts: TopicFacts, columns: frozenset) -> Rule:
    return Rule(data() & (F.col("timestampType") == 0), ts() < -1, text("timestamp ", ts()))
