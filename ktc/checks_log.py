"""Checks for what is stored and served: LogAppendTime, batch max, offsets, segments, the time
index, ListOffsets, KIP-228's sentinel and KIP-870's event time.  Same registry as checks.py."""
from __future__ import annotations

from reference.configs import rebuilds
from reference.types import INT64_MIN, UNKNOWN_SERVER_ERROR, DescribeLog, ElectLeader, ListOffsets, RetentionPass

from reference.model import Model

from .checks import CT, LAT, Compare, check, exempt, flagged
from .scenario import Scenario


def stamps(fetch, with_create_time: bool = False) -> list[tuple]:
    if with_create_time:
        return [(r.offset, r.timestamp, r.create_time) for b in fetch.batches for r in b.records]
    return [(r.offset, r.timestamp) for b in fetch.batches for r in b.records]


def fetches_of(s: Scenario, timestamp_type):
    for i, topic, partition, exp, obs in s.last_fetches():
        config = s.config_of(topic)
        if config is not None and config.timestamp_type is timestamp_type:
            yield i, topic, exp, obs


# ---- KIP-32: what is stored --------------------------------------------------------------

@check("KIP-32.create-time-kept", "KIP-32.mirror-maker-keeps-create-time")
def create_time_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, CT):
        c.eq(i, f"stored (offset, timestamp) on CreateTime topic {topic!r}", stamps(exp), stamps(obs))


@check("KIP-32.log-append-time-assigned", "KIP-937.log-append-time-overwrites",
       "KIP-32.mirror-maker-new-log-append-time")
def log_append_time_stored_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, LAT):
        c.eq(i, f"stored (offset, timestamp) on LogAppendTime topic {topic!r}", stamps(exp), stamps(obs))


@check("KIP-32.log-append-time-millisecond")
def log_append_time_value_conformance(s: Scenario, c: Compare) -> None:
    """The leader's clock; after a leader change or clock step too, unless the profile takes the max
    with the last appended value there (KIP-32.log-append-time-leader-max's case, not this clause's)."""
    takes_max = s.profile.log_append_time == "max-last-appended"
    for view in s.produces():
        if view.on_log_append_time_topic and view.expected.error_code == 0 and not (
                takes_max and view.leader_changed_before):
            c.eq(view.index, f"log_append_time (broker clock {view.now} ms)", view.expected.log_append_time,
                 view.observed.log_append_time)


@check("KIP-32.log-append-time-leader-max")
def log_append_time_after_leader_change_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.on_log_append_time_topic and view.expected.error_code == 0 and view.leader_changed_before:
            c.eq(view.index, "log_append_time after a leader change or clock step",
                 view.expected.log_append_time, view.observed.log_append_time)


@check("KIP-32.log-append-time-batch-shared")
def shared_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, _exp, obs in fetches_of(s, LAT):
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
    elections = [i for i, *_ in s.ops_of(ElectLeader)]
    final = {(topic, p): obs for _i, topic, p, _exp, obs in s.last_fetches()}
    for view in s.produces():
        fetch = final.get((view.op.topic, view.op.partition))
        if not view.on_log_append_time_topic or view.observed.error_code or fetch is None:
            continue
        if any(e > view.index for e in elections):
            kept = {ts for off, ts in stamps(fetch) if off >= view.observed.base_offset
                    and off < view.observed.base_offset + len(view.batch.records)}
            c.holds(view.index, "records keep the LogAppendTime of their append across a leader change",
                    kept <= {view.observed.log_append_time}, kept)


@check("KIP-32.produce-response-log-append-time")
def produce_response_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.expected.error_code == 0:
            c.eq(view.index, "ProduceResponse log_append_time", view.expected.log_append_time,
                 view.observed.log_append_time)


@check("KIP-32.offsets-contiguous")
def offsets_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.expected.error_code == 0:
            c.eq(view.index, "base_offset", view.expected.base_offset, view.observed.base_offset)
    for i, _topic, _p, exp, obs in s.last_fetches():
        c.eq(i, "stored offsets", [r.offset for b in exp.batches for r in b.records],
             [r.offset for b in obs.batches for r in b.records])


@check("KIP-32.batch-max-timestamp")
def batch_max_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, _p, exp, obs in s.last_fetches():
        c.eq(i, f"batch MaxTimestamp headers on {topic!r}", [(b.base_offset, b.max_timestamp) for b in exp.batches],
             [(b.base_offset, b.max_timestamp) for b in obs.batches])


# ---- KIP-32: rolling and retention ------------------------------------------------------

