"""Real Kafka as an implementation under test: histories run on a broker, judged over intervals.

A broker's clock cannot be set, so each operation's ``now`` is only known to lie in
[request sent, response received].  ``run`` returns, with each trace, the history as the broker
actually ran it twice: once with every operation placed at the start of its interval and once at
its end (``trace.judged_as``).  The harness judges both and calls a clause ``unknown`` where they
disagree.  Echoes narrow the interval to a point: a LogAppendTime *is* the broker's now, and an
out-of-range text prints ``now - before``.  A history whose validation boundary falls inside an
interval is undecidable (found by the harness, ktc/harness.py): never pass, never fail.
"""
from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, replace
from typing import Optional

from implementations.protocol import Capabilities
from reference.types import (CONFIG_NAMES, Ack, Advance, CreateTopic, CreateTopicResult, DescribeLog,
                             DescribeLogResult, ElectLeader, Fetch, FetchResult, History, ListOffsets,
                             ListOffsetsResult, Produce, ProduceResult, RetentionPass, RetentionResult, StepClock,
                             StoredBatch, StoredRecord, TimestampType, TopicConfig, clock_states)

from . import provision, wire
from .capabilities import broker_capabilities

UNSUPPORTED_VERSION = 35
# The model deletes segments only on an explicit RetentionPass; the broker must not do it behind our back.
QUIET = {"log.retention.check.interval.ms": 3_600_000, "log.initial.task.delay.ms": 3_600_000}
RANGE_TEXT = re.compile(r"The timestamp should be within \[(-?\d+), (-?\d+)\]")
_TOPICS = itertools.count()


@dataclass(frozen=True)
class Observed:
    result: object
    sent: int
    received: int
    exact_now: Optional[int] = None


class JudgedTrace(tuple):
    """A trace plus how to judge it: (history at interval starts, at interval ends, aligned trace)."""

    judged_as: tuple = ()
    undecidable: bool = False


