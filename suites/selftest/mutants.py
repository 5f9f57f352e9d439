"""The mutant catalogue: implementations that each break exactly one clause.

Every mutant is the reference Model with one rule method overridden: those that break a write or lookup rule
are here, the read-side ones in read_mutants.py; the catalogue below lists them all.  They exist to show that
the suites can fail: ``test_mutants_are_killed.py`` runs the suites against each mutant through
the ordinary ``--impl ktc.suites.selftest.mutants:NAME`` mechanism and fails if one survives.

Mutants import the reference's rule logic on purpose; an implementation under test must not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ktc.implementations.protocol import Capabilities
from ktc.reference import int64
from ktc.reference.model import Model
from ktc.reference.offsets import NOT_FOUND
from ktc.reference.types import (
    INT64_MAX,
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    NO_TIMESTAMP,
    History,
    ListOffsetsResult,
    TimestampType,
)
from ktc.specs.profiles import get, names
from ktc.suites.selftest.read_mutants import (  # the read-side defects: the invariants over reads
    EarliestIgnoresRetention,
    LookupAnswersBatchBase,
    MaxTimestampAtLatestBatch,
    RereadServesBatchMax,
    RereadServesRefusedBatch,
    RereadStampsReadTime,
)

LAT = TimestampType.LOG_APPEND_TIME


@dataclass(frozen=True)
class Mutant:
    name: str
    clause: str  # the one clause it breaks
    profiles: tuple[str, ...]  # where it must be killed
    model: type

    @property
    def version(self) -> str:
        return "mutant"

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset(names()))

    def run(self, histories: Sequence[History]):
        return [self.model(get(h.profile), h.no_timestamp).run(h) for h in histories]


class AfterBoundExclusive(Model):
    """`>=` for `>` at the after bound: a record exactly at now + after is rejected."""

    def out_of_range(self, ts, now, before, after):
        return super().out_of_range(ts, now, before, after) or (ts > now and ts - now == after)


class MinusOneValidated(Model):
    """-1 is not exempt: NO_TIMESTAMP goes through the range check."""

    def is_no_timestamp(self, ts, batch):
        return ts != NO_TIMESTAMP and super().is_no_timestamp(ts, batch)


class PerRecordRejection(Model):
    """Bad records are reported with error 32, but the good records of the batch are still appended."""

    def op_Produce(self, cluster, op):
        result = super().op_Produce(cluster, op)
        bad = {e.batch_index for e in result.record_errors}
        good = tuple(r for i, r in enumerate(op.batch.records) if i not in bad)
        if result.error_code != INVALID_TIMESTAMP or not good:
            return result
        partition = self.partition(cluster, op.topic, op.partition)
        config = cluster.topics[op.topic].config
        kept = self.append(cluster, partition, replace(op.batch, records=good, max_timestamp=None), config, ())
        return replace(result, base_offset=kept.base_offset)


class ValidatesLogAppendTime(Model):
    """Range checks applied on LogAppendTime topics too."""

    def record_error(self, index, ts, batch, config, now):
        if config.timestamp_type is LAT and not self.is_no_timestamp(ts, batch):
            before, after = self.limits(config)
            if self.out_of_range(ts, now, before, after):
                return self.out_of_range_message(ts, index, now, before, after)
        return super().record_error(index, ts, batch, config, now)


class BeforeAfterSwapped(Model):
    """before.max.ms bounds the future and after.max.ms the past."""

    def limits(self, config):
        before, after = super().limits(config)
        return after, before


class NoLongMaxFallback(Model):
    """Long.MAX before/after used as is, ignoring difference.max.ms (kafka-3.6)."""

    def limits(self, config):
        before = self.profile.default_before_max_ms if config.before_max_ms is None else config.before_max_ms
        after = self.profile.default_after_max_ms if config.after_max_ms is None else config.after_max_ms
        return before, after


class ExactArithmetic(Model):
    """KIP arithmetic under a Kafka profile: no Java long wrap-around."""

    def out_of_range(self, ts, now, before, after):
        if self.profile.validation == "abs-difference":
            return abs(ts - now) > before
        return now - ts > before or ts - now > after


class TrustsHeaderMax(Model):
    """The producer's MaxTimestamp header is stored instead of being recomputed."""

    def batch_max(self, lat, batch):
        if lat is None and batch.max_timestamp is not None:
            return batch.max_timestamp
        return super().batch_max(lat, batch)


class LogAppendTimeIsPlainNow(Model):
    """LogAppendTime = the leader's clock, even when it is behind the last appended value (kip)."""

    def log_append_time(self, now, last):
        return now


