"""What one operation of a history sends to the broker (``operation``: its requests, as a generator the
multiplexer drives, each at its partition's leader: client/routing.py), which operations go out together
(``leading_creates``: a history's leading CreateTopics, created with the batch's), and which is not sent at all
(``skipped``: a ListOffsets the broker was probed not to answer).  pipeline.py schedules them; this module says
what they are on the wire."""

from __future__ import annotations

from ktc.kafka.client import admin, messages, routing, wire
from ktc.kafka.topics import kafka_configs
from ktc.reference.types import (
    CreateTopic,
    CreateTopicResult,
    Fetch,
    History,
    ListOffsets,
    ListOffsetsResult,
    Produce,
)

from .observe import UNSUPPORTED_VERSION, Observed, fetch_result, list_result, produce_result


def skipped(op, probed) -> Observed | None:
    """A ListOffsets the broker was probed not to answer (it closed the connection): not sent, and the
    history judged without it (observe.placed); the clauses resting on it are unsupported."""
    if probed.refuses(op) is None:
        return None
    now = wire.now_ms()
    return Observed(ListOffsetsResult(-1, -1, UNSUPPORTED_VERSION), now, now, skipped=True)


def leading_creates(history: History) -> list[CreateTopic]:
    """The CreateTopic operations a history starts with (each topic once): safe to create together."""
    out: list[CreateTopic] = []
    for op in history.ops:
        if not isinstance(op, CreateTopic) or any(op.topic == o.topic for o in out):
            break
        out.append(op)
    return out


def operation(
    op,
    topic: str,
    exists_ok: bool = False,
    wait_s: float = 60.0,
    configs=kafka_configs,
    list_offsets_version: int | None = None,
    fetch_wait_ms: int = 0,
    leaders: routing.Leaders | None = None,
):
    """The requests of one operation (a generator); returns (result, the ProduceOutcome or None).  Each goes to
    its partition's leader as ``leaders`` knows it (asked of Metadata when not known), and is sent again while
    the answer is a leader error (routing.on_leader).  ``exists_ok``: no earlier CreateTopic of this history
    created the topic, so TOPIC_ALREADY_EXISTS can only be our own resent request."""
    leaders = routing.Leaders() if leaders is None else leaders
    if isinstance(op, CreateTopic):
        new = admin.NewTopic(topic, configs(op.config), op.config.partitions)
        results = yield from routing.create_and_wait([new], wait_s, exists_ok=exists_ok, leaders=leaders)
        return CreateTopicResult(results[topic][0]), None
    return (
        yield from routing.on_leader(
            lambda: requests(op, topic, list_offsets_version, fetch_wait_ms),
            (topic, op.partition),
            leaders,
            lambda out: out[0].error_code,
        )
    )


def requests(op, topic: str, list_offsets_version: int | None, fetch_wait_ms: int):
    """A Produce, Fetch or ListOffsets on the wire (a generator); returns (result, the ProduceOutcome or None)."""
    if isinstance(op, Produce):
        out = yield messages.produce(topic, wire.encode_batch(op.batch), partition=op.partition)
        return produce_result(out), out
    if isinstance(op, Fetch):
        return fetch_result((yield from messages.fetch_all(topic, op.partition, fetch_wait_ms))), None
    if isinstance(op, ListOffsets):
        version = list_offsets_version if op.version is None else op.version
        answers = yield messages.list_offsets([(topic, op.partition, op.target)], int(op.read_committed), version)
        return list_result(answers[(topic, op.partition)]), None
    raise TypeError(f"{type(op).__name__} is not sent to the broker")
