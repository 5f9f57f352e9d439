"""A RetentionPass on a broker ktc started on a clock it sets: the broker's own retention thread, at the history's now.

Kafka deletes segments by time only in its retention thread (``kafka-log-retention``, every
``log.retention.check.interval.ms`` on the monotonic clock, each pass over every log at the wall
clock's now).  No request runs it, so ktc lets it run often (``BROKER_CONFIG``) and *holds* every
topic's ``retention.ms`` at -1 (no time limit) until a history asks for a pass:

1. set the topic's ``retention.ms`` to the history's (IncrementalAlterConfigs; the broker default
   when the history has none) and wait until DescribeConfigs shows it;
2. wait for two passes of the retention thread, each seen on ktc's canary topic (retention.ms 0):
   a batch produced there is gone (ListOffsets EARLIEST past it) only once a pass has reached the
   canary after the produce.  The first pass may have visited the topic before its new value was in
   force; the second starts after the first ended, so it visits the topic with the new value;
3. read what went: the segments in the log directory before and after, and the log start offset
   (ListOffsets EARLIEST); then hold ``retention.ms`` at -1 again before the history goes on.

The broker's clock stands still meanwhile (ktc sets it), so every pass in between decides the same
as the one the model runs.  What is left unproven: that the broker applies a topic config to its log
within a whole pass after DescribeConfigs shows it (it is applied right after, on one thread).
"""

from __future__ import annotations

import time
from dataclasses import replace

from ktc.kafka.client import admin, messages, wire
from ktc.kafka.client.records import WireError
from ktc.kafka.processes.broker import BrokerError
from ktc.reference.types import Batch, Record, RetentionResult, TopicConfig

from .observe import Cut

RETENTION = "retention.ms"
HELD = -1  # no time limit: retention acts only while a history's RetentionPass is in progress
CHECK_INTERVAL_MS = 5
# The retention thread of a broker ktc started, often (its passes only act on held topics in step 2); and
# deleted segments' files closed a minute later, as Kafka's default: with 0 (ktc's default for its brokers,
# to keep tmpfs small), a pass that deletes an active segment rolls it and closes its files at once, while
# the roll's own asynchronous flush is still queued -- ClosedChannelException, and the only log directory
# goes offline (measured on 4.3.1 with the canary: twice in about 6 runs of a few thousand passes).
BROKER_CONFIG = {
    "log.retention.check.interval.ms": CHECK_INTERVAL_MS,
    "log.initial.task.delay.ms": 0,
    "log.segment.delete.delay.ms": 60_000,
}
POLL_S, PATIENCE_S = 0.005, 30.0


def held_configs(config: TopicConfig) -> dict:
    """The topic config a history's topic is created with on such a broker: retention held at -1,
    unless the history's own value is one the broker must refuse (KIP-32.time-configs-range)."""
    return {} if config.retention_ms is not None and config.retention_ms < HELD else {RETENTION: HELD}


class Canary:
    """ktc's own topic whose every batch the next retention pass deletes: each one a pass's footprint."""

    patience_s = PATIENCE_S

    def __init__(self, client, topic: str):
        self.client, self.base, self.renewed = client, topic, 0
        self.topic = self.create(topic)

    def create(self, topic: str) -> str:
        code, message = self.client.create_topic(topic, {RETENTION: 0, "message.timestamp.type": "CreateTime"})
        if code != 0:
            raise BrokerError(f"could not create the retention canary topic {topic}: error {code} {message or ''}")
        return topic

    def one_pass(self, now_ms: int):
        """Produce a batch one millisecond old; wait (polling EARLIEST) until a pass has deleted it.  A canary
        whose batch outlived the wait is replaced: a batch the broker keeps (stamped ahead of a clock ktc later
        moved back, so never old enough) would make every later pass wait its full patience."""
        out = yield messages.produce(self.topic, wire.encode_batch(Batch((Record(now_ms - 1),))))
        if out.error_code:
            raise WireError(f"the retention canary {self.topic} refused a produce: error {out.error_code}")
        try:
            yield from until(
                lambda: earliest_past(self.topic, out.base_offset),
                f"the broker's retention thread to delete the canary batch at offset {out.base_offset}",
                self.patience_s,
            )
        except WireError:
            self.renew()
            raise

    def renew(self) -> None:
        self.renewed += 1
        self.topic = self.create(f"{self.base}-{self.renewed}")


