"""Segments: time-based rolling, the time index, time-based and KIP-870 event-time retention."""

from __future__ import annotations

from ktc.specs.profiles import Profile

from . import configs, int64
from .state import Partition, Segment
from .types import StoredBatch, TopicConfig


class SegmentRules:
    profile: Profile
    sentinel: int

    # -- rolling --------------------------------------------------------------------------
    def roll_base(self, batch: StoredBatch) -> int | None:
        """What a new segment's first batch contributes as the rolling base (None: use wall clock)."""
        if self.profile.roll_basis == "first-record":
            first = batch.records[0].timestamp
            return None if first == self.sentinel else first
        return batch.max_timestamp if batch.max_timestamp >= 0 else None

    def time_waited(self, segment: Segment, incoming_max: int, now: int, broker: int) -> int:
        wrapping = self.profile.wrapping
        if segment.roll_base is None:
            return int64.sub(now, segment.created_ms[broker], wrapping)
        return int64.sub(incoming_max, segment.roll_base, wrapping)

    def should_roll(self, segment: Segment, incoming_max: int, now: int, broker: int, config: TopicConfig) -> bool:
        """LogSegment.shouldRoll, time part only: strictly more than segment.ms waited."""
        waited = self.time_waited(segment, incoming_max, now, broker)
        return not segment.empty and waited > configs.segment_ms(config)

    # -- time index -----------------------------------------------------------------------
    def counts_for_max(self, ts: int) -> bool:
        if self.profile.batch_max_floor == "minus-one":
            return ts >= 0
        return ts != self.sentinel

    def track_max(self, segment: Segment, batch: StoredBatch, offset_of_max: int) -> None:
        """Running max and the time index: a new entry only when the max strictly increases, at the offset
        LogValidator reported with the max (the batch's last offset from 3.7 on; MAX_TIMESTAMP's answer
        before 3.8)."""
        top = batch.max_timestamp
        if not self.counts_for_max(top):
            return
        if segment.max_timestamp is None or top > segment.max_timestamp:
            segment.max_timestamp, segment.offset_of_max = top, offset_of_max
            segment.time_index.append((top, offset_of_max))

    # -- retention ------------------------------------------------------------------------
    def retention_basis(self, segment: Segment, broker: int) -> int:
        """The timestamp retention measures a segment by; the file mtime when it has none."""
        if self.profile.retention_basis == "last-record":
            last = segment.records()[-1].timestamp
            return segment.mtime_ms[broker] if last == self.sentinel else last
        if segment.max_timestamp is not None and segment.max_timestamp >= 0:
            return segment.max_timestamp
        return segment.mtime_ms[broker]

    def time_breached(self, segment: Segment, now: int, broker: int, config: TopicConfig) -> bool:
        limit = configs.retention_ms(config)
        age = int64.sub(now, self.retention_basis(segment, broker), self.profile.wrapping)
        return limit >= 0 and age > limit

    def event_time_breached(self, segment: Segment, partition: Partition, config: TopicConfig) -> bool:
        """KIP-870: partition.maxEventTime - record time > retention.max.eventtime.ms, for every record."""
        limit = config.retention_max_eventtime_ms
        top, mine = partition.max_event_time, segment.event_max
        if not self.profile.event_time_retention or limit is None or top is None or mine is None:
            return False
        return top - mine > limit

    def deletable(self, segment: Segment, partition: Partition, now: int, config: TopicConfig) -> bool:
        if segment.empty:
            return False
        broker = partition.leader
        return self.time_breached(segment, now, broker, config) or self.event_time_breached(segment, partition, config)

    def deletable_prefix(self, partition: Partition, now: int, config: TopicConfig) -> list[Segment]:
        """Oldest first, stopping at the first segment that must be kept."""
        doomed = []
        for segment in partition.segments:
            if not self.deletable(segment, partition, now, config):
                break
            doomed.append(segment)
        return doomed