class EventTimeByWallClock(Model):
    """KIP-870 retention measured against the broker clock instead of partition.maxEventTime."""

    def deletable(self, segment, partition, now, config):
        limit = config.retention_max_eventtime_ms
        by_wall_clock = limit is not None and segment.event_max is not None and now - segment.event_max > limit
        return not segment.empty and (self.time_breached(segment, now, partition.leader, config) or by_wall_clock)


class ListOffsetsLastMatch(Model):
    """ListOffsets by timestamp returns the last record at or after the target, not the first."""

    def offset_for_timestamp(self, partition, target):
        matches = [
            r
            for segment in self.searched_segments(partition, target)
            for r in segment.records()
            if r.timestamp != self.sentinel and r.timestamp >= target
        ]
        return ListOffsetsResult(matches[-1].offset, matches[-1].timestamp) if matches else NOT_FOUND


class WrongErrorCode(Model):
    """Out-of-range timestamps answered with INVALID_RECORD (87) instead of INVALID_TIMESTAMP (32)."""

    def batch_error(self, batch, config, now):
        refused = super().batch_error(batch, config, now)
        if refused and refused[0] == INVALID_TIMESTAMP:
            return (INVALID_RECORD, *refused[1:])
        return refused


class BoundsSwappedInMessage(Model):
    """The record error text prints [now - after, now + before]."""

    def out_of_range_message(self, ts, index, now, before, after):
        return super().out_of_range_message(ts, index, now, after, before)


class KeepsCreateTimeOnLogAppendTimeTopic(Model):
    """A LogAppendTime topic stores the producer's timestamps."""

    def stored_records(self, batch, config, base_offset, lat):
        return super().stored_records(batch, config, base_offset, None)


class RetentionSkipsSurvivors(Model):
    """Retention deletes every expired segment, not stopping at the first one that must stay."""

    def deletable_prefix(self, partition, now, config):
        return [s for s in partition.segments if self.deletable(s, partition, now, config)]


class RollsByWallClock(Model):
    """Time-based rolling measured by the broker clock since segment creation, ignoring timestamps."""

    def time_waited(self, segment, incoming_max, now, broker):
        return int64.sub(now, segment.created_ms[broker], self.profile.wrapping)


class NoMtimeFallback(Model):
    """A segment without timestamps >= 0 is judged by -1 instead of its file mtime."""

    def retention_basis(self, segment, broker):
        basis = super().retention_basis(segment, broker)
        return NO_TIMESTAMP if basis == segment.mtime_ms[broker] else basis


class SentinelAlwaysMinusOne(Model):
    """The NO_TIMESTAMP sentinel parameter is ignored (kip, Long.MIN_VALUE draft)."""

    def __init__(self, profile, sentinel=NO_TIMESTAMP):
        super().__init__(profile, NO_TIMESTAMP)


class AfterUnboundedByDefault(Model):
    """after.max.ms defaults to Long.MAX on kafka-4 instead of one hour."""

    def limits(self, config):
        before, after = super().limits(config)
        return before, (INT64_MAX if config.after_max_ms is None else after)


class LogAppendTimeInCreateTimeResponse(Model):
    """The ProduceResponse carries the broker clock as log_append_time on CreateTime topics."""

    def response_log_append_time(self, lat, now):
        return now if lat is None else lat


class MaxTimestampLastOffset(Model):
    """ListOffsets MAX_TIMESTAMP answers with the last offset of the batch holding the max."""

    def max_timestamp_offset(self, partition):
        found = super().max_timestamp_offset(partition)
        for segment in partition.segments:
            for batch in segment.batches:
                if any(r.offset == found.offset for r in batch.records):
                    return type(found)(batch.records[-1].offset, found.timestamp)
        return found


class IndexAppendsOnEqualMax(Model):
    """The time index gets an entry whenever a batch reaches the running max, equal included."""

    def track_max(self, segment, batch, offset_of_max):
        if segment.max_timestamp is not None and batch.max_timestamp == segment.max_timestamp:
            segment.time_index.append((batch.max_timestamp, batch.records[-1].offset))
        super().track_max(segment, batch, offset_of_max)


class RejectsNegativesUnderKip(Model):
    """Negative timestamps refused with UNKNOWN_SERVER_ERROR even where KIP-228 accepts them."""

    def rebuild_fails(self, batch, config):
        return any(ts < 0 and not self.is_no_timestamp(ts, batch) for ts in self.seen_timestamps(batch))


class NoFutureWarning(Model):
    """KIP-937's WARN for timestamps more than one hour ahead is never emitted."""

    def warnings(self, batch, config, now):
        return ()


