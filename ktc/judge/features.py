"""The input features of a history: which kinds of input it sent (codecs, batch attribute bits, a header
max that disagrees with its records, timestamp edges, ListOffsets targets and versions, clock moves...).

A feature is a name; a history has a set of them.  The judge counts, per clause and implementation,
how many judged examples carried each feature, so a report can show which inputs reached which
implementation (reports/coverage.py): a feature the reference tier draws that never reached a broker
is a gap in the evidence, not a pass.
"""

from __future__ import annotations

from ktc.reference.types import (
    INT64_MAX,
    INT64_MIN,
    Batch,
    CreateTopic,
    History,
    ListOffsets,
    Op,
    Produce,
    TimestampType,
    header_max,
)

SPECIAL_TARGETS = {-1: "latest", -2: "earliest", -3: "max-timestamp", -4: "earliest-local", -5: "latest-tiered"}


def features(history: History) -> frozenset[str]:
    found: set[str] = set()
    for op in history.ops:
        found |= of_op(op)
    return frozenset(found)


def of_op(op: Op) -> set[str]:
    if isinstance(op, Produce):
        return of_batch(op.batch)
    if isinstance(op, ListOffsets):
        return of_list_offsets(op)
    if isinstance(op, CreateTopic):
        return of_topic(op)
    return {f"op:{type(op).__name__}"}


def of_batch(batch: Batch) -> set[str]:
    flags = {
        "attribute:log-append-time": batch.timestamp_type is TimestampType.LOG_APPEND_TIME,
        "attribute:transactional": batch.transactional,
        "attribute:control": batch.control,
        "attribute:kip-228-extended": batch.timestamp_extended,
        "batch:several-records": len(batch.records) > 1,
        "batch:header-max-disagrees": batch.max_timestamp is not None
        and batch.max_timestamp != header_max(Batch(batch.records)),
    }
    return (
        {f"codec:{batch.codec}"}
        | {name for name, on in flags.items() if on}
        | {edge for r in batch.records for edge in timestamp_edges(r.timestamp)}
    )


def timestamp_edges(ts: int) -> set[str]:
    edges = {
        "timestamp:-1": ts == -1,
        "timestamp:negative": INT64_MIN < ts < -1,
        "timestamp:0": ts == 0,
        "timestamp:Long.MIN": ts == INT64_MIN,
        "timestamp:Long.MAX": ts == INT64_MAX,
    }
    return {name for name, on in edges.items() if on}


def of_list_offsets(op: ListOffsets) -> set[str]:
    target = "target:timestamp" if op.target >= 0 else f"target:{SPECIAL_TARGETS.get(op.target, 'other-negative')}"
    extra = {"list-offsets:explicit-version": op.version is not None, "list-offsets:read-committed": op.read_committed}
    return {target} | {name for name, on in extra.items() if on}


def of_topic(op: CreateTopic) -> set[str]:
    config = op.config
    found = {f"config:{key}" for key in config.set_keys()}
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
        found.add("topic:log-append-time")
    return found
