"""Plain data shared by the reference, every implementation under test, strategies and checks.

Nothing here encodes a rule: these are the nouns of Kafka's timestamp semantics (records,
batches, topic configs, the operations of a history and what each one returns).  An
implementation under test may import this module freely; it must never import the rule
modules next to it (see ARCHITECTURE.md).

Timestamps are Python ints holding Java ``long`` milliseconds.  Whether arithmetic on them
wraps like Java or is exact is a *profile* switch, never a property of the data.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NO_TIMESTAMP = -1
ONE_HOUR_MS = 3_600_000

# Kafka error codes that the model can return.
NONE = 0
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TIMESTAMP = 32
INVALID_CONFIG = 40
INVALID_RECORD = 87

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # a batch's codec (attribute bits 0-2)
# A topic's compression.type: "none" is NOT accepted (observed on Kafka 3.9.2: "String must be one of:
# uncompressed, zstd, lz4, snappy, gzip, producer"); "uncompressed" is the topic-level name.
TOPIC_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


class TimestampType(str, enum.Enum):
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


@dataclass(frozen=True)
class Record:
    """One record as a producer sends it: its own timestamp (ms) and opaque key/value."""

    timestamp: int
    key: bytes | None = None
    value: bytes = b""


@dataclass(frozen=True)
class Batch:
    """One v2 record batch of a produce request (produce v3+ carries exactly one per partition).

    ``max_timestamp`` is the header's MaxTimestamp *as the producer wrote it*; ``None`` means an
    honest header (the max of the records).  ``timestamp_type`` is attribute bit 3 as sent.
    ``timestamp_extended`` is KIP-228's proposed attribute bit (see the KIP-228 clauses).
    """

    records: tuple[Record, ...]
    codec: str = "none"
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    max_timestamp: int | None = None
    transactional: bool = False
    control: bool = False
    timestamp_extended: bool = False


@dataclass(frozen=True)
class TopicConfig:
    """Per-topic configs that matter to timestamps.  ``None`` means unset (profile default).

    ``difference_max_ms`` is the deprecated ``message.timestamp.difference.max.ms``;
    ``retention_max_eventtime_ms`` is KIP-870's proposed config.
    """

    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    before_max_ms: int | None = None
    after_max_ms: int | None = None
    difference_max_ms: int | None = None
    segment_ms: int | None = None
    retention_ms: int | None = None
    retention_max_eventtime_ms: int | None = None
    compression_type: str = "producer"
    partitions: int = 1

    def set_keys(self) -> tuple[str, ...]:
        """The Kafka config names this config sets explicitly (``message.timestamp.type`` only when not default)."""
        names = [name for attr, name in CONFIG_NAMES.items() if getattr(self, attr) is not None]
        if self.timestamp_type is not TimestampType.CREATE_TIME:
            names.insert(0, "message.timestamp.type")
        if self.compression_type != "producer":
            names.append("compression.type")
        return tuple(names)


CONFIG_NAMES = {
    "before_max_ms": "message.timestamp.before.max.ms",
    "after_max_ms": "message.timestamp.after.max.ms",
    "difference_max_ms": "message.timestamp.difference.max.ms",
    "segment_ms": "segment.ms",
    "retention_ms": "retention.ms",
    "retention_max_eventtime_ms": "retention.max.eventtime.ms",
}


# ---- operations of a history -------------------------------------------------------------


@dataclass(frozen=True)
class CreateTopic:
    topic: str
    config: TopicConfig = TopicConfig()


@dataclass(frozen=True)
class Produce:
    topic: str
    batch: Batch
    partition: int = 0


@dataclass(frozen=True)
class Advance:
    """Real time moves forward by ``ms`` on every broker clock."""

    ms: int


@dataclass(frozen=True)
class StepClock:
    """One broker's wall clock jumps by ``delta_ms`` (may be negative)."""

    broker: int
    delta_ms: int


@dataclass(frozen=True)
class ElectLeader:
    topic: str
    broker: int
    partition: int = 0


@dataclass(frozen=True)
class RetentionPass:
    """The leader runs its time-based retention check for one partition, at its own clock."""

    topic: str
    partition: int = 0


LIST_OFFSETS_MAX_VERSION = 11  # the newest ListOffsets version ktc's client sends (v11: KIP-1023's -6)


@dataclass(frozen=True)
class ListOffsets:
    """ListOffsets for one partition: a timestamp (>= 0) or a special target (-1 LATEST, -2 EARLIEST,
    -3 MAX_TIMESTAMP, -4 EARLIEST_LOCAL, -5 LATEST_TIERED, -6 EARLIEST_PENDING_UPLOAD, any other negative), at
    request ``version`` (None: the newest the implementation and ktc both speak, up to 11), read uncommitted or
    committed."""

    topic: str
    target: int
    partition: int = 0
    version: int | None = None
    read_committed: bool = False


