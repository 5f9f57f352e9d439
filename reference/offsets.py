"""ListOffsets: by timestamp (target >= 0), the special targets -1 to -6, and other negatives.

What a version knows is profile data (``list_offsets_targets``, ``list_offsets_max_version``,
``unknown_negative_target``, ``max_timestamp_offset``); see specs/profiles.toml.  Without tiered
storage the local log is the whole log: EARLIEST_LOCAL is the log start, LATEST_TIERED and
EARLIEST_PENDING_UPLOAD find nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ktc.specs.profiles import Profile

from .state import Partition, Segment
from .types import LIST_OFFSETS_MAX_VERSION, UNSUPPORTED_VERSION, ListOffsetsResult, StoredRecord, TimestampType

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
NOT_FOUND = ListOffsetsResult(-1, -1)
REFUSED = ListOffsetsResult(-1, -1, UNSUPPORTED_VERSION)


class OffsetRules:
    profile: Profile
    sentinel: int

    def list_offsets(self, partition: Partition, target: int, version: int | None = None) -> ListOffsetsResult:
        if self.refuses(target, version):
            return REFUSED
        if target < 0 and not self.knows(target, self.request_version(version)):
            return self.offset_for_timestamp(partition, target)  # up to 3.8: searched as a timestamp
        if target in (LATEST, EARLIEST, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
            return self.special_offset(partition, target)
        if target == MAX_TIMESTAMP:
            return self.max_timestamp_offset(partition)
        return self.offset_for_timestamp(partition, target)

    def request_version(self, version: int | None) -> int:
        """The version a request goes out at: the one asked for, else the newest both sides speak."""
        return version if version is not None else min(self.profile.list_offsets_max_version, LIST_OFFSETS_MAX_VERSION)

    def refuses(self, target: int, version: int | None) -> bool:
        """UNSUPPORTED_VERSION for a target the broker does not know at this version (3.9+): decided before
        the partition is looked up, so a missing partition gets it too (measured on 4.4.0)."""
        return (
            self.profile.unknown_negative_target == "unsupported-version"
            and target < 0
            and not self.knows(target, self.request_version(version))
        )

    def knows(self, target: int, version: int) -> bool:
        """Whether the broker treats ``target`` as special: known to it, and (3.9+) at a version that has it."""
        least = self.profile.target_version(target)
        if least is None:
            return False
        return self.profile.unknown_negative_target == "search" or version >= least

    def special_offset(self, partition: Partition, target: int) -> ListOffsetsResult:
        """LATEST: the log end; EARLIEST and EARLIEST_LOCAL: the log start; LATEST_TIERED and EARLIEST_PENDING_UPLOAD:
        none (nothing tiered)."""
        offsets = {
            LATEST: partition.next_offset,
            EARLIEST: partition.log_start_offset,
            EARLIEST_LOCAL: partition.log_start_offset,
            LATEST_TIERED: -1,
            EARLIEST_PENDING_UPLOAD: -1,
        }
        return ListOffsetsResult(offsets[target], -1)

    # -- target >= 0, and unknown negatives up to 3.8 ------------------------------------
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
        """The first record, in offset order, whose timestamp is at or after target (a negative target
        matches -1 records too: Kafka compares the numbers)."""
        for segment in self.searched_segments(partition, target):
            for record in segment.records():
                if (record.timestamp != self.sentinel or target < 0) and record.timestamp >= target:
                    return ListOffsetsResult(record.offset, record.timestamp)
        return NOT_FOUND

    # -- target -3 ------------------------------------------------------------------------
    def max_timestamp_offset(self, partition: Partition) -> ListOffsetsResult:
        """MAX_TIMESTAMP: the offset ``max_timestamp_offset`` says, at the partition's maximum."""
        if self.profile.max_timestamp_offset != "first-record-with-max":
            return self.recorded_max_offset(partition)
        return self.first_record_with_max(partition)

    def recorded_max_offset(self, partition: Partition) -> ListOffsetsResult:
        """Up to 3.7 the answer is what the segment recorded when the max was first reached (the first
        segment with the greatest max).  A log without a timestamp >= 0 answers its first segment's
        empty time index, (-1, base offset), found when that offset holds a record (measured on 3.7.2)."""
        tops = [(s.max_timestamp, s) for s in partition.segments if s.max_timestamp is not None]
        if not tops:
            base = partition.segments[0].base_offset
            return ListOffsetsResult(base, -1) if base < partition.next_offset else NOT_FOUND
        top, best = max(tops, key=lambda pair: pair[0])  # max() keeps the first of equals, like Scala's maxBy
        return ListOffsetsResult(best.offset_of_max, top)

    def first_record_with_max(self, partition: Partition) -> ListOffsetsResult:
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

    def partition_max(self, partition: Partition) -> int | None:
        """The greatest running max of any segment; Kafka's headers floor at -1, so an all -1 log has -1.

        None when there is nothing to find: an empty log, or (without the floor) no timestamps at all.
        """
        tops = [s.max_timestamp for s in partition.segments if s.max_timestamp is not None]
        if all(s.empty for s in partition.segments):
            return None
        floor = -1 if self.profile.batch_max_floor == "minus-one" else None
        return max(tops, default=floor)

    def shallow_offset_of_max(
        self,
        records: Sequence[StoredRecord],
        read: list[int],
        timestamp_type: TimestampType,
        in_place_uncompressed: bool,
    ) -> int:
        """The offset a segment records with a new max, before 3.8: for a CreateTime batch appended in place
        uncompressed (3.0-3.6), the first record whose timestamp *as the broker read it* is the max (a
        LogAppendTime-typed batch reads its header max in every record); else the batch's last offset."""
        kept = self.profile.max_timestamp_offset == "record-level-in-place" and in_place_uncompressed
        if not kept or timestamp_type is not TimestampType.CREATE_TIME:
            return records[-1].offset
        return records[read.index(max(read))].offset