class KafkaImplementation:
    """``kafka`` built-in: a local broker from Maven Central, or any broker at KAFKA_BOOTSTRAP_SERVERS."""

    name = "kafka"
    xdist_group = "kafka"  # one pytest-xdist worker talks to the brokers

    def __init__(self, version: Optional[str] = None, bootstrap: Optional[str] = None):
        self.kafka_version = version or os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
        self.bootstrap = bootstrap or os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        self._broker = self._client = self._profile = None

    @property
    def version(self) -> str:
        return self.kafka_version if not self.bootstrap else f"external {self.bootstrap}"

    def client(self) -> wire.Client:
        if self._client is None:
            if not self.bootstrap:
                from .broker import LocalBroker
                self._broker = LocalBroker(self.kafka_version, config=QUIET).start()
            self._client = wire.Client(self.bootstrap or self._broker.bootstrap)
            self._client.__enter__()
        return self._client

    def capabilities(self) -> Capabilities:
        return broker_capabilities(self.profile())

    def profile(self) -> str:
        """Probe the broker's defaults: after.max.ms of one hour is 4.x; difference.max.ms is 3.x."""
        if isinstance(self._profile, Exception):
            raise self._profile  # a broker that failed once is not asked again for every test
        try:
            return self._probe()
        except Exception as error:
            self._profile = error
            raise

    def _probe(self) -> str:
        if self._profile is None:
            _code, _msg, entries = self.client().describe_broker_configs(1)
            after = entries.get("log.message.timestamp.after.max.ms")
            if after is not None and after.value == "3600000":
                self._profile = "kafka-4"
            else:
                self._profile = "kafka-3.6" if after is not None else "kafka-3.5"
        return self._profile

    def run(self, histories):
        return [self.run_one(h) for h in histories]

    def run_one(self, history: History) -> JudgedTrace:
        names = {op.topic: f"ktc-{next(_TOPICS)}-{op.topic}" for op in history.ops if hasattr(op, "topic")}
        configs: dict[str, TopicConfig] = {}
        executed, observed = [], []
        for op, state in zip(history.ops, clock_states(history)):
            op = rebase(op, state.leader_now(op.topic, op.partition) if hasattr(op, "partition") else None)
            executed.append(op)
            observed.append(self.apply(op, names, configs))
        trace = JudgedTrace(o.result for o in observed)
        renamed = replace(history, ops=tuple(rename(op, names) for op in executed))
        trace.judged_as = (placed(renamed, observed, "sent"), placed(renamed, observed, "received"))
        # A retention pass cannot run on demand, so the broker's state after one is not the model's.
        # (Boundaries inside a clock interval are found by the harness, which knows the effective limits.)
        trace.undecidable = any(isinstance(op, RetentionPass) for op in history.ops)
        return trace

    def apply(self, op, names: dict, configs: dict) -> Observed:
        now = wire.now_ms()
        if isinstance(op, (Advance, StepClock, ElectLeader)):
            return Observed(Ack(), now, now)
        if isinstance(op, (RetentionPass, DescribeLog)):
            empty = RetentionResult((), -1, UNSUPPORTED_VERSION) if isinstance(op, RetentionPass) else \
                DescribeLogResult((), UNSUPPORTED_VERSION)
            return Observed(empty, now, now)
        handler = {CreateTopic: self.create, Produce: self.produce, Fetch: self.fetch, ListOffsets: self.list}
        return handler[type(op)](op, names[op.topic], configs)

    def create(self, op: CreateTopic, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        code, _message = self.client().create_topic(topic, kafka_configs(op.config), partitions=op.config.partitions)
        if code == 0:
            configs[op.topic] = op.config
        return Observed(CreateTopicResult(code), sent, wire.now_ms())

    def produce(self, op: Produce, topic: str, configs: dict) -> Observed:
        out = self.client().produce(topic, op.batch, partition=op.partition)
        result = ProduceResult(out.error_code, out.error_message, out.record_errors, out.base_offset,
                               out.log_append_time, out.log_start_offset, False, ())
        return Observed(result, out.sent_ms, out.received_ms, echoed_now(out, configs.get(op.topic)))

    def fetch(self, op: Fetch, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        out = self.client().fetch_all(topic, partition=op.partition)
        batches = tuple(StoredBatch(b.base_offset, b.timestamp_type, b.max_timestamp,
                                    tuple(StoredRecord(r.offset, r.timestamp) for r in b.records)) for b in out.batches)
        return Observed(FetchResult(batches, out.error_code), sent, wire.now_ms())

    def list(self, op: ListOffsets, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        out = self.client().list_offsets(topic, op.target, partition=op.partition)
        return Observed(ListOffsetsResult(out.offset, out.timestamp, out.error_code), sent, wire.now_ms())

    def close(self) -> None:
        if self._client is not None:
            self._client.__exit__(None, None, None)
        if self._broker is not None:
            self._broker.stop()


def kafka_configs(config: TopicConfig) -> dict:
    out = {name: getattr(config, attr) for attr, name in CONFIG_NAMES.items() if getattr(config, attr) is not None}
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
        out["message.timestamp.type"] = "LogAppendTime"
    if config.compression_type != "producer":
        out["compression.type"] = config.compression_type
    return out


def echoed_now(out, config: Optional[TopicConfig]) -> Optional[int]:
    """The broker's own clock when it told us: its LogAppendTime, or now - before in a range text."""
    if out.error_code == 0 and out.log_append_time >= 0:
        return out.log_append_time
    explicit = config is not None and config.difference_max_ms is None and \
        config.before_max_ms is not None and config.before_max_ms < 2**63 - 1
    for error in out.record_errors if explicit else ():
        found = RANGE_TEXT.search(error.message or "")
        if found:
            return int(found.group(1)) + config.before_max_ms
    return None


NEAR_MS = 10**12  # about 31 years: closer than this to the history's clock means "relative to now"


def rebase(op, history_now: Optional[int]):
    """Move clock-relative timestamps onto the broker's clock, just before the request is sent.

    A history is written against its own clock; a real broker has the wall clock.  Timestamps within
    NEAR_MS of the history's clock keep their distance to now; the absolute edges (Long.MIN/MAX, -1,
    0, unit mistakes, the Gregorian cutover) stay as they are.
    """
    if history_now is None:
        return op
    shift = wire.now_ms() - history_now
    move = lambda ts: ts + shift if ts is not None and abs(ts - history_now) < NEAR_MS else ts
    if isinstance(op, ListOffsets):
        return replace(op, target=move(op.target) if op.target >= 0 else op.target)
    if isinstance(op, Produce):
        records = tuple(replace(r, timestamp=move(r.timestamp)) for r in op.batch.records)
        return replace(op, batch=replace(op.batch, records=records, max_timestamp=move(op.batch.max_timestamp)))
    return op


def rename(op, names: dict):
    return replace(op, topic=names[op.topic]) if hasattr(op, "topic") else op


def placed(history: History, observed: list[Observed], end: str) -> tuple:
    """The history with each operation at one end of its interval (or its echoed now), and its trace.

    Clock operations the broker could not perform are dropped; Advance ops carry real time instead.
    """
    ops, results, clock = [], [], None
    for op, seen in zip(history.ops, observed):
        if isinstance(op, (Advance, StepClock, ElectLeader)):
            continue
        now = seen.exact_now if seen.exact_now is not None else getattr(seen, end)
        if clock is None:
            clock = now
        elif now > clock:
            ops.append(Advance(now - clock))
            results.append(Ack())
            clock = now
        ops.append(op)
        results.append(seen.result)
    first = next((s.exact_now if s.exact_now is not None else getattr(s, end) for s in observed), history.start_ms)
    return replace(history, ops=tuple(ops), start_ms=first, clock_offsets=(0,)), tuple(results)


def kafka_3_9() -> KafkaImplementation:
    """Built-in ``kafka-3.9``: the latest 3.9.x from Maven Central, started locally."""
    impl = KafkaImplementation(provision.DEFAULT_VERSIONS[0])
    impl.name = f"kafka-{impl.kafka_version}"
    return impl


def kafka_4() -> KafkaImplementation:
    """Built-in ``kafka-4``: the latest 4.x that resolves on Maven Central, started locally."""
    impl = KafkaImplementation(provision.DEFAULT_VERSIONS[1])
    impl.name = f"kafka-{impl.kafka_version}"
    return impl