def earliest_past(topic: str, offset: int):
    answers = yield messages.list_offsets([(topic, 0, messages.EARLIEST_TIMESTAMP)])
    return answers[(topic, 0)].offset > offset


def described(topic: str, wanted):
    answers = yield admin.describe_topics_configs([(topic, [RETENTION])])
    code, values = answers[topic]
    return code != 0 or wanted(values.get(RETENTION))


def until(probe, awaited: str, patience_s: float = PATIENCE_S):
    """Run the generator ``probe`` until it returns True, pausing between tries; WireError after ``patience_s``."""
    deadline = time.monotonic() + patience_s
    while not (yield from probe()):
        if time.monotonic() > deadline:
            raise WireError(f"waited {patience_s:.0f} s for {awaited}")
        yield messages.Pause(POLL_S)


def set_retention(topic: str, value: int | None):
    """Set (or, with None, drop) the topic's retention.ms; wait until DescribeConfigs shows it."""
    code, message = yield admin.alter_topic_config(topic, RETENTION, value)
    if code == 0:
        wanted = (lambda seen: seen != str(HELD)) if value is None else (lambda seen: seen == str(value))
        yield from until(lambda: described(topic, wanted), f"{RETENTION} of {topic} to read {value}")
    return code


class Retention:
    """RetentionPass operations on one broker: its canary, its log directory, its clock."""

    def __init__(self, canary: Canary, log_dir, clock):
        self.canary, self.log_dir, self.clock = canary, log_dir, clock
        self.durations_ms: list[float] = []  # of each pass, request to restored hold

    def summary(self) -> dict:
        """How many passes ran and how long one took (median, max), for the report's clock line."""
        spans = sorted(self.durations_ms)
        return {
            "retention_passes": len(spans),
            "retention_median_ms": spans[len(spans) // 2] if spans else None,
            "retention_max_ms": spans[-1] if spans else None,
        }

    def steps(self, topic: str, partition: int, config: TopicConfig | None):
        """The operation (a generator, as the pipeline runs them); returns (RetentionResult, None), or
        (RetentionResult, Cut) when the pass also deleted segments of another partition."""
        started, before = time.monotonic(), self.log_dir.partition_bases(topic)
        if partition not in before:  # no such partition (or topic): the broker says which error
            return (yield from earliest(topic, partition)), None
        code = yield from set_retention(topic, config.retention_ms if config is not None else None)
        if code != 0:
            return RetentionResult((), -1, code), None
        for _ in range(2):
            yield from self.canary.one_pass(self.clock.now())
        result = yield from earliest(topic, partition)
        after = self.log_dir.partition_bases(topic)
        yield from set_retention(topic, HELD)
        self.durations_ms.append(round((time.monotonic() - started) * 1000, 1))
        gone = {p: [b for b in bases if b not in after.get(p, ())] for p, bases in before.items()}
        return replace(result, deleted_base_offsets=tuple(gone[partition])), beside(gone, partition)


def earliest(topic: str, partition: int):
    """The partition's log start offset as a RetentionResult (nothing deleted), or the broker's error."""
    out = (yield messages.list_offsets([(topic, partition, messages.EARLIEST_TIMESTAMP)]))[(topic, partition)]
    return RetentionResult((), -1, out.error_code) if out.error_code else RetentionResult((), out.offset)


def beside(gone: dict[int, list[int]], partition: int) -> Cut | None:
    """Kafka's retention.ms is per topic, the model's pass per partition: segments deleted from another
    partition leave the broker in a state the model never reaches, so the history ends ``unknown``."""
    others = sorted(p for p, bases in gone.items() if p != partition and bases)
    if not others:
        return None
    return Cut(
        "unknown",
        0,
        f"the retention pass of partition {partition} also deleted segments of partition(s) "
        f"{others} (retention.ms is per topic on Kafka; the model's pass is per partition)",
    )
