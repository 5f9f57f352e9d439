"""The record requests of many operations as one request: one Produce, Fetch or ListOffsets for many partitions.

A broker spends much of a small request on the request itself (reading and routing it, metrics, building and
sending the response) and little on the one partition it names.  The multiplexer (multiplex.py) gathers the
record requests its operations send in one turn of its event loop and sends those that can go together as one
request per group (``groups``), then hands each operation the part of the response about its own partitions
(``View``): parsed by the operation's own parser, as if it had been sent alone.

Requests go together only when that cannot change an answer: the same API, version and request-level fields
(acks, timeouts, isolation level), never the same partition twice, and no Produce of transactional or
idempotent records (a broker with an authorizer checks those for the whole request).  Each partition of a
Produce, Fetch or ListOffsets is answered on its own by Kafka: a partition's error is that partition's.  A
Fetch's response-level byte limit is the sum of its parts', so no partition is cut short by its neighbours.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from .messages import Call

INT32_MAX = 2**31 - 1
FETCH_MAX_BYTES_FIELD = "max_bytes"


@dataclass(frozen=True)
class Shape:
    """Where one API keeps its topics and partitions, in the request and in the response."""

    topics: str  # the request's list of topics
    name: str  # a request topic's name
    partitions: str  # a request topic's list of partitions
    index: str  # a request partition's number
    answers: str  # the response's list of topics
    answer_name: str
    answer_partitions: str
    answer_index: str
    most: int  # operations in one request


SHAPES = {
    "Produce": Shape(
        "topic_data", "name", "partition_data", "index", "responses", "name", "partition_responses", "index", 64
    ),
    # 31 x a part's 64 MB stays under the int32 response limit
    "Fetch": Shape(
        "topics", "topic", "partitions", "partition", "responses", "topic", "partitions", "partition_index", 31
    ),
    "ListOffsets": Shape(
        "topics", "name", "partitions", "partition_index", "topics", "name", "partitions", "partition_index", 128
    ),
}


def partitions(call: Call) -> frozenset[tuple[str, int]]:
    shape = SHAPES[call.api]
    return frozenset(
        (getattr(t, shape.name), getattr(p, shape.index))
        for t in call.fields[shape.topics]
        for p in getattr(t, shape.partitions)
    )


def combinable(call: Call) -> bool:
    """Whether the call may share a request (a Produce only of plain records: no producer id, no transaction)."""
    if call.api not in SHAPES:
        return False
    if call.api != "Produce":
        return True
    shape = SHAPES["Produce"]
    return all(plain(p.records) for t in call.fields[shape.topics] for p in getattr(t, shape.partitions))


def plain(records) -> bool:
    """One v2 record batch with neither a producer id nor the transactional or control flag."""
    data = bytes(records or b"")
    if len(data) < 61 or data[16] != 2 or struct.unpack_from(">i", data, 8)[0] + 12 != len(data):
        return False
    attributes = struct.unpack_from(">h", data, 21)[0]
    producer_id = struct.unpack_from(">q", data, 43)[0]
    return not attributes & 0x30 and producer_id == -1


def key(call: Call) -> tuple:
    """Calls with the same key may share a request: the same API, version and request-level fields."""
    shape = SHAPES[call.api]
    skip = {shape.topics, FETCH_MAX_BYTES_FIELD if call.api == "Fetch" else ""}
    return call.api, call.version, tuple(sorted((k, repr(v)) for k, v in call.fields.items() if k not in skip))


def groups(calls: Sequence[Call]) -> list[list[int]]:
    """Indexes of ``calls`` (all of one key) in groups of at most the API's ``most``, no partition twice in one."""
    out: list[list[int]] = []
    taken: list[set] = []
    for i, call in enumerate(calls):
        mine = partitions(call)
        at = next(
            (g for g, group in enumerate(out) if len(group) < SHAPES[call.api].most and not mine & taken[g]), None
        )
        if at is None:
            out.append([])
            taken.append(set())
            at = len(out) - 1
        out[at].append(i)
        taken[at] |= mine
    return out


def merged(calls: Sequence[Call]) -> Call:
    """One call naming every partition of ``calls``; its parse returns the raw response (see ``View``)."""
    first = calls[0]
    shape = SHAPES[first.api]
    by_topic: dict[str, list] = {}
    kinds: dict[str, type] = {}
    for call in calls:
        for t in call.fields[shape.topics]:
            by_topic.setdefault(getattr(t, shape.name), []).extend(getattr(t, shape.partitions))
            kinds[getattr(t, shape.name)] = type(t)
    fields = dict(first.fields)
    fields[shape.topics] = [kinds[n](**{shape.name: n, shape.partitions: parts}) for n, parts in by_topic.items()]
    if first.api == "Fetch":
        fields[FETCH_MAX_BYTES_FIELD] = min(INT32_MAX, sum(c.fields[FETCH_MAX_BYTES_FIELD] for c in calls))
    return Call(first.api, fields, lambda response: response, first.at)


class View:
    """A response seen through one attribute replaced: the part of a merged response that one call asked for."""

    def __init__(self, inner, attribute: str, value):
        self._inner, self._attribute, self._value = inner, attribute, value

    def __getattr__(self, name: str):
        return self._value if name == self._attribute else getattr(self._inner, name)


def parts(calls: Sequence[Call], response) -> list[View]:
    """The response to a merged request as each of ``calls`` alone would have had it: only its own partitions."""
    shape = SHAPES[calls[0].api]
    answers: dict[tuple[str, int], tuple] = {}  # partition -> (its topic's answer, its own)
    for t in getattr(response, shape.answers):
        name = getattr(t, shape.answer_name)
        for p in getattr(t, shape.answer_partitions):
            answers[(name, getattr(p, shape.answer_index))] = (t, p)
    return [
        View(response, shape.answers, topics(shape, [answers[k] for k in sorted(partitions(c)) if k in answers]))
        for c in calls
    ]


def topics(shape: Shape, found: list[tuple]) -> list[View]:
    """The topics' answers holding only the ``found`` (topic answer, partition answer) pairs."""
    kept: dict[int, tuple] = {}
    for t, p in found:
        kept.setdefault(id(t), (t, []))[1].append(p)
    return [View(t, shape.answer_partitions, ps) for t, ps in kept.values()]
