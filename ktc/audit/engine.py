"""Run every audit check over one topic's stored records in a few Spark jobs; verdicts as data.

``prepare`` adds what the order-dependent checks read (the running LogAppendTime max before each
record, and the leader epoch it came from) and caches the frame; one aggregate then counts, per
check, the rows it applies to and those that violate it; one more job collects the first sample
offsets of each failing check.  ``violations`` stays a lazy DataFrame for further analysis.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import reduce
from typing import Any, TypedDict

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ktc.specs.clauses import all_clauses

from .checks import CHECKS, AuditCheck, Rule
from .facts import TopicFacts

SAMPLES = 5
VIOLATION_COLUMNS = ["check", "clause", "topic", "partition", "offset", "timestamp_ms", "detail"]


class Sample(TypedDict):
    """One violating record of a failing check, as the report shows it."""

    partition: int
    offset: int
    timestamp_ms: int
    detail: str


@dataclass
class AuditRow:
    check: str
    clauses: tuple[str, ...]
    kind: str
    unit: str
    describe: str
    verdict: str | None  # pass / fail / unknown; None for a notice
    checked: int | None = None
    violating: int | None = None
    reason: str = ""
    promised: bool = True  # a clause of the check holds in the audit's profile
    samples: list[Sample] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The row in the audit's JSON (reports/audit.py reads it)."""
        return asdict(self)


def prepare(records: DataFrame) -> DataFrame:
    """The records with ``prev_lat_max`` (and ``prev_lat_epoch``), persisted: the source is read once."""
    earlier = Window.partitionBy("partition").orderBy("offset").rowsBetween(Window.unboundedPreceding, -1)
    lat = F.when((F.col("timestampType") == 1) & ~F.col("control"), F.col("timestamp_ms"))
    out = records.withColumn("prev_lat_max", F.max(lat).over(earlier))
    if "leader_epoch" in records.columns:
        epoch = F.when(lat.isNotNull(), F.col("leader_epoch"))
        out = out.withColumn("prev_lat_epoch", F.last(epoch, ignorenulls=True).over(earlier))
    return out.persist(StorageLevel.MEMORY_AND_DISK)


def batches(base: DataFrame, sentinel: int) -> DataFrame:
    """One row per stored batch: its header max and its records' max (with and without the sentinel)."""
    real = F.when(F.col("timestamp_ms") != sentinel, F.col("timestamp_ms"))
    return base.groupBy("partition", "batch_offset").agg(
        F.max("timestamp_ms").alias("record_max"),
        F.max(real).alias("real_max"),
        F.first("batch_max_ms").alias("batch_max_ms"),
        F.first("control").alias("control"),
        F.first("timestampType").alias("timestampType"),
        F.count("*").alias("records"),
    )


def rules(facts: TopicFacts, columns: frozenset) -> dict[str, Rule | str]:
    return {c.id: c.rule(facts, columns) for c in CHECKS.values()}


def frames(base: DataFrame, facts: TopicFacts) -> dict[str, DataFrame]:
    """What each unit of check runs over: the records, and (with batch headers) one row per batch."""
    out = {"records": base}
    if {"batch_offset", "batch_max_ms"} <= set(base.columns):
        out["batches"] = batches(base, facts.sentinel)
    return out


def counts(frame: DataFrame, decided: dict[str, Rule]) -> dict[str, tuple[int, int]]:
    """(rows the rule applies to, rows that violate it) per check, in one aggregate job."""
    if not decided:
        return {}
    sums = []
    for i, rule in enumerate(decided.values()):
        sums.append(F.sum(F.when(rule.applies, 1).otherwise(0)).alias(f"a{i}"))
        sums.append(F.sum(F.when(rule.applies & rule.violates, 1).otherwise(0)).alias(f"v{i}"))
    row = frame.agg(*sums).first()
    assert row is not None  # an aggregate without groups has one row
    return {cid: (row[f"a{i}"] or 0, row[f"v{i}"] or 0) for i, cid in enumerate(decided)}


def violations_of(check: AuditCheck, rule: Rule, frame: DataFrame, topic: str) -> DataFrame:
    offset = "batch_offset" if check.unit == "batches" else "offset"
    stamp = "batch_max_ms" if check.unit == "batches" else "timestamp_ms"
    return frame.where(rule.applies & rule.violates).select(
        F.lit(check.id).alias("check"),
        F.lit(check.clauses[0]).alias("clause"),
        F.lit(topic).alias("topic"),
        F.col("partition"),
        F.col(offset).alias("offset"),
        F.col(stamp).alias("timestamp_ms"),
        rule.detail.alias("detail"),
    )


def first_samples(violations: DataFrame, failing: list[str]) -> dict[str, list[Sample]]:
    if not failing:
        return {}
    order = Window.partitionBy("check").orderBy("partition", "offset")
    rows = (
        violations.where(F.col("check").isin(failing))
        .withColumn("n", F.row_number().over(order))
        .where(F.col("n") <= SAMPLES)
        .collect()
    )
    out: dict[str, list[Sample]] = {c: [] for c in failing}
    for r in sorted(rows, key=lambda r: (r["check"], r["n"])):
        out[r["check"]].append(
            Sample(partition=r["partition"], offset=r["offset"], timestamp_ms=r["timestamp_ms"], detail=r["detail"])
        )
    return out


def verdict(check: AuditCheck, found: tuple[int, int] | None, reason: str | None) -> tuple[str | None, str]:
    if reason is not None:
        return (None if check.kind == "notice" else "unknown"), reason
    if check.kind == "notice":
        return None, ""
    assert found is not None, f"{check.id}: a decided rule is counted"
    checked, violating = found
    if violating:
        return "fail", ""
    return ("pass", "") if checked else ("unknown", "nothing to judge: no stored row this check applies to")


def promised(check: AuditCheck, profile: str) -> bool:
    known = all_clauses()
    return any(known[c].holds_in(profile) for c in check.clauses if c in known)


def row_for(check: AuditCheck, rule, found, profile: str) -> AuditRow:
    reason = rule if isinstance(rule, str) else None
    state, why = verdict(check, found, reason)
    checked, violating = found if found is not None else (None, None)
    return AuditRow(
        check.id,
        check.clauses,
        check.kind,
        check.unit,
        check.describe,
        state,
        checked,
        violating,
        why,
        promised(check, profile),
    )


def run_checks(base: DataFrame, facts: TopicFacts) -> tuple[list[AuditRow], DataFrame | None]:
    """Every registered check on ``base`` (from ``prepare``): rows, and the lazy violations frame."""
    every = rules(facts, frozenset(base.columns))
    decided = {cid: r for cid, r in every.items() if not isinstance(r, str)}
    by_unit = frames(base, facts)
    found: dict[str, tuple[int, int]] = {}
    for unit, frame in by_unit.items():
        found |= counts(frame, {cid: r for cid, r in decided.items() if CHECKS[cid].unit == unit})
    parts = [violations_of(CHECKS[cid], r, by_unit[CHECKS[cid].unit], facts.topic) for cid, r in decided.items()]
    violations = reduce(DataFrame.unionByName, parts) if parts else None
    rows = [row_for(c, every[c.id], found.get(c.id), facts.profile) for c in CHECKS.values()]
    samples = first_samples(violations, [r.check for r in rows if r.violating]) if violations is not None else {}
    for r in rows:
        r.samples = samples.get(r.check, [])
    return rows, violations
