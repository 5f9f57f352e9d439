"""Real Kafka as an implementation under test: histories run on a broker, judged over intervals.

A broker's clock cannot be set, so each operation's ``now`` is only known to lie in
[request sent, response received].  ``run`` returns, with each trace, the history as the broker
actually ran it twice: once with every operation placed at the start of its interval and once at
its end (``trace.judged_as``).  The harness judges both and calls a clause ``unknown`` where they
disagree.  Echoes narrow the interval to a point: a LogAppendTime *is* the broker's now, and an
out-of-range text prints ``now - before`` and ``now + after``.  A history whose validation boundary
falls inside an interval is undecidable (found by the harness, ktc/harness.py): never pass, never fail.

``run`` takes many histories at once (``bulk``: the harness hands it all of a test's examples) and
runs them concurrently on a few pipelined connections, each operation still over its own interval
(pipeline.py); ``run_sequential`` runs them one request at a time, the way ``run`` used to.
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

from . import provision, scratch, wire
from .capabilities import broker_capabilities

UNSUPPORTED_VERSION = 35
# The model deletes segments only on an explicit RetentionPass; the broker must not do it behind our back.
QUIET = {"log.retention.check.interval.ms": 3_600_000, "log.initial.task.delay.ms": 3_600_000}
BROKER_LIMITS = {"before": "log.message.timestamp.before.max.ms", "after": "log.message.timestamp.after.max.ms",
                 "difference": "log.message.timestamp.difference.max.ms"}
RANGE_TEXT = re.compile(r"The timestamp should be within \[(-?\d+), (-?\d+)\]")
_TOPICS = itertools.count()


@dataclass(frozen=True)
class Observed:
    result: object
    sent: int
    received: int
    exact_now: Optional[int] = None
    ambiguous: bool = False  # the broker's answer depends on a now the interval cannot pin


class JudgedTrace(tuple):
    """A trace plus how to judge it: (history at interval starts, at interval ends, aligned trace)."""

    judged_as: tuple = ()
    undecidable: bool = False


class KafkaImplementation:
    """``kafka`` built-in: a local broker from Maven Central, or any broker at KAFKA_BOOTSTRAP_SERVERS."""

    name = "kafka"
    xdist_group = "kafka"  # one pytest-xdist worker talks to the brokers
    bulk = True  # the harness hands run() every history of a test at once
    chunk = int(os.environ.get("KTC_KAFKA_CHUNK", "128"))  # histories per CreateTopics request
    connections = int(os.environ.get("KTC_KAFKA_CONNECTIONS", "4"))  # for operations (plus one for admin)
    depth = int(os.environ.get("KTC_KAFKA_DEPTH", "2"))  # operations in flight per connection

    def __init__(self, version: Optional[str] = None, bootstrap: Optional[str] = None):
        self.kafka_version = version or os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
        self.bootstrap = bootstrap or os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        self._broker = self._client = self._profile = self._pipeline = self._data = self._defaults = None

    @property
    def version(self) -> str:
        return self.kafka_version if not self.bootstrap else f"external {self.bootstrap}"

    def client(self) -> wire.Client:
        if self._client is None:
            if not self.bootstrap:
                from .broker import LocalBroker
                self._data = scratch.make()  # partitions are created ~6x faster in RAM
                data = {"log.dirs": self._data} if self._data is not None else {}
                self._broker = LocalBroker(self.kafka_version, config={**QUIET, **data}).start()
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

    def limit_defaults(self) -> Optional[dict[str, int]]:
        """The broker's default timestamp limits ({"before", "after", "difference"}: whichever its
        version has), or None when they cannot be read (echoed_now then reads fewer texts)."""
        if self._defaults is None:
            code, _message, entries = self.client().describe_broker_configs(1, list(BROKER_LIMITS.values()))
            values = {key: entries[name].value for key, name in BROKER_LIMITS.items() if name in entries}
            readable = code == 0 and values and all(v is not None and v.isdigit() for v in values.values())
            self._defaults = {key: int(v) for key, v in values.items()} if readable else {}
        return self._defaults or None

    def run(self, histories):
        """Many histories at once on a few pipelined connections (pipeline.py)."""
        from .pipeline import Pipeline
        if self._pipeline is None:
            self._pipeline = Pipeline(self.client(), self.limit_defaults(), self.connections, self.depth)
        try:
            return self._pipeline.run(histories, self.chunk)
        except BaseException:
            self._pipeline, broken = None, self._pipeline
            broken.close()  # a connection in an unknown state is never reused
            raise

    def run_sequential(self, histories):
        """One history after another, one blocking request at a time (the baseline of bench_broker.py)."""
        return [self.run_one(h) for h in histories]

    def run_one(self, history: History) -> JudgedTrace:
        names, configs = topic_names(history), {}
        executed, observed = [], []
        for op, state in zip(history.ops, clock_states(history)):
            op = rebase(op, state.leader_now(op.topic, op.partition) if hasattr(op, "partition") else None)
            executed.append(op)
            observed.append(local(op) or self.apply(op, names[op.topic], configs))
        return judged(history, executed, observed, names)

    def apply(self, op, topic: str, configs: dict) -> Observed:
        handler = {CreateTopic: self.create, Produce: self.produce, Fetch: self.fetch, ListOffsets: self.list}
        return handler[type(op)](op, topic, configs)

    def create(self, op: CreateTopic, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        code, _message = self.client().create_topic(topic, kafka_configs(op.config), partitions=op.config.partitions)
        if code == 0:
            configs[op.topic] = op.config
        return Observed(CreateTopicResult(code), sent, wire.now_ms())

    def produce(self, op: Produce, topic: str, configs: dict) -> Observed:
        out = self.client().produce(topic, op.batch, partition=op.partition)
        return produce_observed(out, configs.get(op.topic), out.sent_ms, out.received_ms, self.limit_defaults())

    def fetch(self, op: Fetch, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        out = self.client().fetch_all(topic, partition=op.partition)
        return Observed(fetch_result(out), sent, wire.now_ms())

    def list(self, op: ListOffsets, topic: str, configs: dict) -> Observed:
        sent = wire.now_ms()
        out = self.client().list_offsets(topic, op.target, partition=op.partition)
        return Observed(list_result(out), sent, wire.now_ms())

    def close(self) -> None:
        if self._pipeline is not None:
            self._pipeline.close()
        if self._client is not None:
            self._client.__exit__(None, None, None)
        if self._broker is not None:
            self._broker.stop()
        scratch.remove(self._data)


def topic_names(history: History) -> dict[str, str]:
    """A fresh broker topic for every topic of the history, so histories never share one."""
    return {op.topic: f"ktc-{next(_TOPICS)}-{op.topic}" for op in history.ops if hasattr(op, "topic")}


def local(op) -> Optional[Observed]:
    """What an operation the broker cannot be asked for answers, at once (None: ask the broker)."""
    now = wire.now_ms()
    if isinstance(op, (Advance, StepClock, ElectLeader)):
        return Observed(Ack(), now, now)
    if isinstance(op, RetentionPass):
        return Observed(RetentionResult((), -1, UNSUPPORTED_VERSION), now, now)
    if isinstance(op, DescribeLog):
        return Observed(DescribeLogResult((), UNSUPPORTED_VERSION), now, now)
    return None


def judged(history: History, executed: list, observed: list[Observed], names: dict) -> JudgedTrace:
    """The trace, with the history as run (rebased, renamed) placed at both ends of every interval."""
    trace = JudgedTrace(o.result for o in observed)
    renamed = replace(history, ops=tuple(rename(op, names) for op in executed))
    trace.judged_as = (placed(renamed, observed, "sent"), placed(renamed, observed, "received"))
    # A retention pass cannot run on demand, so the broker's state after one is not the model's.
    # (Boundaries inside a clock interval are found by the harness, which knows the effective limits.)
    trace.undecidable = any(isinstance(op, RetentionPass) for op in history.ops) or \
        any(o.ambiguous for o in observed)
    return trace


def produce_result(out: wire.ProduceOutcome) -> ProduceResult:
    return ProduceResult(out.error_code, out.error_message, out.record_errors, out.base_offset,
                         out.log_append_time, out.log_start_offset, False, ())


def fetch_result(out: wire.FetchOutcome) -> FetchResult:
    batches = tuple(StoredBatch(b.base_offset, b.timestamp_type, b.max_timestamp,
                                tuple(StoredRecord(r.offset, r.timestamp) for r in b.records)) for b in out.batches)
    return FetchResult(batches, out.error_code)


def list_result(out: wire.ListOffsetsOutcome) -> ListOffsetsResult:
    return ListOffsetsResult(out.offset, out.timestamp, out.error_code)


def kafka_configs(config: TopicConfig) -> dict:
    out = {name: getattr(config, attr) for attr, name in CONFIG_NAMES.items() if getattr(config, attr) is not None}
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
        out["message.timestamp.type"] = "LogAppendTime"
    if config.compression_type != "producer":
        out["compression.type"] = config.compression_type
    return out


def echoed_now(out, config: Optional[TopicConfig], interval: Optional[tuple[int, int]] = None,
               defaults: Optional[dict[str, int]] = None) -> Optional[int]:
    """The broker's own clock when it told us: its LogAppendTime, or the one now a range text allows."""
    if out.error_code == 0 and out.log_append_time >= 0:
        return out.log_append_time
    nows = text_nows(out, config, interval, defaults)
    return next(iter(nows)) if nows is not None and len(nows) == 1 else None


