"""Many histories on one broker at once, each operation still judged over its own honest interval.

``KafkaImplementation.run`` hands its histories here.  Histories never share a topic.  The leading
CreateTopic operations of a batch of histories (``chunk``, default 128) go out as one CreateTopics
request on an admin connection, whose ListOffsets polls then find the partitions ready; each
history starts as soon as its own partitions answer.  Its remaining operations run in order, each
sent only after the previous one's response (the model is sequential per history), while
operations of different histories are in flight together on a few connections: Kafka answers each
connection in order, and several connections let its network and io threads work in parallel.  At
most ``depth`` operations wait on a connection, so queueing keeps intervals short.  The next
batch's CreateTopics goes out as soon as the controller has committed the previous one, while at
most LIVE_BATCHES batches of topics exist; finished histories' topics are deleted a batch at a
time with one DeleteTopics, so long runs do not pile up partitions.

Every operation is rebased onto the broker's clock just before it is sent, and its interval is
[wall clock before its request is handed to the socket, wall clock after the read that completed
its response]: the broker handled it inside, however many other requests shared the wire.  So
``JudgedTrace.judged_as`` means what it means for one history at a time.
"""
from __future__ import annotations

import heapq
import itertools
import select
import socket
import struct
import time
from collections import deque
from typing import Callable, Optional, Sequence

from reference.types import CreateTopic, CreateTopicResult, Fetch, History, ListOffsets, Produce, clock_states

from . import messages, wire
from .adapter import (JudgedTrace, Observed, fetch_result, judged, kafka_configs, list_result, local, produce_observed,
                      produce_result, rebase, topic_names)

CLIENT_ID = "ktc-pipeline"
LIVE_BATCHES = 3  # batches of histories whose topics exist at once (created, running or awaiting deletion)
POLL_S = 0.01  # between readiness polls after CreateTopics
READY_WAIT_S = 10.0


# ---- transport ---------------------------------------------------------------------------------