class RejectedBatchConsumesOffsets(Model):
    """A refused batch still advances the log end offset."""

    def discard(self, partition, batch):
        partition.next_offset += len(batch.records)


def _m(name, clause, profiles, model) -> Mutant:
    return Mutant(name, clause, tuple(profiles.split()), model)


KAFKA = "kafka-3.5 kafka-3.6 kafka-4"
CATALOGUE = [
    _m("after_bound_exclusive", "KIP-937.bounds-inclusive", "kafka-4", AfterBoundExclusive),
    _m("minus_one_validated", "KIP-228.minus-one-is-no-timestamp", "kafka-3.6", MinusOneValidated),
    _m("per_record_rejection", "KIP-937.whole-batch-rejection", "kafka-4", PerRecordRejection),
    _m("validates_log_append_time", "KIP-937.log-append-time-skips-validation", "kafka-3.6", ValidatesLogAppendTime),
    _m("before_after_swapped", "KIP-937.before-bound", "kafka-4", BeforeAfterSwapped),
    _m("no_long_max_fallback", "KIP-937.long-max-fallback", "kafka-3.6", NoLongMaxFallback),
    _m("exact_arithmetic", "KIP-937.int64-wraparound", "kafka-3.6 kafka-4", ExactArithmetic),
    _m("trusts_header_max", "KIP-32.batch-max-timestamp", "kafka-4", TrustsHeaderMax),
    _m("log_append_time_plain_now", "KIP-32.log-append-time-leader-max", "kip", LogAppendTimeIsPlainNow),
    _m("event_time_by_wall_clock", "KIP-870.event-time-retention", "kip", EventTimeByWallClock),
    _m("list_offsets_last_match", "KIP-33.list-offsets-first-offset-at-or-after", "kafka-4", ListOffsetsLastMatch),
    _m("wrong_error_code", "KIP-937.error-code-32", "kafka-4", WrongErrorCode),
    _m("bounds_swapped_in_message", "KIP-937.record-error-message", "kafka-3.6", BoundsSwappedInMessage),
    _m(
        "keeps_create_time_on_lat_topic",
        "KIP-32.log-append-time-assigned",
        "kafka-4",
        KeepsCreateTimeOnLogAppendTimeTopic,
    ),
    _m("retention_skips_survivors", "KIP-32.retention-segment-level", "kafka-4", RetentionSkipsSurvivors),
    _m("rolls_by_wall_clock", "KIP-32.roll-by-first-timestamp", "kafka-4", RollsByWallClock),
    _m("no_mtime_fallback", "KIP-32.retention-mtime-fallback", "kafka-3.6", NoMtimeFallback),
    _m("sentinel_always_minus_one", "KIP-228.sentinel-long-min", "kip", SentinelAlwaysMinusOne),
    _m("after_unbounded_by_default", "KIP-937.default-after-one-hour", "kafka-4", AfterUnboundedByDefault),
    _m(
        "lat_in_create_time_response",
        "KIP-32.produce-response-log-append-time",
        "kafka-4",
        LogAppendTimeInCreateTimeResponse,
    ),
    _m("max_timestamp_last_offset", "KIP-33.list-offsets-max-timestamp", "kafka-4", MaxTimestampLastOffset),
    _m("index_appends_on_equal_max", "KIP-33.time-index-running-max", "kafka-4", IndexAppendsOnEqualMax),
    _m("rejects_negatives_under_kip", "KIP-228.negative-timestamps-accepted", "kip", RejectsNegativesUnderKip),
    _m("no_future_warning", "KIP-937.future-timestamp-warning", "kip", NoFutureWarning),
    _m("rejected_batch_consumes_offsets", "KIP-937.validation-before-append", KAFKA, RejectedBatchConsumesOffsets),
    _m("reread_serves_refused_batch", "KIP-937.read-within-bounds", "kafka-4", RereadServesRefusedBatch),
    _m("reread_stamps_read_time", "KIP-32.read-log-append-time", "kafka-4", RereadStampsReadTime),
    _m("reread_serves_batch_max", "KIP-32.read-timestamp-stable", "kafka-4", RereadServesBatchMax),
    _m("max_timestamp_at_latest_batch", "KIP-33.read-max-timestamp-holder", "kafka-4", MaxTimestampAtLatestBatch),
    _m("lookup_answers_batch_base", "KIP-33.read-lookup-first-match", "kafka-4", LookupAnswersBatchBase),
    _m("earliest_ignores_retention", "KIP-33.read-log-start", "kafka-4", EarliestIgnoresRetention),
]
BY_NAME = {m.name: m for m in CATALOGUE}
globals().update(BY_NAME)  # each mutant loadable as suites.selftest.mutants:<name>