def text_nows(out, config: Optional[TopicConfig], interval: Optional[tuple[int, int]],
              defaults: Optional[dict[str, int]]) -> Optional[set[int]]:
    """The instants of ``interval`` a rejected record's range text allows; None without a text.

    The text prints ``[now - before, now + after]`` (Java long arithmetic) with the broker's
    effective limits.  A topic's own setting of a limit overrides the broker's default
    (``defaults``, see KafkaImplementation.limit_defaults), and the effective before is that
    before or that difference limit (after: after or difference), whatever the version's rule.
    So the true now is one of these instants; it is pinned when it is the only one.  Without an
    interval or the defaults, only a topic with an explicit before and no difference limit is read.
    """
    bounds = range_bounds(out)
    if bounds is None or config is None:
        return None
    if interval is not None and defaults is not None:
        return {n for n in implied_nows(bounds, config, defaults) if interval[0] <= n <= interval[1]}
    explicit = config.difference_max_ms is None and config.before_max_ms is not None and \
        config.before_max_ms < 2**63 - 1
    return {bounds[0] + config.before_max_ms} if explicit else None


def implied_nows(bounds: tuple[int, int], config: TopicConfig, defaults: dict[str, int]) -> set[int]:
    """Every now that both printed bounds allow, for each candidate before and after limit."""
    def value(key: str) -> Optional[int]:
        own = getattr(config, f"{key}_max_ms")
        return own if own is not None else defaults.get(key)
    low, high = bounds
    befores = {value("before"), value("difference")} - {None}
    afters = {value("after"), value("difference")} - {None}
    return {wire.wrap64(low + b) for b in befores} & {wire.wrap64(high - a) for a in afters}