@check("KIP-32.roll-by-first-timestamp", "KIP-32.future-timestamp-breaks-rolling")
def rolling_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():  # a refused append rolls nothing
        c.eq(view.index, "append rolled a new segment", view.expected.rolled, view.observed.rolled)
    for i, _op, exp, obs in s.ops_of(DescribeLog):
        c.eq(i, "segment base offsets", [g.base_offset for g in exp.segments], [g.base_offset for g in obs.segments])


def segment_fates(s: Scenario):
    """Per retention pass, per segment up to the first one the reference keeps: what decided its fate.

    Yields (op index, base offset, basis kind, expected deleted?, observed deleted?, event limit set?).
    ``basis kind`` is 'mtime' (no usable timestamp), 'future' (basis after the leader clock) or 'timestamp'.
    """
    model = Model.for_history(s.history)
    for i, op, exp, obs in s.ops_of(RetentionPass):
        cluster = model.replay(s.history, i)
        partition = model.partition(cluster, op.topic, op.partition)  # None: no such topic or partition
        if partition is None:
            continue
        now, leader = cluster.now(partition.leader), partition.leader
        limit_set = cluster.topics[op.topic].config.retention_max_eventtime_ms is not None
        for segment in partition.segments[:len(exp.deleted_base_offsets) + 1]:
            if segment.empty:
                continue
            basis = model.retention_basis(segment, leader)
            kind = "mtime" if basis == segment.mtime_ms[leader] else "future" if basis > now else "timestamp"
            yield (i, segment.base_offset, kind, segment.base_offset in exp.deleted_base_offsets,
                   segment.base_offset in obs.deleted_base_offsets, limit_set)


def compare_fates(s: Scenario, c: Compare, keep) -> None:
    for i, base, kind, expected, observed, limit_set in segment_fates(s):
        if keep(kind, limit_set):
            c.eq(i, f"segment {base} ({kind} basis) deleted", expected, observed)


@check("KIP-32.retention-by-last-timestamp")
def retention_by_timestamp_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "timestamp" and not limit_set)


@check("KIP-32.retention-mtime-fallback")
def retention_mtime_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "mtime" and not limit_set)


@check("KIP-32.future-timestamp-pins-retention")
def retention_future_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: kind == "future" and not limit_set)


@check("KIP-870.event-time-retention", "KIP-870.partition-max-event-time", "KIP-870.combined-with-existing")
def event_time_retention_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: limit_set)


@check("KIP-870.unset-means-unchanged")
def unchanged_retention_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: not limit_set)


@check("KIP-32.retention-segment-level")
def retention_prefix_conformance(s: Scenario, c: Compare) -> None:
    """Deleted segments are the oldest ones, in order, and the log start moves to the first kept one."""
    model = Model.for_history(s.history)
    for i, op, exp, obs in s.ops_of(RetentionPass):
        partition = model.partition(model.replay(s.history, i), op.topic, op.partition)
        if partition is None:
            continue
        bases = [g.base_offset for g in partition.segments]
        deleted = list(obs.deleted_base_offsets)
        c.holds(i, f"deleted segments {deleted} are the oldest of {bases}", deleted == bases[:len(deleted)], deleted)
        if obs.deleted_base_offsets == exp.deleted_base_offsets:
            c.eq(i, "log start offset after retention", exp.log_start_offset, obs.log_start_offset)


@check("KIP-870.both-timestamps-stored")
def dual_timestamp_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, LAT):
        c.eq(i, f"stored (offset, timestamp, create_time) on {topic!r}", stamps(exp, True), stamps(obs, True))


# ---- KIP-33: time index and ListOffsets --------------------------------------------------

@check("KIP-33.time-index-running-max")
def time_index_conformance(s: Scenario, c: Compare) -> None:
    for i, _op, exp, obs in s.ops_of(DescribeLog):
        c.eq(i, "time index per segment", [g.time_index for g in exp.segments], [g.time_index for g in obs.segments])


@check("KIP-33.time-index-strictly-increasing")
def time_index_order_conformance(s: Scenario, c: Compare) -> None:
    for i, _op, _exp, obs in s.ops_of(DescribeLog):
        for g in obs.segments:
            times = [ts for ts, _ in g.time_index]
            c.holds(i, f"time index of segment {g.base_offset} strictly increasing",
                    all(a < b for a, b in zip(times, times[1:])), g.time_index)