class Connection:
    """One non-blocking socket; requests are pipelined and answered in the order sent."""

    def __init__(self, address: tuple[str, int], timeout_s: float):
        try:
            self.sock = socket.create_connection(address, timeout=timeout_s)
        except OSError as error:
            raise wire.WireError(f"cannot connect to {address[0]}:{address[1]}: {error}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.address = address
        self.outbox, self.inbox = bytearray(), bytearray()
        self.waiting: deque = deque()  # (correlation id, call, done) in the order sent
        self.correlation = itertools.count(1)
        self.busy = 0  # operations holding this connection

    def send(self, call: messages.Call, done: Callable) -> None:
        correlation = next(self.correlation)
        self.outbox += call.request(correlation, CLIENT_ID)
        self.waiting.append((correlation, call, done))
        self.flush()

    def flush(self) -> None:
        try:
            written = self.sock.send(self.outbox)
        except BlockingIOError:
            return
        del self.outbox[:written]

    def receive(self) -> list[tuple[Callable, object, int]]:
        """(done, parsed answer, received_ms) for every response the bytes now in the socket complete."""
        try:
            data = self.sock.recv(1 << 20)
        except BlockingIOError:
            return []
        received = wire.now_ms()  # after the read: no answer it completes was sent later than this
        if not data:
            raise wire.WireError(f"{self.address[0]}:{self.address[1]} closed the connection")
        self.inbox += data
        return [(done, answer, received) for done, answer in self.frames()]

    def frames(self):
        while len(self.inbox) >= 4:
            size = struct.unpack_from(">i", self.inbox)[0]
            if len(self.inbox) < 4 + size:
                return
            data = bytes(self.inbox[4:4 + size])
            del self.inbox[:4 + size]
            correlation, call, done = self.waiting.popleft()
            response = call.response(data)
            if response.header.correlation_id != correlation:
                raise wire.WireError(f"correlation id {response.header.correlation_id} != {correlation}")
            yield done, call.parse(response)

    def close(self) -> None:
        self.sock.close()


class Exchange:
    """One operation's requests in order on one connection: a generator of Call / Pause (messages.py)."""

    def __init__(self, pipeline: "Pipeline", conn: Connection, steps, done: Callable):
        self.pipeline, self.conn, self.steps, self.done = pipeline, conn, steps, done

    def advance(self, answer=None, received: Optional[int] = None) -> None:
        try:
            step = self.steps.send(answer)
        except StopIteration as finished:
            self.conn.busy -= 1
            self.done(finished.value, received)
            return
        if isinstance(step, messages.Pause):
            self.pipeline.later(step.seconds, lambda: self.advance(None, received))
        else:
            self.conn.send(step, self.advance)


class Pipeline:
    """Connections to one broker (one for topic admin, a few for operations) and their event loop."""

    def __init__(self, client: wire.Client, limit_defaults: Optional[dict[str, int]], connections: int = 4,
                 depth: int = 2, timeout_s: float = 30.0):
        for api in ("CreateTopics", "DeleteTopics", "Produce", "Fetch", "ListOffsets"):
            client.version(api)  # UnsupportedVersion now, not halfway through a run
        self.limit_defaults = limit_defaults  # for echoed_now
        self.depth, self.timeout_s = depth, timeout_s
        self.timers: list = []  # heap of (due, sequence, callback)
        self._sequence = itertools.count()
        self.admin = Connection(client.address, timeout_s)  # CreateTopics waits on the controller: not in line with operations
        self.connections = [Connection(client.address, timeout_s) for _ in range(max(1, connections))]

    @property
    def every_connection(self) -> list[Connection]:
        return [self.admin, *self.connections]

    def free(self) -> Optional[Connection]:
        """The least busy operation connection, if it has room for another operation."""
        conn = min(self.connections, key=lambda c: c.busy)
        return conn if conn.busy < self.depth else None

    def start(self, steps, conn: Connection, done: Callable) -> None:
        """Run an operation on ``conn``; ``done(result, received_ms)`` when its last answer is in."""
        conn.busy += 1
        Exchange(self, conn, steps, done).advance()

    def later(self, seconds: float, callback: Callable) -> None:
        heapq.heappush(self.timers, (time.monotonic() + seconds, next(self._sequence), callback))

    def wait(self, until: Callable[[], bool]) -> None:
        """Serve sockets and timers until ``until()`` holds."""
        quiet_since = time.monotonic()
        while not until():
            if self.poll():
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > self.timeout_s:
                raise wire.WireError(f"no answer from {self.admin.address} within {self.timeout_s} s")

    def poll(self) -> bool:
        """One select() round; whether anything happened."""
        by_socket = {c.sock: c for c in self.every_connection}
        readers = [c.sock for c in self.every_connection if c.waiting]
        writers = [c.sock for c in self.every_connection if c.outbox]
        if not readers and not self.timers:
            raise wire.WireError("pipeline stalled: nothing in flight, nothing scheduled")
        timeout = min(1.0, max(0.0, self.timers[0][0] - time.monotonic())) if self.timers else 1.0
        readable, writable, _ = select.select(readers, writers, [], timeout)
        for sock in writable:
            by_socket[sock].flush()
        for sock in readable:
            for done, answer, received in by_socket[sock].receive():
                done(answer, received)
        return bool(readable or writable) | self.fire_timers()

    def fire_timers(self) -> bool:
        fired = False
        while self.timers and self.timers[0][0] <= time.monotonic():
            heapq.heappop(self.timers)[2]()
            fired = True
        return fired

    def idle(self) -> bool:
        return not any(c.waiting for c in self.every_connection)

    def run(self, histories: Sequence[History], batch: int) -> list[JudgedTrace]:
        traces = Session(self, histories, max(1, batch)).run()
        self.wait(self.idle)  # the last DeleteTopics
        return traces

    def close(self) -> None:
        for conn in self.every_connection:
            conn.close()


# ---- histories ---------------------------------------------------------------------------------

class Session:
    """The histories of one ``run``: created a batch at a time, each run as soon as its topics answer,
    their topics deleted a batch at a time.  At most about ``LIVE_BATCHES`` batches of topics exist."""

    def __init__(self, pipeline: Pipeline, histories: Sequence[History], batch: int):
        self.pipeline, self.batch = pipeline, batch
        self.runs = [HistoryRun(h) for h in histories]
        self.to_create: deque = deque(self.runs)
        self.ready: deque = deque()
        self.unfinished, self.live = len(self.runs), 0
        self.committing = False  # a CreateTopics request is waiting for the controller
        self.doomed: list[str] = []  # topics of finished histories, deleted a batch at a time

    def run(self) -> list[JudgedTrace]:
        self.create_next()
        self.pipeline.wait(lambda: self.unfinished == 0)
        self.delete()
        return [run.trace() for run in self.runs]

    def create_next(self) -> None:
        """The next batch's CreateTopics once the controller has committed the previous one (the
        broker applies them in turn while earlier batches run), if few enough histories are live."""
        if self.committing or not self.to_create or self.live >= LIVE_BATCHES * self.batch:
            return
        runs = [self.to_create.popleft() for _ in range(min(self.batch, len(self.to_create)))]
        self.live += len(runs)
        self.committing = True
        Creation(self, runs).start()

    def committed(self) -> None:
        self.committing = False
        self.create_next()

    def released(self, runs: list["HistoryRun"]) -> None:
        self.ready.extend(runs)
        self.pump()

    def pump(self) -> None:
        """Start the next operation of waiting histories while a connection has room."""
        while self.ready:
            conn = self.pipeline.free()
            if conn is None:
                return
            run = self.ready.popleft()
            if not run.step(self.pipeline, conn, self.answered):
                self.finished(run)

    def answered(self, run: "HistoryRun") -> None:
        if run.finished:
            self.finished(run)
        else:
            self.ready.append(run)
        self.pump()

    def finished(self, run: "HistoryRun") -> None:
        self.unfinished -= 1
        self.live -= 1
        self.doomed += [run.names[topic] for topic in run.configs]
        if len(self.doomed) >= self.batch:
            self.delete()
        self.create_next()

    def delete(self) -> None:
        if self.doomed:
            names, self.doomed = self.doomed, []
            self.pipeline.admin.send(messages.delete_topics(names), lambda results, received: None)


class Creation:
    """A batch's leading CreateTopic operations: one CreateTopics request, then ListOffsets polls on
    the admin connection; each history is released as soon as all its partitions answer, its
    CreateTopic operations observed over [CreateTopics sent, the poll that found them ready]."""

    def __init__(self, session: Session, runs: list["HistoryRun"]):
        self.session, self.admin, self.waiting = session, session.pipeline.admin, runs
        self.topics = [new_topic(run.names[op.topic], op.config) for run in runs for op in run.prefix]
        self.pending: set = set()
        self.results: dict = {}
        self.sent = wire.now_ms()
        self.deadline = time.monotonic() + READY_WAIT_S

    def start(self) -> None:
        if self.topics:
            self.admin.send(messages.create_topics(self.topics), self.created)
        else:
            self.created({}, self.sent)

    def created(self, results: dict, received: int) -> None:
        self.results = results
        self.pending = {(t.name, p) for t in self.topics if results[t.name][0] == 0 for p in range(t.partitions)}
        self.settle(received)
        self.session.committed()

    def poll(self) -> None:
        targets = [(name, partition, messages.LATEST_TIMESTAMP) for name, partition in sorted(self.pending)]
        self.admin.send(messages.list_offsets(targets), self.polled)

    def polled(self, answers: dict, received: int) -> None:
        self.pending = {key for key in self.pending if answers[key].error_code != 0}
        self.settle(received)

    def settle(self, received: int) -> None:
        """Release the histories whose partitions all answer; poll again for the rest."""
        released = [run for run in self.waiting if not run.needs(self.pending)]
        self.waiting = [run for run in self.waiting if run.needs(self.pending)]
        for run in released:
            run.created(self.results, self.sent, received)
        if self.pending and time.monotonic() > self.deadline:
            name, partition = min(self.pending)
            raise wire.WireError(f"topic {name!r} partition {partition} not ready {READY_WAIT_S} s after CreateTopics")
        if self.pending:
            self.session.pipeline.later(POLL_S, self.poll)
        self.session.released(released)


class HistoryRun:
    """One history's operations in order, each sent after the previous one's answer."""

    def __init__(self, history: History):
        self.history = history
        self.names = topic_names(history)
        self.clocks = clock_states(history)
        self.configs: dict = {}  # topics created on the broker -> their config
        self.executed: list = []
        self.observed: list[Observed] = []
        self.prefix = leading_creates(history)

    @property
    def finished(self) -> bool:
        return len(self.observed) == len(self.history.ops)

    def needs(self, pending: set) -> bool:
        """Whether one of this history's leading topics still has a partition in ``pending``."""
        return any((self.names[op.topic], p) in pending for op in self.prefix for p in range(op.config.partitions))

    def created(self, results: dict, sent: int, received: int) -> None:
        for op in self.prefix:
            code = results[self.names[op.topic]][0]
            self.record(op, Observed(CreateTopicResult(code), sent, received))

    def record(self, op, seen: Observed) -> None:
        self.executed.append(op)
        self.observed.append(seen)
        if isinstance(op, CreateTopic) and seen.result.error_code == 0:
            self.configs[op.topic] = op.config

    def step(self, pipeline: Pipeline, conn: Connection, answered: Callable) -> bool:
        """Answer local operations; send the next request on ``conn``.  False when nothing is left."""
        while not self.finished:
            op, state = self.history.ops[len(self.observed)], self.clocks[len(self.observed)]
            op = rebase(op, state.leader_now(op.topic, op.partition) if hasattr(op, "partition") else None)
            seen = local(op)
            if seen is None:
                self.send(op, pipeline, conn, answered)
                return True
            self.record(op, seen)
        return False

    def send(self, op, pipeline: Pipeline, conn: Connection, answered: Callable) -> None:
        config = self.configs.get(op.topic)
        steps = operation(op, self.names[op.topic])
        sent = wire.now_ms()

        def done(outcome, received):
            result, produced = outcome
            seen = Observed(result, sent, received) if produced is None else \
                produce_observed(produced, config, sent, received, pipeline.limit_defaults)
            self.record(op, seen)
            answered(self)
        pipeline.start(steps, conn, done)

    def trace(self) -> JudgedTrace:
        return judged(self.history, self.executed, self.observed, self.names)


def leading_creates(history: History) -> list[CreateTopic]:
    """The CreateTopic operations a history starts with (each topic once): safe to create together."""
    out: list[CreateTopic] = []
    for op in history.ops:
        if not isinstance(op, CreateTopic) or any(op.topic == o.topic for o in out):
            break
        out.append(op)
    return out


def new_topic(name: str, config) -> messages.NewTopic:
    return messages.NewTopic(name, kafka_configs(config), config.partitions)


def operation(op, topic: str):
    """The requests of one operation (a generator); returns (result, the ProduceOutcome or None)."""
    if isinstance(op, Produce):
        out = yield messages.produce(topic, wire.encode_batch(op.batch), partition=op.partition)
        return produce_result(out), out
    if isinstance(op, Fetch):
        return fetch_result((yield from messages.fetch_all(topic, op.partition))), None
    if isinstance(op, ListOffsets):
        answers = yield messages.list_offsets([(topic, op.partition, op.target)])
        return list_result(answers[(topic, op.partition)]), None
    results = yield from messages.create_and_wait([new_topic(topic, op.config)])
    return CreateTopicResult(results[topic][0]), None
