"""What a broker ktc did not start shows over real time: topics with short per-topic configs, produced to once,
then their log start offsets read again and again, each answer with its [sent, received] interval.

A broker by address runs its retention thread on its own schedule (``log.retention.check.interval.ms``, read
here with DescribeConfigs on the broker; a pass also waits ``log.initial.task.delay.ms``, 30 s, after the
broker starts, which no request shows).  No request triggers a pass, so the tier puts every history that needs
time on a topic of its own, all at once, and one wait judges them all.  Retention deletes whole segments, so
where the log start offset lands (ListOffsets EARLIEST) shows where segments began: rolls are seen through it.

This module never asks the model: it creates, produces and reads; the judging side decides when to stop.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ktc.kafka.client import admin, messages, wire
from ktc.kafka.topics import kafka_configs
from ktc.reference.types import CreateTopic, CreateTopicResult, History, ListOffsets, ListOffsetsResult, Produce

CHECK_INTERVAL = "log.retention.check.interval.ms"
# The ListOffsets version of every read: v5 is the newest without flexible fields, answered by Kafka 1.0 to 4.x,
# and the one a planted fault (suites/broker/realtime_faults.py) rewrites in place.
LIST_OFFSETS_VERSION = 5
EARLIEST = -2


@dataclass(frozen=True)
class Seen:
    """One answer and the interval in which the broker gave it (wall clock, ms)."""

    result: object
    sent: int
    received: int


@dataclass(frozen=True)
class Interval:
    """The broker's retention check interval as it said it (ms), or None with why not."""

    ms: int | None
    how: str


class Session:
    """One real-time run on the broker of ``adapter`` (implementations/kafka/adapter.py), within ``budget_s``."""

    def __init__(self, adapter, budget_s: float):
        self.adapter, self.budget_s = adapter, budget_s
        self.client = adapter.connect()
        self.topics: list[str] = []  # the broker topic of each history started, in order
        self.created: list[str] = []

    def check_interval(self) -> Interval:
        """``log.retention.check.interval.ms`` from DescribeConfigs on a broker of the cluster, every key asked
        (a broker that cannot parse a key list, as tansu 0.6, closes the connection on one)."""
        try:
            view = self.client.call(admin.metadata([]))
            broker = min(view.brokers) if view.brokers else 1
            code, message, entries = self.client.describe_broker_configs(broker, None)
        except (wire.WireError, OSError) as error:
            return Interval(None, f"DescribeConfigs on the broker failed ({error})")
        entry = entries.get(CHECK_INTERVAL)
        if code != 0 or entry is None or entry.value is None or not entry.value.strip().isdigit():
            why = f"error {code} {message or ''}".strip() if code else "it does not list it"
            return Interval(None, f"the broker does not say its {CHECK_INTERVAL} ({why})")
        return Interval(int(entry.value), f"{CHECK_INTERVAL}={entry.value} (DescribeConfigs on broker {broker})")

    def start(self, histories: list[History]) -> list[list[Seen]]:
        """Each history's one topic created and its produces sent, in order: what each op answered, when."""
        return [self.run_one(history) for history in histories]

    def run_one(self, history: History) -> list[Seen]:
        names = self.adapter.namer.names(history)
        out: list[Seen] = []
        for op in history.ops:
            if isinstance(op, CreateTopic):
                out.append(self.create(names[op.topic], op))
            elif isinstance(op, Produce):
                sent = wire.now_ms()
                answer = self.client.produce(names[op.topic], op.batch, partition=op.partition)
                out.append(Seen(answer, sent, wire.now_ms()))
        self.topics.append(next(iter(names.values())))
        return out

    def create(self, topic: str, op: CreateTopic) -> Seen:
        sent = wire.now_ms()
        code, _message = self.client.create_topic(topic, kafka_configs(op.config), partitions=op.config.partitions)
        if code == 0:
            self.created.append(topic)
        return Seen(CreateTopicResult(code), sent, wire.now_ms())

    def log_starts(self) -> list[Seen]:
        """Every started history's log start offset (ListOffsets EARLIEST), in one request."""
        return self.read([ListOffsets(topic, EARLIEST) for topic in self.topics])

    def list_offsets(self, index: int, reads: list[ListOffsets]) -> list[Seen]:
        """The ``reads`` of history ``index``, each in a request of its own (the newest version both speak)."""
        topic = self.topics[index]
        return [self.read([ListOffsets(topic, op.target, op.partition)], None)[0] for op in reads]

    def read(self, ops: list[ListOffsets], version: int | None = LIST_OFFSETS_VERSION) -> list[Seen]:
        call = messages.list_offsets([(op.topic, op.partition, op.target) for op in ops], 0, version)
        sent = wire.now_ms()
        try:
            answers = self.client.call(call)
        except (wire.WireError, OSError):
            with contextlib.suppress(wire.WireError, OSError):  # a broker gone meanwhile: the next poll asks again
                self.client.reopen_if_dropped()
            return [Seen(None, sent, wire.now_ms()) for _ in ops]  # no answer: the judge skips it
        received = wire.now_ms()
        return [Seen(result_of(answers.get((op.topic, op.partition))), sent, received) for op in ops]

    def close(self) -> None:
        """Delete the topics this session created (best effort), and its connection."""
        self.adapter.delete_topics(self.created)
        self.created = []
        self.client.close()


def result_of(out) -> ListOffsetsResult | None:
    return None if out is None else ListOffsetsResult(out.offset, out.timestamp, out.error_code)
