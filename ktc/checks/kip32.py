"""KIP-32: CreateTime kept, LogAppendTime assigned (across leader changes), offsets, rolling and retention."""

from __future__ import annotations

from ktc.checks.common import (
    CT,
    LAT,
    compare_fates,
    every_fetch,
    fetches_of,
    refused_as_invalid,
    stamps,
)
from ktc.checks.reads import appended_by, fetches, records, where, writer
from ktc.checks.registry import Compare, check
from ktc.checks.scenario import Scenario
from ktc.reference.model import Model
from ktc.reference.types import (
    Ack,
    DescribeLog,
    DescribeLogResult,
    ElectLeader,
    RetentionPass,
    RetentionResult,
)


@check("KIP-32.time-configs-range")
def time_config_range_conformance(s: Scenario, c: Compare) -> None:
    refused_as_invalid(s, c, ("segment_ms", "retention_ms"))


@check("KIP-32.create-time-kept", "KIP-32.mirror-maker-keeps-create-time")
def create_time_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, CT):
        c.eq(i, f"stored (offset, timestamp) on CreateTime topic {topic!r}", stamps(exp), stamps(obs))


@check(
    "KIP-32.log-append-time-assigned", "KIP-937.log-append-time-overwrites", "KIP-32.mirror-maker-new-log-append-time"
)
def log_append_time_stored_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, LAT):
        c.eq(i, f"stored (offset, timestamp) on LogAppendTime topic {topic!r}", stamps(exp), stamps(obs))


@check("KIP-32.log-append-time-millisecond")
def log_append_time_value_conformance(s: Scenario, c: Compare) -> None:
    """The leader's clock; after a leader change or clock step too, unless the profile takes the max
    with the last appended value there (KIP-32.log-append-time-leader-max's case, not this clause's)."""
    takes_max = s.profile.log_append_time == "max-last-appended"
    for view in s.produces():
        if (
            view.on_log_append_time_topic
            and view.expected.error_code == 0
            and not (takes_max and view.leader_changed_before)
        ):
            c.eq(
                view.index,
                f"log_append_time (broker clock {view.now} ms)",
                view.expected.log_append_time,
                view.observed.log_append_time,
            )


@check("KIP-32.log-append-time-leader-max")
def log_append_time_after_leader_change_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.on_log_append_time_topic and view.expected.error_code == 0 and view.leader_changed_before:
            c.eq(
                view.index,
                "log_append_time after a leader change or clock step",
                view.expected.log_append_time,
                view.observed.log_append_time,
            )


@check("KIP-32.log-append-time-batch-shared")
def shared_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    for i, _topic, _exp, obs in fetches_of(s, LAT):
        for batch in obs.batches:
            distinct = {r.timestamp for r in batch.records}
            c.holds(i, f"one LogAppendTime per batch at offset {batch.base_offset}", len(distinct) == 1, distinct)


@check("KIP-32.log-append-time-never-backwards")
def monotonic_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, _exp, obs in fetches_of(s, LAT):
        times = [ts for _, ts in stamps(obs)]
        c.holds(i, f"LogAppendTime non-decreasing on {topic!r}", times == sorted(times), times)


@check("KIP-32.followers-keep-log-append-time")
def follower_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    elections = [i for i, *_ in s.ops_of(ElectLeader, Ack)]
    final = {(topic, p): obs for _i, topic, p, _exp, obs in s.last_fetches()}
    for view in s.produces():
        fetch = final.get((view.op.topic, view.op.partition))
        if not view.on_log_append_time_topic or view.observed.error_code or fetch is None:
            continue
        if any(e > view.index for e in elections):
            kept = {
                ts
                for off, ts in stamps(fetch)
                if off >= view.observed.base_offset and off < view.observed.base_offset + len(view.batch.records)
            }
            c.holds(
                view.index,
                "records keep the LogAppendTime of their append across a leader change",
                kept <= {view.observed.log_append_time},
                kept,
            )


@check("KIP-32.produce-response-log-append-time")
def produce_response_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.expected.error_code == 0:
            c.eq(
                view.index,
                "ProduceResponse log_append_time",
                view.expected.log_append_time,
                view.observed.log_append_time,
            )


