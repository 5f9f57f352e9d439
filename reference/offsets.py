"""ListOffsets: by timestamp (target >= 0) and the special targets -1, -2 and -3."""
from __future__ import annotations

from specs.profiles import Profile

from .state import Partition, Segment
from .types import ListOffsetsResult

LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
NOT_FOUND = ListOffsetsResult(-1, -1)


class OffsetRules:
    profile: Profile
    sentinel: int

    def list_offsets(self, partition: Partition, target: int) -> ListOffsetsResult:
        if target == LATEST:
            return ListOffsetsResult(partition.next_offset, -1)
        if target == EARLIEST:
            return ListOffsetsResult(partition.log_start_offset, -1)
        if target == MAX_TIMESTAMP:
            return self.max_timestamp_offset(partition)
        if target < 0:
            raise ValueError(f"ListOffsets target {target} is not modelled (only >= 0, -1, -2, -3)")
        return self.offset_for_timestamp(partition, target)

    # -- target >= 0 ----------------------------------------------------------------------
    def searched_segments(self, partition: Partition, target: int) -> list[Segment]:
        """Kafka searches only the first segment whose largest timestamp (or mtime) reaches target."""
        if self.profile.list_offsets_scope == "all-segments":
            return partition.segments
        for segment in partition.segments:
            if self.largest_timestamp(segment, partition.leader) >= target:
                return [segment]
        return []

    def largest_timestamp(self, segment: Segment, broker: int) -> int:
        top = segment.max_timestamp
        return top if top is not None and top >= 0 else segment.mtime_ms[broker]

    def offset_for_timestamp(self, partition: Partition, target: int) -> ListOffsetsResult:
        """The first record, in offset order, whose timestamp is at or after target."""
        for segment in self.searched_segments(partition, target):
            for record in segment.records():
                if record.timestamp != self.sentinel and record.timestamp >= target:
                    return ListOffsetsResult(record.offset, record.timestamp)
        return NOT_FOUND

    # -- target -3 ------------------------------------------------------------------------
    def max_timestamp_offset(self, partition: Partition) -> ListOffsetsResult:
        """The first record carrying the partition's maximum, in the first batch whose header max is it.

        Only that batch is searched: when its header max is Kafka's -1 floor and no record in it is -1
        (a batch of timestamps below -1), nothing is found (measured on 3.9.2 and 4.3.1: batches
        [-509], [-1] answer offset -1, not 1)."""
        top = self.partition_max(partition)
        if top is None:
            return NOT_FOUND
        first = next((b for s in partition.segments for b in s.batches if b.max_timestamp == top), None)
        hit = next((r for r in first.records if r.timestamp == top), None) if first is not None else None
        return NOT_FOUND if hit is None else ListOffsetsResult(hit.offset, top)

    def partition_max(self, partition: Partition):
        """The greatest running max of any segment; Kafka's headers floor at -1, so an all -1 log has -1.

        None when there is nothing to find: an empty log, or (without the floor) no timestamps at all.
        """
        tops = [s.max_timestamp for s in partition.segments if s.max_timestamp is not None]
        if all(s.empty for s in partition.segments):
            return None
        floor = -1 if self.profile.batch_max_floor == "minus-one" else None
        return max(tops, default=floor)
