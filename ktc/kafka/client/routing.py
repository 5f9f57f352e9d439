"""Requests about a partition go to the broker that leads it, as Kafka's own clients send them.

On a cluster only a partition's leader answers Produce, Fetch and ListOffsets for it: another broker answers
NOT_LEADER_OR_FOLLOWER (6), one that knows of no leader yet LEADER_NOT_AVAILABLE (5).  Neither request was applied,
and Kafka's producer and consumer refresh their metadata and send it again: such an answer is routing, never a
verdict.  So here:

- ``Leaders`` is what Metadata last said leads each partition (node id, and the brokers' advertised addresses);
- ``on_leader`` runs one operation's requests (a generator of Call / Pause, messages.py) at its partition's leader,
  asking Metadata first when no leader is known, and again after a leader error, then runs them again; at most
  ``ATTEMPTS`` times, with a doubling backoff, so a broker that keeps answering a leader error is reported with
  the answer it gave;
- ``list_offsets_on_leaders``: ListOffsets of many partitions, one request per leader, retried alike;
- ``create_and_wait`` creates topics and waits until each partition's leader answers for it.

A Call names the broker it must reach (``Call.to``); the blocking client (wire.py) and the pipelined multiplexer
(multiplex.py) send it there.

    leaders = Leaders()
    out = client.perform(on_leader(lambda: fetch_all("t", 0), ("t", 0), leaders, lambda out: out.error_code))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from .admin import TOPIC_ALREADY_EXISTS, ClusterView, NewTopic, create_topics, metadata
from .messages import LATEST_TIMESTAMP, LEADER_ERRORS, Call, Pause, list_offsets
from .records import WireError

ATTEMPTS = 6  # of one operation, while its answer is a leader error
BACKOFF_S, MAX_BACKOFF_S = 0.05, 1.0  # before each new attempt, doubled each time (Kafka: retry.backoff.ms 100)
READY_POLL_S = 0.01  # between readiness polls after CreateTopics

Key = tuple[str, int]  # (topic, partition)
Address = tuple[str, int]


def backoff(attempt: int) -> float:
    return min(MAX_BACKOFF_S, BACKOFF_S * 2**attempt)


class Leaders:
    """What Metadata last said leads each partition: its node id, and the brokers' advertised addresses."""

    def __init__(self) -> None:
        self.nodes: dict[Key, int] = {}
        self.brokers: dict[int, Address] = {}

    def learn(self, view: ClusterView) -> None:
        """Take a Metadata answer in: a partition without a leader (-1), or of a topic it reports an error for,
        is forgotten."""
        self.brokers.update(view.brokers)
        for name, (code, partitions) in view.topics.items():
            if code:
                self.nodes = {key: node for key, node in self.nodes.items() if key[0] != name}
            for partition, leader in partitions.items():
                if leader >= 0:
                    self.nodes[(name, partition)] = leader
                else:
                    self.nodes.pop((name, partition), None)

    def forget(self, key: Key) -> None:
        self.nodes.pop(key, None)

    def node(self, key: Key) -> int | None:
        return self.nodes.get(key)

    def address(self, key: Key) -> Address | None:
        """The leader's address; None when no leader (or no address for it) is known."""
        node = self.nodes.get(key)
        return None if node is None else self.brokers.get(node)

    def by_address(self, keys: Iterable[Key]) -> dict[Address | None, list[Key]]:
        out: dict[Address | None, list[Key]] = {}
        for key in keys:
            out.setdefault(self.address(key), []).append(key)
        return out


def addressed(call: Call, address: Address | None) -> Call:
    """The call sent to ``address`` (None, or a call that names its broker already: as it is)."""
    return call if address is None or call.to is not None else replace(call, to=address)


def routed(steps, address: Address | None):
    """The operation ``steps`` with each of its calls sent to ``address``; answers and errors passed through."""
    try:
        step = next(steps)
        while True:
            try:
                answer = yield (addressed(step, address) if isinstance(step, Call) else step)
            except Exception as error:  # an answer that could not be read: the operation decides
                step = steps.throw(error)
            else:
                step = steps.send(answer)
    except StopIteration as done:
        return done.value


def refresh(leaders: Leaders, topics: Iterable[str]):
    """Metadata for ``topics``, taken into ``leaders`` (a step of an operation)."""
    view = yield metadata(sorted(set(topics)))
    leaders.learn(view)


