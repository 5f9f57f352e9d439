"""A minimal implementation under test, written from the KIP-937 text alone (no reference import).

It answers CreateTopic, Produce, Fetch and DescribeLog for single-segment logs under kafka-4 and
declares everything else unsupported, so ``ktc run --impl ktc.examples.minimal_broker:MinimalBroker
--profile kafka-4`` reports pass / unsupported per clause.  Use it as a template.
"""

from __future__ import annotations

from ktc.implementations.protocol import Capabilities
from ktc.reference.types import (
    Ack,
    CreateTopicResult,
    DescribeLogResult,
    FetchResult,
    ListOffsetsResult,
    ProduceResult,
    RecordError,
    RetentionResult,
    SegmentInfo,
    StoredBatch,
    StoredRecord,
    TimestampType,
    TopicConfig,
    header_max,
)

UNSUPPORTED = {
    k: "not implemented by the minimal example"
    for k in (
        "KIP-32",
        "KIP-33",
        "KIP-228",
        "KIP-870",
        "KIP-937.future-timestamp-warning",
        "KIP-937.per-record-validation",
    )
}
MESSAGE = "One or more records have been rejected due to invalid timestamp"
INVALID_CONFIG, UNKNOWN_TOPIC, UNSUPPORTED_VERSION = 40, 3, 35  # Kafka error codes
# Every operation needs an answer of its result type (README: "What run() returns"), even one this
# example does not implement: it answers those as a broker without the API would.
NOT_IMPLEMENTED = {
    "RetentionPass": RetentionResult((), -1, UNSUPPORTED_VERSION),
    "ListOffsets": ListOffsetsResult(-1, -1, UNSUPPORTED_VERSION),
}


class MinimalBroker:
    name, version = "minimal-broker", "0.1"

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset({"kafka-4"}), unsupported=UNSUPPORTED)

    def run(self, histories):
        return [self.replay(h) for h in histories]

    def replay(self, history):
        now, out = history.start_ms, []
        topics: dict[str, TopicConfig] = {}
        logs: dict[tuple[str, int], list[StoredBatch]] = {}  # (topic, partition) -> its batches
        for op in history.ops:
            kind = type(op).__name__
            if kind == "CreateTopic":
                out.append(self.create(op, topics, logs))
            elif kind in ("Produce", "Fetch", "DescribeLog") and (op.topic, op.partition) not in logs:
                out.append(missing(kind))  # no such topic, or no such partition of it (e.g. -1)
            elif kind == "Produce":
                out.append(self.produce(topics[op.topic], logs[op.topic, op.partition], op.batch, now))
            elif kind == "Fetch":
                out.append(FetchResult(tuple(logs[op.topic, op.partition])))
            elif kind == "DescribeLog":
                end = sum(len(b.records) for b in logs[op.topic, op.partition])
                out.append(DescribeLogResult((SegmentInfo(0, end, -1),)))
            elif kind in NOT_IMPLEMENTED:
                out.append(NOT_IMPLEMENTED[kind])
            else:  # Advance, StepClock, ElectLeader: nothing to answer
                now += op.ms if kind == "Advance" else 0
                out.append(Ack())
        return tuple(out)

    @staticmethod
    def create(op, topics, logs):
        """KIP-937: before/after.max.ms take values in [0, ...]; anything else, and 4.0's removed
        difference.max.ms, is INVALID_CONFIG (40)."""
        if any(v is not None and v < 0 for v in (op.config.before_max_ms, op.config.after_max_ms)):
            return CreateTopicResult(INVALID_CONFIG)
        if op.config.difference_max_ms is not None:  # removed in Kafka 4.0: an unknown config
            return CreateTopicResult(INVALID_CONFIG)
        topics[op.topic] = op.config
        logs.update({(op.topic, p): [] for p in range(op.config.partitions)})
        return CreateTopicResult(0)

    def produce(self, config, log, batch, now):
        before = config.before_max_ms if config.before_max_ms is not None else 2**63 - 1
        after = config.after_max_ms if config.after_max_ms is not None else 3_600_000
        lat = config.timestamp_type is TimestampType.LOG_APPEND_TIME
        errors = tuple(
            RecordError(i, self.out_of_range(ts, i, now, before, after))
            for i, ts in enumerate(self.read_timestamps(batch))
            if not lat and ts != -1 and self.wraps(now - ts, before, after)
        )
        if errors:
            return ProduceResult(32, MESSAGE, errors)
        base = sum(len(b.records) for b in log)
        stamps = [now if lat else r.timestamp for r in batch.records]
        records = tuple(StoredRecord(base + i, ts) for i, ts in enumerate(stamps))
        log.append(StoredBatch(base, config.timestamp_type, max([-1, *stamps]), records))
        return ProduceResult(0, None, (), base, now if lat else -1)

    @staticmethod
    def read_timestamps(batch):
        """How a broker reads a batch: in a LogAppendTime-typed batch every record reads the header's max."""
        if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return [header_max(batch)] * len(batch.records)
        return [r.timestamp for r in batch.records]

    @staticmethod
    def wraps(diff, before, after):
        as_long = lambda x: (x + 2**63) % 2**64 - 2**63  # Java long arithmetic
        diff = as_long(diff)
        return diff > before or as_long(-diff) > after

    @staticmethod
    def out_of_range(ts, offset, now, before, after):
        low, high = ((now - before + 2**63) % 2**64 - 2**63), ((now + after + 2**63) % 2**64 - 2**63)
        return (
            f"Timestamp {ts} of message with offset {offset} is out of range. "
            f"The timestamp should be within [{low}, {high}]"
        )


def missing(kind: str):
    """The answer about a topic that does not exist (its creation was refused), or a partition it does not
    have: UNKNOWN_TOPIC_OR_PARTITION."""
    return {
        "Produce": ProduceResult(UNKNOWN_TOPIC),
        "Fetch": FetchResult((), UNKNOWN_TOPIC),
        "DescribeLog": DescribeLogResult((), UNKNOWN_TOPIC),
    }[kind]
