"""Mutable state of the model: partitions made of segments.  No rules live here, only storage."""

from __future__ import annotations

from dataclasses import dataclass, field

from .types import StoredBatch, StoredRecord, TopicConfig


@dataclass
class Segment:
    base_offset: int
    created_ms: dict[int, int]  # per broker: its clock when the segment was created
    mtime_ms: dict[int, int]  # per broker: its clock at the last append (file mtime)
    batches: list[StoredBatch] = field(default_factory=list)
    max_timestamp: int | None = None  # running max as the profile tracks it (None: nothing yet)
    offset_of_max: int = -1
    time_index: list[tuple[int, int]] = field(default_factory=list)
    roll_base: int | None = None  # timestamp time-based rolling is measured from
    event_max: int | None = None  # KIP-870: max event time of this segment's records

    @property
    def empty(self) -> bool:
        return not self.batches

    def records(self) -> list[StoredRecord]:
        return [r for b in self.batches for r in b.records]


@dataclass
class Partition:
    segments: list[Segment]
    leader: int = 0
    next_offset: int = 0
    last_log_append_time: int | None = None
    max_event_time: int | None = None  # KIP-870: partition.maxEventTime

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    @property
    def log_start_offset(self) -> int:
        return self.segments[0].base_offset


@dataclass
class Topic:
    config: TopicConfig
    partitions: list[Partition]


@dataclass
class Cluster:
    real_ms: int
    clock_offsets: list[int]
    topics: dict[str, Topic] = field(default_factory=dict)

    def now(self, broker: int) -> int:
        return self.real_ms + self.clock_offsets[broker]

    def clocks(self) -> dict[int, int]:
        return {b: self.now(b) for b in range(len(self.clock_offsets))}