def on_leader(steps_for: Callable[[], object], key: Key, leaders: Leaders, error_of: Callable[[object], int]):
    """One operation about partition ``key`` (``steps_for()`` makes its steps afresh) at the partition's leader;
    run again after a Metadata refresh while ``error_of`` its result is a leader error, at most ``ATTEMPTS``
    times.  A partition no Metadata names a leader for (a topic never created, a partition it does not have) is
    asked of the operation's own broker, which answers for it."""
    if leaders.node(key) is None:
        yield from refresh(leaders, [key[0]])
    for attempt in range(ATTEMPTS):
        out = yield from routed(steps_for(), leaders.address(key))
        if error_of(out) not in LEADER_ERRORS or attempt == ATTEMPTS - 1:
            return out
        leaders.forget(key)
        yield Pause(backoff(attempt))
        yield from refresh(leaders, [key[0]])
    raise AssertionError("unreachable: the last attempt returns")


def list_offsets_on_leaders(
    targets: Sequence[tuple[str, int, int]], leaders: Leaders, isolation_level: int = 0, version: int | None = None
):
    """ListOffsets for (topic, partition, target) triples, one request per leader (Metadata first for partitions
    without a known leader); those answering a leader error are asked again after a Metadata refresh, at most
    ``ATTEMPTS`` times.  Returns the answers by (topic, partition), as messages.list_offsets parses them."""
    answers: dict = {}
    pending = list(targets)
    for attempt in range(ATTEMPTS):
        if attempt:
            yield Pause(backoff(attempt - 1))
        unled = [topic for topic, p, _ in pending if leaders.node((topic, p)) is None]
        if unled:
            yield from refresh(leaders, unled)
        for address, keys in leaders.by_address([(t, p) for t, p, _ in pending]).items():
            asked = [target for target in pending if target[:2] in keys]
            answers.update((yield addressed(list_offsets(asked, isolation_level, version), address)))
        pending = [t for t in pending if t[:2] in answers and answers[t[:2]].error_code in LEADER_ERRORS]
        for topic, partition, _ in pending:
            leaders.forget((topic, partition))
        if not pending:
            return answers
    return answers


def create_and_wait(
    topics: Sequence[NewTopic],
    wait_s: float = 10.0,
    timeout_ms: int = 30_000,
    exists_ok: bool = False,
    leaders: Leaders | None = None,
):
    """CreateTopics for all ``topics`` in one request; then, for those created, Metadata until each partition
    has a leader and ListOffsets on that leader until it answers (up to ``wait_s``): CreateTopics returns when the
    controller has committed a topic, which can be before its leader has applied it (a Produce then gets
    UNKNOWN_TOPIC_OR_PARTITION).  Returns {name: (error_code, error_message)}; ``leaders`` learns the leaders.
    ``exists_ok``: the name is ours alone, so TOPIC_ALREADY_EXISTS can only mean our own earlier attempt (a
    request resent after its connection broke) got through: it counts as created."""
    leaders = Leaders() if leaders is None else leaders
    results = yield create_topics(topics, timeout_ms)
    if exists_ok:
        results = {
            name: (0, None) if code == TOPIC_ALREADY_EXISTS else (code, message)
            for name, (code, message) in results.items()
        }
    pending = [(t.name, p) for t in topics if results[t.name][0] == 0 for p in range(t.partitions)]
    deadline = time.monotonic() + wait_s
    while pending and wait_s > 0:
        pending = yield from unready(pending, leaders)
        if pending and time.monotonic() > deadline:
            name, partition = pending[0]
            raise WireError(f"topic {name!r} partition {partition} not ready {wait_s} s after CreateTopics")
        if pending:
            yield Pause(READY_POLL_S)
    return results


def unready(keys: Sequence[Key], leaders: Leaders):
    """The partitions of ``keys`` whose leader does not answer ListOffsets yet (Metadata first for those
    without a known leader; a leader that answers a leader error is forgotten, and asked of Metadata again)."""
    unled = [name for name, partition in keys if leaders.node((name, partition)) is None]
    if unled:
        yield from refresh(leaders, unled)
    out: list[Key] = []
    for address, group in leaders.by_address(keys).items():
        if address is None:
            out += group
            continue
        answers = yield addressed(list_offsets([(name, p, LATEST_TIMESTAMP) for name, p in group]), address)
        for key in group:
            if answers[key].error_code in LEADER_ERRORS:
                leaders.forget(key)
            if answers[key].error_code:
                out.append(key)
    return out
