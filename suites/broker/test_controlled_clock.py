"""A broker on a clock ktc sets (processes/clock.py): every setting echoed exactly, bounds decided at a point.

With the broker's now known to the millisecond, a record at exactly ``now + after`` (inclusive)
and one millisecond past it are decided on the broker itself, not left ``unknown`` by a
[sent, received] interval that straddles the bound.
"""

from __future__ import annotations

import itertools
import os

import pytest

pytest.importorskip("psutil", reason="the broker tier needs psutil (pip install psutil)")

from ktc.implementations.kafka.judge.clocked import Echo  # noqa: E402
from ktc.implementations.kafka.judge.logdir import LogDir  # noqa: E402
from ktc.kafka.client import wire  # noqa: E402
from ktc.kafka.processes import clock_shim, provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.kafka.processes.clock import ControlledClock  # noqa: E402
from ktc.kafka.topics import TopicNamer  # noqa: E402
from ktc.reference.types import Batch, Record  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-controlled-clock")  # the module on one worker: its fixtures once
DAY, AFTER, SEGMENT_MS = 86_400_000, 60_000, 60_000
names = itertools.count()


@pytest.fixture(scope="module")
def clocked(tmp_path_factory):
    clock = ControlledClock(clock_shim.build(), directory=tmp_path_factory.mktemp("clock"))
    try:
        with LocalBroker(provision.DEFAULT_VERSIONS[0], clock=clock) as broker, wire.Client(broker.bootstrap) as client:
            clock.observe = Echo(client, TopicNamer())
            yield clock, client, broker
    finally:
        clock.remove()


@pytest.mark.parametrize("shift", [0, 1, 249, 999, DAY, -DAY, 3 * 365 * DAY])
def test_every_setting_is_echoed_by_the_broker_to_the_millisecond(clocked, shift):
    clock, _client, _broker = clocked
    clock.set(wire.now_ms() + shift)  # raises ClockError unless the LogAppendTime echo equals it
    assert clock.verification.failures == []


def test_a_record_at_exactly_now_plus_after_is_accepted_and_one_past_it_is_rejected(clocked):
    clock, client, _broker = clocked
    topic = f"ktc-clock-bound-{next(names)}"
    code, message = client.create_topic(topic, {"message.timestamp.after.max.ms": AFTER})
    assert code == 0, message
    clock.resume()
    bound = clock.now() + AFTER
    at, past = client.produce(topic, Batch((Record(bound),))), client.produce(topic, Batch((Record(bound + 1),)))
    assert (at.error_code, past.error_code) == (0, 32)


def test_a_segment_file_written_by_the_broker_carries_the_clock_as_its_mtime(clocked):
    """Kafka's retention and ListOffsets fall back to a segment's file mtime: it must be the broker's clock."""
    clock, client, broker = clocked
    topic = f"ktc-clock-mtime-{next(names)}"
    assert client.create_topic(topic, {})[0] == 0
    clock.set(wire.now_ms() + 3 * 365 * DAY)
    assert client.produce(topic, Batch((Record(-1),))).error_code == 0
    segment = broker.tmpdir / "data" / f"{topic}-0" / f"{0:020d}.log"
    assert os.stat(segment).st_mtime_ns // 1_000_000 == clock.now()


def test_a_time_jump_past_segment_ms_rolls_a_segment_the_log_dir_shows(clocked):
    """Rolling by time, observed: the second append after segment.ms + 1 on the broker's clock opens a segment."""
    clock, client, broker = clocked
    topic = f"ktc-clock-roll-{next(names)}"
    assert client.create_topic(topic, {"segment.ms": SEGMENT_MS, "index.interval.bytes": 0})[0] == 0
    clock.resume()
    first = clock.now()
    assert client.produce(topic, Batch((Record(first),))).error_code == 0
    clock.set(first + SEGMENT_MS + 1)
    assert client.produce(topic, Batch((Record(first + SEGMENT_MS + 1),))).error_code == 0
    segments = LogDir(broker.tmpdir / "data").describe(topic, 0).segments
    assert [(s.base_offset, s.next_offset) for s in segments] == [(0, 1), (1, 2)]
    assert segments[0].time_index == ((first, 0),)  # rolled: Kafka appends its max when it closes a segment


def test_what_a_broker_is_judged_on_is_known_before_it_starts():
    """Rolls and retention are judged on a broker ktc starts on its clock whichever test reaches it first:
    its capabilities do not wait for the broker to have been started by an earlier test."""
    from ktc.implementations.families.kafka import KAFKA

    rolls = "KIP-32.roll-by-first-timestamp"
    controlled, host = (KAFKA.implementation({"kafka_clock": clock}, {}) for clock in ("controlled", "host"))
    assert rolls not in controlled.capabilities().unsupported and controlled.launcher.broker is None
    assert rolls in host.capabilities().unsupported and host.launcher.broker is None