def produce_observed(out, config: Optional[TopicConfig], sent: int, received: int,
                     defaults: Optional[dict[str, int]]) -> Observed:
    """A produce over [sent, received]: pinned by an echo, or undecidable when its range text allows
    several instants (no single now could judge its text at both ends)."""
    nows = text_nows(out, config, (sent, received), defaults)
    return Observed(produce_result(out), sent, received, echoed_now(out, config, (sent, received), defaults),
                    ambiguous=nows is not None and len(nows) > 1)


def range_bounds(out) -> Optional[tuple[int, int]]:
    """``(now - before, now + after)`` from the first range text of a produce's record errors."""
    for error in out.record_errors:
        found = RANGE_TEXT.search(error.message or "")
        if found:
            return int(found.group(1)), int(found.group(2))
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
    at = lambda seen: seen.exact_now if seen.exact_now is not None else getattr(seen, end)
    steps = [(op, seen.result, at(seen)) for op, seen in zip(history.ops, observed)
             if not isinstance(op, (Advance, StepClock, ElectLeader))]
    ops, results, _start = on_real_time(steps)
    first = next((at(s) for s in observed), history.start_ms)
    return replace(history, ops=ops, start_ms=first, clock_offsets=(0,)), results


def on_real_time(steps) -> tuple:
    """(op, result, real ms) in order -> (ops with Advance ops for the real time between them, their
    results, the first real time or None)."""
    ops, results, clock, start = [], [], None, None
    for op, result, real in steps:
        if clock is None:
            clock = start = real
        elif real > clock:
            ops.append(Advance(real - clock))
            results.append(Ack())
            clock = real
        ops.append(op)
        results.append(result)
    return tuple(ops), tuple(results), start


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
