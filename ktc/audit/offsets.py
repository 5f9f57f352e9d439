"""The time index, audited: ListOffsets by timestamp for sampled targets, against the stored records.

Targets are drawn (seeded) from the partition's own timestamps ``t`` and ``t + 1``, so both an exact
hit and a value between records are asked.  The expected answer follows KIP-33's clause from what
was read: the first offset whose timestamp is at or after the target, with that timestamp, or
(-1, -1) when none is.  An answer past the last offset read is ``unknown``: it may be a record
appended after the read.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .engine import AuditRow

CLAUSE = "KIP-33.list-offsets-first-offset-at-or-after"
CHECK = "list-offsets-by-timestamp"
DESCRIBE = "ListOffsets(timestamp) answers the first stored offset at or after it, for sampled targets"
NOT_FOUND = (-1, -1)


def partition_facts(base: DataFrame) -> dict[int, tuple[int, int]]:
    """Per partition, in one job: (records with a timestamp >= 0, the last offset read)."""
    stamped = F.count(F.when(F.col("timestamp_ms") >= 0, 1))
    return {r[0]: (r[1], r[2]) for r in base.groupBy("partition").agg(stamped, F.max("offset")).collect()}


def targets(base: DataFrame, per_partition: int, seed: int, stamped: dict[int, int]) -> list[tuple[int, int]]:
    """(partition, target) pairs: ``per_partition`` per partition, half exact timestamps, half one past.

    ``stamped`` counts each partition's timestamps >= 0; the sample is stratified by partition, so a
    small partition beside a large one is asked about as often."""
    fractions = {p: min(1.0, 4.0 * per_partition / n) for p, n in stamped.items() if n}
    if not fractions:
        return []
    stamps = base.where(F.col("timestamp_ms") >= 0).select("partition", "timestamp_ms")
    drawn = sorted((r[0], r[1]) for r in stamps.sampleBy("partition", fractions, seed).collect())
    rng, out = random.Random(seed), []
    for p in sorted({p for p, _ in drawn}):
        mine = [t for q, t in drawn if q == p]
        out += [(p, t + (i % 2)) for i, t in enumerate(rng.sample(mine, min(per_partition, len(mine))))]
    return out


def expected(base: DataFrame, asked: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """The model's answer per target, from the stored records: (timestamp, offset) or (-1, -1)."""
    spark = base.sparkSession
    wanted = F.broadcast(spark.createDataFrame(asked, "tp int, target long"))
    hits = base.join(wanted, (F.col("partition") == F.col("tp")) & (F.col("timestamp_ms") >= F.col("target")))
    first = hits.groupBy("tp", "target").agg(F.min(F.struct("offset", "timestamp_ms")).alias("hit")).collect()
    found = {(r["tp"], r["target"]): (r["hit"]["timestamp_ms"], r["hit"]["offset"]) for r in first}
    return {key: found.get(key, NOT_FOUND) for key in asked}


def judge(asked, model: dict, answer: Callable[[int, int], tuple[int, int, int]], ends: dict[int, int]):
    """Compare each broker answer with the model: (checked, violating, unknown, samples)."""
    checked = violating = unknown = 0
    samples = []
    for p, t in asked:
        error, stamp, offset = answer(p, t)
        if error == 0 and offset > ends.get(p, -1):
            unknown += 1
            continue
        checked += 1
        if (error, stamp, offset) != (0, *model[(p, t)]):
            violating += 1
            samples.append(
                {
                    "partition": p,
                    "offset": offset,
                    "timestamp_ms": stamp,
                    "detail": f"target {t}: broker (error {error}, timestamp {stamp}, offset {offset}), "
                    f"stored data (timestamp {model[(p, t)][0]}, offset {model[(p, t)][1]})",
                }
            )
    return checked, violating, unknown, samples


def audit_offsets(base: DataFrame, answer, per_partition: int, seed: int) -> AuditRow:
    """One row for the probe; ``answer(partition, target) -> (error, timestamp, offset)`` asks the broker."""
    if answer is None or not per_partition:
        why = (
            "not asked (--samples 0)"
            if answer is not None
            else "no broker to ask (a file source without --kafka-bootstrap)"
        )
        return AuditRow(CHECK, (CLAUSE,), "check", "samples", DESCRIBE, "unknown", reason=why)
    facts = partition_facts(base)
    asked = targets(base, per_partition, seed, {p: n for p, (n, _) in facts.items()})
    ends = {p: last for p, (_, last) in facts.items()}
    checked, violating, unknown, samples = judge(asked, expected(base, asked) if asked else {}, answer, ends)
    state = "fail" if violating else "pass" if checked else "unknown"
    reason = (
        f"{unknown} answers past the last offset read (appended after the read?)"
        if unknown
        else ("" if checked else "no stored timestamp >= 0 to ask about")
    )
    return AuditRow(
        CHECK, (CLAUSE,), "check", "samples", DESCRIBE, state, checked, violating, reason, True, samples[:5]
    )
