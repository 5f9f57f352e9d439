"""A run that does not return says what it waits for (client/multiplex.py ``unanswered``), no broker.

A listener that accepts and never answers stands in for a broker that holds a request: the words name
each request still waiting, oldest first, with its broker and how long it has waited.
"""

from __future__ import annotations

import re
import socket

import pytest

pytest.importorskip("kafka", reason="the broker client needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.client import admin  # noqa: E402
from ktc.kafka.client.multiplex import Multiplexer  # noqa: E402


@pytest.fixture
def silent_broker():
    listener = socket.create_server(("127.0.0.1", 0))
    yield listener.getsockname()
    listener.close()


def test_no_request_in_flight_is_said_in_words():
    assert Multiplexer(("127.0.0.1", 9)).unanswered() == "no request waiting for an answer"


def test_requests_a_broker_holds_are_named_oldest_first_with_their_broker(silent_broker):
    pipeline = Multiplexer(silent_broker)
    host, port = silent_broker
    for topic in ("a", "b", "c", "d"):
        pipeline.call(admin.metadata([topic]), lambda answer, received: None)
    one = rf"Metadata to {re.escape(host)}:{port} for \d+ s"
    assert re.fullmatch(rf"waiting on {one}, {one}, {one} and 1 more", pipeline.unanswered())


def test_a_session_says_where_its_histories_stand_with_none_sent_yet():
    from ktc.implementations.kafka.judge.lockstep import LockstepSession
    from ktc.implementations.kafka.judge.pipeline import Pipeline
    from ktc.reference.types import CreateTopic, History

    pipeline = Pipeline(("127.0.0.1", 9), None)
    histories = [History("kip", (CreateTopic(f"t{n}"),)) for n in range(3)]
    session = LockstepSession(pipeline, histories)
    assert pipeline.session is session
    words = session.describe()
    assert words.startswith(f"{len(histories)} of {len(histories)} histories unfinished: 0 in flight"), words
    assert "0 waiting for the clock" in words and f"0 of {len(histories)} started on the shared clock" in words, words


def test_a_paused_operation_is_named_by_the_step_it_waits_in_and_fired_timers_are_counted():
    from ktc.kafka.client.messages import Pause

    def polls(times: int, awaited: str = "the broker to say yes"):
        for _ in range(times):
            yield Pause(0.0)

    def operation(times: int):
        return (yield from polls(times))

    pipeline = Multiplexer(("127.0.0.1", 9))
    pipeline.start(operation(3), pipeline.admin(), lambda value, received: None)
    where = re.match(
        r"1 timers scheduled: (polls \(test_unanswered_requests\.py:\d+\)) for the broker to say yes in 0\.0 s; "
        r"fired most: none$",
        pipeline.scheduled(),
    )
    assert where, pipeline.scheduled()
    while pipeline.timers:
        pipeline.fire_timers()
    assert pipeline.scheduled() == f"0 timers scheduled; fired most: {where.group(1)} x3"
