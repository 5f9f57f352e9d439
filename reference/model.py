"""The reference model: interpret a History into a Trace, one result per operation.

Pure and deterministic: time comes only from the history (real time plus each broker's clock
offset), nothing is read from the machine.  ``Model`` combines the rule mixins; a mutant is a
subclass that overrides one rule method (see suites/selftest/mutants.py).
"""

from __future__ import annotations

from collections.abc import Callable

from ktc.specs.profiles import Profile, get

from . import configs
from .append import AppendRules
from .configs import config_error
from .offsets import REFUSED, OffsetRules
from .segments import SegmentRules
from .state import Cluster, Partition, Segment, Topic
from .types import (
    INVALID_CONFIG,
    NO_TIMESTAMP,
    NONE,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION,
    Ack,
    Advance,
    Batch,
    CreateTopic,
    CreateTopicResult,
    DescribeLog,
    DescribeLogResult,
    ElectLeader,
    Fetch,
    FetchResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Op,
    Produce,
    ProduceResult,
    Result,
    RetentionPass,
    RetentionResult,
    SegmentInfo,
    StepClock,
    StoredBatch,
    TimestampType,
    TopicConfig,
    Trace,
)


class Model(AppendRules, SegmentRules, OffsetRules):
    def __init__(self, profile: Profile, sentinel: int = NO_TIMESTAMP) -> None:
        self.profile = profile
        self.sentinel = sentinel if profile.sentinel == "parameter" else NO_TIMESTAMP

    @classmethod
    def for_history(cls, history: History) -> Model:
        return cls(get(history.profile), history.no_timestamp)

    def run(self, history: History) -> Trace:
        cluster = Cluster(history.start_ms, list(history.clock_offsets))
        return tuple(self.apply(cluster, op) for op in history.ops)

    def replay(self, history: History, stop: int) -> Cluster:
        """The model's state just before operation ``stop`` (used by checks to explain a result)."""
        cluster = Cluster(history.start_ms, list(history.clock_offsets))
        for op in history.ops[:stop]:
            self.apply(cluster, op)
        return cluster

    def apply(self, cluster: Cluster, op: Op) -> Result:
        handler: Callable[[Cluster, Op], Result] = getattr(self, "op_" + type(op).__name__)
        return handler(cluster, op)

    # -- cluster-level operations -----------------------------------------------------------
    def op_Advance(self, cluster: Cluster, op: Advance) -> Ack:
        cluster.real_ms += op.ms
        return Ack()

    def op_StepClock(self, cluster: Cluster, op: StepClock) -> Ack:
        cluster.clock_offsets[op.broker] += op.delta_ms
        return Ack()

    def op_ElectLeader(self, cluster: Cluster, op: ElectLeader) -> Ack:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is not None:
            partition.leader = op.broker
        return Ack()

    def op_CreateTopic(self, cluster: Cluster, op: CreateTopic) -> CreateTopicResult:
        if op.topic in cluster.topics:
            return CreateTopicResult(TOPIC_ALREADY_EXISTS)
        error = config_error(op.config, self.profile)
        if error == NONE:
            clocks = cluster.clocks()
            fresh = [Partition([Segment(0, dict(clocks), dict(clocks))]) for _ in range(op.config.partitions)]
            cluster.topics[op.topic] = Topic(op.config, fresh)
        return CreateTopicResult(error)

    def partition(self, cluster: Cluster, topic: str, index: int) -> Partition | None:
        found = cluster.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return None
        return found.partitions[index]

    # -- produce ----------------------------------------------------------------------------
    def op_Produce(self, cluster: Cluster, op: Produce) -> ProduceResult:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is None:
            return ProduceResult(UNKNOWN_TOPIC_OR_PARTITION)
        config = cluster.topics[op.topic].config
        now = cluster.now(partition.leader)
        refused = self.batch_error(op.batch, config, now)
        warnings = () if op.batch.control else self.warnings(op.batch, config, now)
        if refused is not None:
            code, message, errors = refused
            self.discard(partition, op.batch)
            return ProduceResult(code, message, errors, -1, -1, partition.log_start_offset, False, warnings)
        return self.append(cluster, partition, op.batch, config, warnings)

    def append(
        self, cluster: Cluster, partition: Partition, batch: Batch, config: TopicConfig, warnings: tuple[str, ...]
    ) -> ProduceResult:
        now = cluster.now(partition.leader)
        lat = None
        if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
            lat = self.log_append_time(now, partition.last_log_append_time)
            partition.last_log_append_time = lat
        records = self.stored_records(batch, config, partition.next_offset, lat)
        stored = StoredBatch(partition.next_offset, config.timestamp_type, self.batch_max(lat, batch), records)
        rolled = self.should_roll(partition.active, stored.max_timestamp, now, partition.leader, config)
        if rolled:
            partition.segments.append(self.new_segment(cluster, partition.next_offset))
        in_place = batch.codec == "none" and not configs.rebuilds(config, "none")
        shallow = self.shallow_offset_of_max(records, self.read_create_times(batch), config.timestamp_type, in_place)
        self.write(cluster, partition, stored, shallow)
        return ProduceResult(
            0,
            None,
            (),
            stored.base_offset,
            self.response_log_append_time(lat, now),
            partition.log_start_offset,
            rolled,
            warnings,
        )

    def response_log_append_time(self, lat: int | None, now: int) -> int:
        """The ProduceResponse's log_append_time: the LogAppendTime, or -1 on a CreateTime topic."""
        return -1 if lat is None else lat

    def discard(self, partition: Partition, batch: Batch) -> None:
        """A refused batch leaves the log untouched: no record stored, no offset consumed."""

    def new_segment(self, cluster: Cluster, base_offset: int) -> Segment:
        clocks = cluster.clocks()
        return Segment(base_offset, dict(clocks), dict(clocks))

    def write(self, cluster: Cluster, partition: Partition, stored: StoredBatch, offset_of_max: int) -> None:
        segment = partition.active
        if segment.empty:
            segment.roll_base = self.roll_base(stored)
        segment.batches.append(stored)
        segment.mtime_ms.update(cluster.clocks())
        self.track_max(segment, stored, offset_of_max)
        self.track_event_time(partition, segment, stored)
        partition.next_offset += len(stored.records)

    def track_event_time(self, partition: Partition, segment: Segment, stored: StoredBatch) -> None:
        """KIP-870: event time is the producer's CreateTime, kept even when LogAppendTime overwrote it."""
        if not self.profile.dual_timestamps:
            return
        creates = (r.timestamp if r.create_time is None else r.create_time for r in stored.records)
        times = [t for t in creates if t != self.sentinel]
        if not times:
            return
        segment.event_max = max(times) if segment.event_max is None else max(segment.event_max, *times)
        top = partition.max_event_time
        partition.max_event_time = max(times) if top is None else max(top, *times)

    # -- reads and retention -----------------------------------------------------------------
    def op_Fetch(self, cluster: Cluster, op: Fetch) -> FetchResult:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is None:
            return FetchResult((), UNKNOWN_TOPIC_OR_PARTITION)
        return FetchResult(tuple(b for s in partition.segments for b in s.batches))

    def op_ListOffsets(self, cluster: Cluster, op: ListOffsets) -> ListOffsetsResult:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is None and self.refuses(op.target, op.version):
            return REFUSED  # decided before the partition is looked up
        if partition is None:
            return ListOffsetsResult(-1, -1, UNKNOWN_TOPIC_OR_PARTITION)
        return self.list_offsets(partition, op.target, op.version)

    def op_RetentionPass(self, cluster: Cluster, op: RetentionPass) -> RetentionResult:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is None:
            return RetentionResult((), -1, UNKNOWN_TOPIC_OR_PARTITION)
        config = cluster.topics[op.topic].config
        doomed = self.deletable_prefix(partition, cluster.now(partition.leader), config)
        if len(doomed) == len(partition.segments):
            partition.segments.append(self.new_segment(cluster, partition.next_offset))
        del partition.segments[: len(doomed)]
        return RetentionResult(tuple(s.base_offset for s in doomed), partition.log_start_offset)

    def op_DescribeLog(self, cluster: Cluster, op: DescribeLog) -> DescribeLogResult:
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is None:
            return DescribeLogResult((), UNKNOWN_TOPIC_OR_PARTITION)
        ends = [s.base_offset for s in partition.segments[1:]] + [partition.next_offset]
        return DescribeLogResult(
            tuple(
                SegmentInfo(s.base_offset, end, -1 if s.max_timestamp is None else s.max_timestamp, tuple(s.time_index))
                for s, end in zip(partition.segments, ends)
            )
        )


def run(history: History) -> Trace:
    """Interpret one history under its own profile with the unmutated model."""
    return Model.for_history(history).run(history)


__all__ = ["Model", "run", "INVALID_CONFIG"]
