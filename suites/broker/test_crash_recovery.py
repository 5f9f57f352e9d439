"""Crash on the Kafka releases ktc starts: the JVM killed (SIGKILL) mid-history and started again on its log
directory (implementations/kafka/judge/restart.py), every later Fetch and ListOffsets judged against the
model's ``Crash`` (reference/segments.py, ``recover``).

On the newest 3.9 and 4 releases: drawn histories with one crash (``histories(crashes=True)``) judged on every
clause of the release's profile, and a planted fault caught.  The fault is a broker that does not recover: after
the kill, the clean-shutdown marker is written into its log directory, so Kafka loads the log as it stands and
rebuilds nothing (LogLoader recovers only when the marker is missing): the active segment's time index is the
preallocated, untrimmed file the kill left, and ListOffsets by timestamp and MAX_TIMESTAMP answer from it.  One
of those reads must fail.  (A fault that answered from the index as it stood before the crash would not be one:
on a healthy broker the rebuilt index is the same.)  The same history passes on the healthy broker first.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktc.implementations.families.kafka import KAFKA_3_9, KAFKA_4  # noqa: E402
from ktc.implementations.kafka.launch import RESTART_SESSION  # noqa: E402
from ktc.judge import harness  # noqa: E402
from ktc.kafka.processes.lifecycle import kill_group  # noqa: E402
from ktc.reference.types import (  # noqa: E402
    Advance,
    Crash,
    CreateTopic,
    Fetch,
    History,
    ListOffsets,
    Produce,
    TopicConfig,
)
from ktc.reports.verdicts import Validity  # noqa: E402
from ktc.strategies import histories  # noqa: E402
from ktc.suites._support import NOW, batch  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-crash-recovery")  # the module on one worker: its fixtures once
SEGMENT_MS = 600_000
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"  # LogLoader: present, the log is loaded without recovery
READS = (
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
)


@pytest.fixture(scope="module", params=[KAFKA_3_9, KAFKA_4], ids=["kafka-3.9", "kafka-4"])
def kafka(request):
    impl = request.param.implementation()
    try:
        impl.address()
        yield impl
    finally:
        impl.close()


def verdicts(impl, history: History):
    trace = impl.run([history])[0]
    assert trace.cut is None, trace.cut
    return harness.judge_one(history, trace, harness.clauses_holding(history.profile))


def crashes_once(history: History) -> bool:
    return sum(isinstance(op, Crash) for op in history.ops) == 1


@settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_drawn_histories_with_a_crash_are_judged_as_the_model_says(kafka, data):
    """Every clause of the release's profile holds over a drawn history with one crash (or is unknown where the
    clock interval of the restart cannot decide it); the reads it drew are judged, not skipped."""
    drawn = histories(profile=kafka.profile(), max_ops=10, crashes=True).filter(crashes_once)
    history = data.draw(drawn, label="history")
    trace = kafka.run([history])[0]
    # A history the model cannot follow on Kafka is drawn again, not failed: a cut (``unknown``) such as a retention
    # pass of one partition that also took segments of another (retention.ms is per topic on Kafka).
    assume(trace.cut is None or trace.cut.validity != "unknown")
    assert trace.cut is None, trace.cut
    found = harness.judge_one(history, trace, harness.clauses_holding(history.profile))
    assert not [v for v in found if v.bad], [v for v in found if v.bad]
    assert any(v.validity is Validity.PASS for v in found)


def index_left_by_the_kill(profile: str) -> History:
    """A segment without a timestamp rolled away by wall clock; the active one holds one batch (so no time index
    entry yet: the index lags one append), the partition's max.  Then the crash, and reads only that batch
    answers."""
    ops = (
        CreateTopic("t", TopicConfig(segment_ms=SEGMENT_MS)),
        Produce("t", batch(-1)),
        Advance(SEGMENT_MS + 1),
        Produce("t", batch(NOW + SEGMENT_MS)),
        Crash(),
        ListOffsets("t", -3),
        ListOffsets("t", NOW + SEGMENT_MS - 1_000),
        Fetch("t"),
    )
    return History(profile, ops, start_ms=NOW)


def not_recovering(launcher):
    """``launcher``'s restart, but with the clean-shutdown marker written after the kill: nothing is recovered."""

    def restart() -> None:
        broker = launcher.broker
        kill_group(broker.process)
        (launcher.log_dir.root / CLEAN_SHUTDOWN).write_text(json.dumps({"version": 0, "brokerEpoch": -1}))
        broker.config.update(RESTART_SESSION)
        broker.relaunch()

    return restart


def test_a_broker_that_does_not_rebuild_its_time_index_fails_and_a_healthy_one_passes(kafka):
    """Last on its broker: after the planted restart the broker's log is not one the model follows."""
    history = index_left_by_the_kill(kafka.profile())
    healthy = {v.clause: v.validity for v in verdicts(kafka, history) if v.clause in READS}
    assert healthy and set(healthy.values()) == {Validity.PASS}, healthy
    kafka.launcher.restart = not_recovering(kafka.launcher)
    try:
        faulty = {v.clause: v.validity for v in verdicts(kafka, history) if v.clause in READS}
    finally:
        del kafka.launcher.restart
    assert Validity.FAIL in faulty.values(), faulty