@check("KIP-33.time-index-skips-no-timestamp")
def time_index_negative_conformance(s: Scenario, c: Compare) -> None:
    for i, _op, _exp, obs in s.ops_of(DescribeLog):
        for g in obs.segments:
            c.holds(i, f"no entry <= -1 in segment {g.base_offset}", all(ts >= 0 for ts, _ in g.time_index),
                    g.time_index)


def list_offsets_where(s: Scenario, c: Compare, keep, what: str) -> None:
    for i, op, exp, obs in s.ops_of(ListOffsets):
        if keep(op, exp):
            c.eq(i, f"{what} (target {op.target})", (exp.error_code, exp.offset, exp.timestamp),
                 (obs.error_code, obs.offset, obs.timestamp))


@check("KIP-33.list-offsets-first-offset-at-or-after")
def list_offsets_found_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target >= 0 and exp.offset >= 0, "ListOffsets by timestamp")


@check("KIP-33.list-offsets-not-found")
def list_offsets_missing_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target >= 0 and exp.offset < 0, "ListOffsets with no match")


@check("KIP-33.list-offsets-first-segment-only")
def list_offsets_segments_conformance(s: Scenario, c: Compare) -> None:
    rolled = any(v.expected.rolled for v in s.produces()) or any(r.deleted_base_offsets for *_, r, _o in
                                                                 s.ops_of(RetentionPass))
    list_offsets_where(s, c, lambda op, exp: rolled and op.target >= 0, "ListOffsets over several segments")


@check("KIP-33.list-offsets-latest")
def list_offsets_latest_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target == -1, "ListOffsets LATEST")


@check("KIP-33.list-offsets-earliest")
def list_offsets_earliest_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target == -2, "ListOffsets EARLIEST")


@check("KIP-33.list-offsets-max-timestamp")
def list_offsets_max_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target == -3, "ListOffsets MAX_TIMESTAMP")


# ---- KIP-228 -------------------------------------------------------------------------------

@check("KIP-228.minus-one-is-no-timestamp")
def no_timestamp_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        for i, record in enumerate(view.batch.records):
            if exempt(s, record.timestamp) and view.config.timestamp_type is CT:
                c.eq(view.index, f"error_code with no-timestamp record {i}", view.expected.error_code,
                     view.observed.error_code)
                c.eq(view.index, f"no-timestamp record {i} blamed in record_errors", i in flagged(view.expected),
                     i in flagged(view.observed))
    for i, topic, _p, exp, obs in s.last_fetches():
        c.eq(i, f"batch MaxTimestamp headers on {topic!r}", [b.max_timestamp for b in exp.batches],
             [b.max_timestamp for b in obs.batches])


def has_negative(s: Scenario, view) -> bool:
    return any(r.timestamp < 0 and not exempt(s, r.timestamp) for r in view.batch.records)


@check("KIP-228.negative-timestamps-accepted")
def negative_acceptance_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if has_negative(s, view):
            c.eq(view.index, "error_code for a batch with negative timestamps", view.expected.error_code,
                 view.observed.error_code)


@check("KIP-228.rebuild-fails-on-negative")
def rebuild_failure_conformance(s: Scenario, c: Compare) -> None:
    """Every batch the broker rebuilds, negative or not: did the rebuild fail (UNKNOWN_SERVER_ERROR)?
    Batches the model rejects for another reason (validation, error 32) are the validation clauses'."""
    for view in s.produces():
        if rebuilds(view.config, view.batch.codec) and view.expected.error_code in (0, UNKNOWN_SERVER_ERROR):
            c.eq(view.index, "the rebuild of the batch failed (UNKNOWN_SERVER_ERROR)",
                 view.expected.error_code == UNKNOWN_SERVER_ERROR, view.observed.error_code == UNKNOWN_SERVER_ERROR)


@check("KIP-228.broker-serves-negative")
def negative_served_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, CT):
        negatives = [(o, ts) for o, ts in stamps(exp) if ts < 0 and not exempt(s, ts)]
        if negatives:
            c.eq(i, f"negative timestamps served from {topic!r}", negatives,
                 [(o, ts) for o, ts in stamps(obs) if ts < 0 and not exempt(s, ts)])


@check("KIP-228.sentinel-long-min", "KIP-228.producer-broker-table", "KIP-228.timestamp-extended-bit")
def sentinel_conformance(s: Scenario, c: Compare) -> None:
    if s.history.no_timestamp != INT64_MIN:
        return
    for i, topic, _p, exp, obs in s.last_fetches():
        c.eq(i, f"stored timestamps on {topic!r} (sentinel Long.MIN_VALUE)", stamps(exp), stamps(obs))