@dataclass(frozen=True)
class Fetch:
    """Read every batch still in the partition's log."""

    topic: str
    partition: int = 0


@dataclass(frozen=True)
class DescribeLog:
    """Inspect the partition's segments (base offsets, max timestamps, time index)."""

    topic: str
    partition: int = 0


Op = Union[CreateTopic, Produce, Advance, StepClock, ElectLeader, RetentionPass, ListOffsets, Fetch, DescribeLog]


@dataclass(frozen=True)
class History:
    """A whole scenario: a profile, brokers with their clocks, and a sequence of operations.

    ``start_ms`` is real time at the start; broker ``b`` reads ``real + clock_offsets[b]``.
    Every topic-partition starts with broker 0 as leader and every broker as an in-sync replica.
    ``no_timestamp`` is the NO_TIMESTAMP sentinel (KIP-228 proposes ``INT64_MIN``).
    """

    profile: str
    ops: tuple[Op, ...]
    start_ms: int = 1_700_000_000_000
    clock_offsets: tuple[int, ...] = (0,)
    no_timestamp: int = NO_TIMESTAMP


# ---- results --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    """Result of an operation that returns nothing (clock moves, elections)."""


@dataclass(frozen=True)
class CreateTopicResult:
    error_code: int = NONE


@dataclass(frozen=True)
class RecordError:
    batch_index: int
    message: str | None


@dataclass(frozen=True)
class ProduceResult:
    """The ProduceResponse v8 partition fields, plus what the model can see and a broker can't."""

    error_code: int
    error_message: str | None = None
    record_errors: tuple[RecordError, ...] = ()
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = 0
    rolled: bool = False
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredRecord:
    offset: int
    timestamp: int
    create_time: int | None = None  # the producer's timestamp, where a profile keeps both


@dataclass(frozen=True)
class StoredBatch:
    base_offset: int
    timestamp_type: TimestampType
    max_timestamp: int
    records: tuple[StoredRecord, ...]


@dataclass(frozen=True)
class FetchResult:
    batches: tuple[StoredBatch, ...] = ()
    error_code: int = NONE


@dataclass(frozen=True)
class ListOffsetsResult:
    offset: int
    timestamp: int
    error_code: int = NONE


@dataclass(frozen=True)
class RetentionResult:
    deleted_base_offsets: tuple[int, ...] = ()
    log_start_offset: int = 0
    error_code: int = NONE


@dataclass(frozen=True)
class SegmentInfo:
    base_offset: int
    next_offset: int
    max_timestamp: int
    time_index: tuple[tuple[int, int], ...] = field(default=())


@dataclass(frozen=True)
class DescribeLogResult:
    segments: tuple[SegmentInfo, ...] = ()
    error_code: int = NONE


Result = Union[
    Ack, CreateTopicResult, ProduceResult, FetchResult, ListOffsetsResult, RetentionResult, DescribeLogResult
]
Trace = tuple[Result, ...]

TOPIC_ALREADY_EXISTS = 36
UNSUPPORTED_VERSION = 35


def header_max(batch: Batch) -> int:
    """The batch header's MaxTimestamp as it travels: the producer's value, else max(-1, records)."""
    if batch.max_timestamp is not None:
        return batch.max_timestamp
    return max([NO_TIMESTAMP, *(r.timestamp for r in batch.records)])


@dataclass(frozen=True)
class ClockState:
    """Real time, every broker's clock offset and the partition leaders, as in effect at one operation."""

    real_ms: int
    offsets: tuple[int, ...]
    leaders: tuple[tuple[tuple[str, int], int], ...]

    def clocks(self) -> list[int]:
        return [self.real_ms + o for o in self.offsets]

    def leader(self, topic: str, partition: int) -> int:
        return dict(self.leaders).get((topic, partition), 0)

    def leader_now(self, topic: str, partition: int) -> int:
        return self.real_ms + self.offsets[self.leader(topic, partition)]


def clock_states(history: History) -> list[ClockState]:
    """For each operation, the clocks and leaders it runs under (Advance/StepClock/ElectLeader applied)."""
    real, offsets, leaders, out = history.start_ms, list(history.clock_offsets), {}, []
    for op in history.ops:
        if isinstance(op, Advance):
            real += op.ms
        elif isinstance(op, StepClock):
            offsets[op.broker] += op.delta_ms
        elif isinstance(op, ElectLeader):
            leaders[(op.topic, op.partition)] = op.broker
        out.append(ClockState(real, tuple(offsets), tuple(leaders.items())))
    return out
