"""When the lockstep session (implementations/kafka/judge/lockstep.py) moves a broker's clock, offline.

Kafka's broker forwards DeleteTopics, CreateTopics and IncrementalAlterConfigs to its controller and
times the forwarded request out on its wall clock: a clock jump while one is in flight breaks the
channel, and a frozen clock never lets it reconnect (measured on 4.4.0: the run hung past 300 s).  So
the clock moves only once every request of the session is answered, DeleteTopics included.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kafka", reason="the broker client needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.judge.lockstep import LockstepSession  # noqa: E402
from ktc.kafka.client.routing import Leaders  # noqa: E402
from ktc.kafka.topics import TopicNamer  # noqa: E402
from ktc.reference.types import Advance, Batch, CreateTopic, History, Produce, Record, TopicConfig  # noqa: E402

T0, STEP_MS = 1_795_000_000_000, 5 * 24 * 3_600_000


class RecordingClock:
    def __init__(self):
        self.settings: list[int] = []

    def now(self) -> int:
        return self.settings[-1] if self.settings else T0

    def set(self, ms: int) -> None:
        self.settings.append(ms)


class HeldPipeline:
    """Records the admin requests a session makes and holds their answers; no slot is ever free."""

    def __init__(self):
        self.clock, self.namer, self.bootstrap = RecordingClock(), TopicNamer(), ("127.0.0.1", 9092)
        self.calls: list = []  # (api, callback) awaiting an answer
        self.live_topics: set[str] = set()
        self.leaders = Leaders()

    def call(self, call, done, address=None) -> None:
        self.calls.append((call.api, done))

    def free(self, address):
        return None


def a_history_waiting_five_days() -> History:
    batch = Batch((Record(T0),))
    return History(
        "kip",
        (CreateTopic("t", TopicConfig()), Produce("t", batch), Advance(STEP_MS), Produce("t", batch)),
        start_ms=T0,
    )


def parked_session(pipeline: HeldPipeline) -> LockstepSession:
    """A session whose only history waits for the clock, its DeleteTopics of an earlier history in flight."""
    session = LockstepSession(pipeline, [a_history_waiting_five_days()])
    run = session.runs[0]
    run.observed += [None, None, None]  # its CreateTopic, Produce and Advance are behind it
    session.started.add(id(run))
    session.parked.append(run)
    session.doomed = ["ktc-finished-history-t"]
    session.delete()
    return session


def test_the_clock_does_not_move_while_a_delete_topics_is_in_flight():
    pipeline = HeldPipeline()
    session = parked_session(pipeline)
    session.pump()
    assert [api for api, _ in pipeline.calls] == ["DeleteTopics"] and pipeline.clock.settings == []


def test_the_clock_moves_to_the_next_due_time_once_the_delete_topics_is_answered():
    pipeline = HeldPipeline()
    session = parked_session(pipeline)
    session.pump()
    _, answered = pipeline.calls.pop()
    answered({"ktc-finished-history-t": 0}, T0)
    assert pipeline.clock.settings == [T0 + STEP_MS] and session.deleting == 0