@check("KIP-32.offsets-contiguous")
def offsets_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.expected.error_code == 0:
            c.eq(view.index, "base_offset", view.expected.base_offset, view.observed.base_offset)
    for i, _topic, _p, exp, obs in every_fetch(s):
        c.eq(
            i,
            "stored offsets",
            [r.offset for b in exp.batches for r in b.records],
            [r.offset for b in obs.batches for r in b.records],
        )


@check("KIP-32.batch-max-timestamp")
def batch_max_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, _p, exp, obs in every_fetch(s):
        c.eq(
            i,
            f"batch MaxTimestamp headers on {topic!r}",
            [(b.base_offset, b.max_timestamp) for b in exp.batches],
            [(b.base_offset, b.max_timestamp) for b in obs.batches],
        )


@check("KIP-32.roll-by-first-timestamp", "KIP-32.future-timestamp-breaks-rolling")
def rolling_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():  # a refused append rolls nothing
        c.eq(view.index, "append rolled a new segment", view.expected.rolled, view.observed.rolled)
    for i, _op, exp, obs in s.ops_of(DescribeLog, DescribeLogResult):
        c.eq(i, "segment base offsets", [g.base_offset for g in exp.segments], [g.base_offset for g in obs.segments])


@check("KIP-32.retention-by-last-timestamp")
def retention_by_timestamp_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "timestamp" and not limit_set)


@check("KIP-32.retention-mtime-fallback")
def retention_mtime_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "mtime" and not limit_set)


@check("KIP-32.future-timestamp-pins-retention")
def retention_future_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "future" and not limit_set)


@check("KIP-32.retention-segment-level")
def retention_prefix_conformance(s: Scenario, c: Compare) -> None:
    """Deleted segments are the oldest ones, in order, and the log start moves to the first kept one."""
    model = Model.for_history(s.history)
    for i, op, exp, obs in s.ops_of(RetentionPass, RetentionResult):
        partition = model.partition(model.replay(s.history, i), op.topic, op.partition)
        if partition is None:
            continue
        bases = [g.base_offset for g in partition.segments]
        deleted = list(obs.deleted_base_offsets)
        c.holds(i, f"deleted segments {deleted} are the oldest of {bases}", deleted == bases[: len(deleted)], deleted)
        if obs.deleted_base_offsets == exp.deleted_base_offsets:
            c.eq(i, "log start offset after retention", exp.log_start_offset, obs.log_start_offset)


def append_times(s: Scenario) -> dict[int, int]:
    """Per accepted append (op index), its append time from the leader clocks alone: the clock, or under a
    profile that keeps LogAppendTime monotonic the running max of the partition's append clocks."""
    times: dict[int, int] = {}
    last: dict[tuple[str, int], int] = {}
    for view in s.produces():
        if view.observed.error_code == 0 and view.on_log_append_time_topic:
            key = where(view.op)
            keep = s.profile.log_append_time == "max-last-appended" and key in last
            times[view.index] = last[key] = max(last[key], view.now) if keep else view.now
    return times


@check("KIP-32.read-log-append-time")
def read_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    spans, times = appended_by(s), append_times(s)
    for i, op, obs in fetches(s):
        config = s.config_of(op.topic)
        if config is None or config.timestamp_type is not LAT:
            continue
        for offset, ts, _batch in records(obs):
            view = writer(spans.get(where(op), ()), offset, i)
            if view is not None and view.index in times:
                c.holds(
                    i,
                    f"record {offset} read on LogAppendTime topic {op.topic!r} as its append time "
                    f"{times[view.index]} (op #{view.index})",
                    ts == times[view.index],
                    ts,
                )


@check("KIP-32.read-timestamp-stable")
def read_timestamp_stable_conformance(s: Scenario, c: Compare) -> None:
    first: dict[tuple[str, int, int], tuple[int, int]] = {}
    for i, op, obs in fetches(s):
        for offset, ts, _batch in records(obs):
            seen = first.setdefault((*where(op), offset), (ts, i))
            if seen[1] != i:
                c.holds(
                    i,
                    f"record {offset} of {op.topic!r} reads as it did at op #{seen[1]} ({seen[0]})",
                    ts == seen[0],
                    ts,
                )
