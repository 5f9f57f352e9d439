"""Records a broker deletes on its own schedule are found after the history, never judged as the model's
(implementations/kafka/judge/logstart.py).

Found in CI: a broker that checks retention every second deleted a segment of ancient records between a
history's produces and its ListOffsets, and ktc failed KIP-33 clauses on a healthy Kafka.  The offline
tests need kafka-python; the last one needs a broker (KTC_BROKER_TESTS=1).
"""

from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.checks.verdicts import Validity  # noqa: E402
from ktc.implementations.families.bootstrap import TARGET as BY_ADDRESS  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.judge import logstart, pipeline  # noqa: E402
from ktc.implementations.kafka.settings import ByAddress  # noqa: E402
from ktc.judge import harness  # noqa: E402
from ktc.kafka.client.messages import ListOffsetsOutcome  # noqa: E402
from ktc.kafka.client.multiplex import Lost  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.reference.types import (  # noqa: E402
    Advance,
    Batch,
    CreateTopic,
    Fetch,
    History,
    ListOffsets,
    Produce,
    Record,
    RetentionPass,
    TopicConfig,
)

DAY_MS = 86_400_000
NOW = 1_795_000_000_000
CLAUSES = ("KIP-33.list-offsets-first-offset-at-or-after", "KIP-33.list-offsets-earliest", "KIP-32.create-time-kept")
NAMES = {"t": "ktc-run-gw0-1-t", "u": "ktc-run-gw0-2-u"}


def history(pause_ms: int) -> History:
    """Ancient records, a roll (the first record is older than segment.ms), ``pause_ms``, then reads."""
    config = TopicConfig(retention_ms=600_000, segment_ms=60_000)
    ops = (
        CreateTopic("t", config),
        Produce("t", Batch((Record(NOW - 10 * DAY_MS),))),
        Produce("t", Batch((Record(NOW),))),
        Advance(pause_ms),
        ListOffsets("t", NOW - 11 * DAY_MS),
        ListOffsets("t", -2),
        Fetch("t"),
    )
    return History("kafka-3.6", ops, NOW)


def answer(offset: int, error_code: int = 0) -> ListOffsetsOutcome:
    return ListOffsetsOutcome(error_code, -1, offset, 0)


# ---- offline ---------------------------------------------------------------------------------


def test_the_probe_reads_every_partition_the_history_produced_to_under_its_broker_name():
    ops = (*history(0).ops, Produce("u", Batch((Record(NOW),)), partition=2))
    assert logstart.partitions_to_probe(History("kafka-3.6", ops, NOW), NAMES) == [
        ("ktc-run-gw0-1-t", 0),
        ("ktc-run-gw0-2-u", 2),
    ]


def test_a_history_with_a_retention_pass_is_not_probed():
    ops = (*history(0).ops, RetentionPass("t"))
    assert logstart.partitions_to_probe(History("kafka-3.6", ops, NOW), NAMES) == []


def test_logs_that_still_start_at_zero_cut_nothing():
    assert logstart.cut_after({("t", 0): answer(0), ("u", 1): answer(-1, error_code=6)}, 7) is None


def test_a_log_that_starts_later_cuts_the_history_as_unknown_with_the_offset():
    cut = logstart.cut_after({("t", 0): answer(0), ("u", 1): answer(3)}, 7)
    assert (cut.validity, cut.op_index) == ("unknown", 7)
    assert "u-1 starts at 3" in cut.reason and "t-0" not in cut.reason


def test_a_probe_lost_with_its_connection_cuts_the_history_as_unknown():
    cut = logstart.cut_after(Lost("connection reset"), 7)
    assert cut.validity == "unknown" and "connection reset" in cut.reason


# ---- on a broker that checks retention every second ------------------------------------------


@pytest.fixture(scope="module")
def kafka():
    if not os.environ.get("KTC_BROKER_TESTS"):
        pytest.skip("needs a real broker: KTC_BROKER_TESTS=1 (./run tests sets it when Java and Maven exist)")
    version = provision.DEFAULT_VERSIONS[0]
    with LocalBroker(version, config={"log.retention.check.interval.ms": 500}) as broker:
        kafka = BrokerAdapter(BY_ADDRESS, ByAddress(broker.bootstrap, PLAINTEXT))
        try:
            yield kafka
        finally:
            kafka.close()


def pausing(monkeypatch) -> None:
    """Advance(ms) waits ``ms`` of real time, so the broker's retention check runs inside the history."""
    real = pipeline.local

    def local(op):
        if isinstance(op, Advance):
            time.sleep(op.ms / 1000)
        return real(op)

    monkeypatch.setattr(pipeline, "local", local)


def verdicts(kafka, h: History) -> dict:
    trace = kafka.run([h])[0]
    return {v.clause: v for v in harness.judge_one(h, trace, CLAUSES)}


def test_records_the_broker_deletes_mid_history_make_its_reads_unknown_not_failures(kafka, monkeypatch):
    pausing(monkeypatch)  # six retention checks inside the history: the first segment is deleted
    with monkeypatch.context() as unprobed:
        unprobed.setattr(logstart, "partitions_to_probe", lambda history, names: [])
        assert Validity.FAIL in {v.validity for v in verdicts(kafka, history(3_000)).values()}  # as CI saw
    judged = verdicts(kafka, history(3_000))
    assert {v.validity for v in judged.values()} == {Validity.UNKNOWN}
    assert all("deleted records" in v.notes[0] and "starts at 1" in v.notes[0] for v in judged.values())
