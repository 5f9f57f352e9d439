"""The one executor: many histories on a broker at once, each operation judged over its own interval.

The adapter's executor (running.py) hands its histories here.  Histories never share a topic.  The leading
CreateTopic operations of a batch of histories (``chunk``) go out as one CreateTopics request; the
partitions' leaders are found through Metadata and each history starts as soon as its partitions
answer ListOffsets on their leader.  Its remaining operations run in order, each sent only after the
previous one's response (the model is sequential per history), while operations of different
histories are in flight together on a few connections per broker (``connections`` x ``depth``).
One connection of depth one and batches of one history is the sequential baseline of bench_broker.py.

Every operation is rebased onto the broker's clock just before it is sent, and its interval is
[wall clock before its request is handed to the socket, wall clock after the read that completed
its response].  On a broker whose clock ktc sets (``clock.exact``, processes/clock.py) both ends are
the clock's setting; with ``drive`` the clock follows the history (its Advance and StepClock ops),
which needs the history to run alone.

Network faults (client/connection.py) never end a run: a broken connection is reopened with bounded
backoff, a request the broker cannot have seen or that is safe to repeat is sent again, and an
operation whose request may have reached the broker (a produce) cuts its history as ``unknown``.
An answer that cannot be read cuts its history as ``error``.  Other histories carry on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from ktc.kafka.client import admin, messages
from ktc.kafka.client.connection import Broken
from ktc.kafka.client.multiplex import Lost, Multiplexer, Slot
from ktc.kafka.processes.clock import HostClock
from ktc.kafka.topics import TopicNamer, kafka_configs
from ktc.reference.types import (
    CreateTopic,
    CreateTopicResult,
    DescribeLog,
    History,
    Produce,
    RetentionPass,
    clock_states,
)

from . import logstart
from .creation import Creation
from .observe import (
    Cut,
    JudgedTrace,
    Observed,
    judged,
    local,
    produce_observed,
    rebase,
    with_rolled,
)
from .operations import leading_creates, operation, skipped
from .probe import Probed
from .retention import held_configs

LIVE_BATCHES = 3  # batches of histories whose topics exist at once (created, running or awaiting deletion)
PARKED = "parked"  # HistoryRun.step: its next operation is due at a later clock


class Pipeline(Multiplexer):
    """The multiplexer plus what a run of histories needs: names, the broker's limits, live topics."""

    def __init__(
        self,
        bootstrap: tuple[str, int],
        limit_defaults: dict[str, int] | None,
        namer: TopicNamer | None = None,
        ready_s: float = 60.0,
        clock=None,
        log_dir=None,
        **options,
    ):
        super().__init__(bootstrap, **options)
        self.clock, self.drive = clock or HostClock(), False
        self.log_dir = log_dir  # judge/logdir.py: a broker ktc started on a clock it sets
        self.retention = None  # judge/retention.py: RetentionPass on such a broker (set by its implementation)
        self.limit_defaults, self.ready_s = limit_defaults, ready_s
        self.namer = namer or TopicNamer()
        self.live_topics: set[str] = set()  # created and not yet deleted (the adapter cleans up)
        self.ignored_configs: set[str] = set()  # config keys the broker accepted but did not apply
        self.list_offsets_version = messages.VERSIONS["ListOffsets"]  # for ops that name none (set from ApiVersions)
        self.probed = Probed()  # what the broker was seen to answer (judge/probe.py); by default, everything

    def run(self, histories: Sequence[History], batch: int) -> list[JudgedTrace]:
        traces = Session(self, histories, max(1, batch)).run()
        self.wait(self.idle)  # the last DeleteTopics
        return traces

    def creation_configs(self, config) -> dict:
        """The configs a history's topic is created with: its own, and on a broker whose log directory ktc
        reads, an index entry for every append and retention held until a RetentionPass (judge/retention.py)."""
        if self.log_dir is None:
            return kafka_configs(config)
        return {**kafka_configs(config), "index.interval.bytes": 0, **held_configs(config)}

    def held(self, config) -> set[str]:
        """Keys created with another value than the history's, so not checked against it."""
        return set(held_configs(config)) if self.log_dir is not None else set()

    def answer_locally(self, op, names: dict[str, str]) -> Observed | None:
        """An operation answered without a request: clock moves; DescribeLog from the log directory."""
        if isinstance(op, RetentionPass) and self.retention is not None:
            return None
        if isinstance(op, DescribeLog) and self.log_dir is not None:
            now = self.clock.now()
            return Observed(self.log_dir.describe(names[op.topic], op.partition), now, now)
        return local(op)

    def segment_count(self, op, names: dict[str, str]) -> int | None:
        """How many segments a Produce's partition has, when the log directory can be read."""
        if not isinstance(op, Produce) or self.log_dir is None:
            return None
        return self.log_dir.segment_count(names[op.topic], op.partition)


# ---- histories ---------------------------------------------------------------------------------


class Session:
    """The histories of one ``run``: created a batch at a time, each run as soon as its topics answer,
    their topics deleted a batch at a time.  At most about ``LIVE_BATCHES`` batches of topics exist."""

    def __init__(self, pipeline: Pipeline, histories: Sequence[History], batch: int):
        self.pipeline, self.batch = pipeline, batch
        self.runs = [self.new_run(h) for h in histories]
        self.to_create: deque = deque(self.runs)
        self.ready: dict[tuple[str, int], deque] = {}  # broker address -> histories waiting for a slot to it
        self.unfinished, self.live = len(self.runs), 0
        self.committing = False  # a CreateTopics request is waiting for the controller
        self.doomed: list[str] = []  # topics of finished histories, deleted a batch at a time
        self.deleting = 0  # DeleteTopics requests sent and not yet answered
        self.inflight = 0  # histories with an operation sent and not yet answered
        self.parked: list[HistoryRun] = []  # waiting for the broker's clock to reach their next operation (lockstep.py)

    def new_run(self, history: History) -> HistoryRun:
        return HistoryRun(history, self.pipeline.namer.names(history), self.pipeline.bootstrap)

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

    def released(self, runs: list[HistoryRun]) -> None:
        for run in runs:
            if run.finished:
                self.finished(run)
            else:
                self.wait_for_slot(run)
        self.pump()

    def wait_for_slot(self, run: HistoryRun) -> None:
        self.ready.setdefault(run.address(), deque()).append(run)

    def pump(self) -> None:
        """Start the next operation of waiting histories while their broker's slots have room."""
        for address, queue in list(self.ready.items()):
            while queue:
                slot = self.pipeline.free(address)
                if slot is None:
                    break
                run = queue.popleft()
                self.inflight += 1  # before the send: an answer may come back within it
                status = run.step(self.pipeline, slot, self.answered)
                if status is True:
                    continue
                self.inflight -= 1
                if status is PARKED:
                    self.parked.append(run)
                else:
                    self.finished(run)

    def answered(self, run: HistoryRun) -> None:
        self.inflight -= 1
        self.released([run])

    def finished(self, run: HistoryRun) -> None:
        self.unfinished -= 1
        self.live -= 1
        self.doomed += run.created_topics()
        if len(self.doomed) >= self.batch:
            self.delete()
        self.create_next()

    def delete(self) -> None:
        if self.doomed:
            names, self.doomed = self.doomed, []
            self.deleting += 1
            self.pipeline.call(admin.delete_topics(names), lambda answer, received: self.deleted(names, answer))

    def deleted(self, names: list[str], answer) -> None:
        self.deleting -= 1
        if isinstance(answer, dict):
            self.pipeline.live_topics -= {n for n in names if answer.get(n) in (0, 3)}  # 3: already gone
        self.pump()


class HistoryRun:
    """One history's operations in order, each sent after the previous one's answer."""

    def __init__(self, history: History, names: dict[str, str], bootstrap: tuple[str, int]):
        self.history, self.names, self.bootstrap = history, names, bootstrap
        self.clocks = clock_states(history)
        self.configs: dict = {}  # topics created on the broker -> their config
        self.executed: list = []
        self.observed: list[Observed] = []
        self.prefix = leading_creates(history)
        self.leaders: dict[tuple[str, int], tuple[str, int]] = {}
        self.cut: Cut | None = None
        self.probe = logstart.partitions_to_probe(history, names)  # read after the last operation; [] once read
        self.clock_shift: int | None = None  # broker clock - history clock, when the pipeline drives the clock

    @property
    def finished(self) -> bool:
        return self.cut is not None or (not self.probe and len(self.observed) == len(self.history.ops))

    def needs(self, pending) -> bool:
        """Whether one of this history's leading topics still has a partition in ``pending``."""
        return any((self.names[op.topic], p) in pending for op in self.prefix for p in range(op.config.partitions))

    def asked_configs(self, held=lambda config: ()) -> dict[str, dict]:
        """The configs asked for this history's leading topics that the broker created (but ``held`` ones)."""
        asked = {
            self.names[op.topic]: {k: v for k, v in kafka_configs(op.config).items() if k not in held(op.config)}
            for op in self.prefix
            if op.topic in self.configs
        }
        return {name: configs for name, configs in asked.items() if configs}

    def created_topics(self) -> list[str]:
        return [self.names[op.topic] for op in self.history.ops if isinstance(op, CreateTopic)]

    def address(self) -> tuple[str, int]:
        """The broker that leads the partition the next operation is about (the bootstrap if unknown)."""
        if len(self.observed) == len(self.history.ops):
            return self.leaders.get(self.probe[0], self.bootstrap) if self.probe else self.bootstrap
        op = self.history.ops[len(self.observed)]
        key = (self.names.get(getattr(op, "topic", None)), getattr(op, "partition", 0))
        return self.leaders.get(key, self.bootstrap)

    def created(self, results: dict, sent: int, received: int, leaders: dict, brokers: dict) -> None:
        self.leaders.update({key: brokers.get(node, self.bootstrap) for key, node in leaders.items()})
        for op in self.prefix:
            code = results[self.names[op.topic]][0]
            self.record(op, Observed(CreateTopicResult(code), sent, received))

    def record(self, op, seen: Observed) -> None:
        self.executed.append(op)
        self.observed.append(seen)
        if isinstance(op, CreateTopic) and seen.result.error_code == 0:
            self.configs[op.topic] = op.config

    def step(self, pipeline: Pipeline, slot: Slot, answered: Callable) -> bool | str:
        """Answer local operations; send the next request on ``slot``.  False when nothing is left,
        PARKED when the next operation is due at a later clock (lockstep.py)."""
        while not self.finished:
            if len(self.observed) == len(self.history.ops):
                self.send_probe(pipeline, slot, answered)
                return True
            if not self.due(pipeline.clock):
                return PARKED
            op, state = self.history.ops[len(self.observed)], self.clocks[len(self.observed)]
            history_now = state.leader_now(op.topic, op.partition) if hasattr(op, "partition") else None
            if pipeline.drive:
                self.follow(pipeline.clock, state)
            op = rebase(op, history_now, pipeline.clock.now())
            seen = pipeline.answer_locally(op, self.names) or skipped(op, pipeline.probed)
            if seen is None:
                self.send(op, pipeline, slot, answered)
                return True
            self.record(op, seen)
        return False

    def due(self, clock) -> bool:
        """Whether the next operation may run at the clock's now (always, but in lockstep.py)."""
        return True

    def follow(self, clock, state) -> None:
        """Set the broker's clock to where the history's broker 0 is, kept at the same distance from
        the history's clock as when the history started (its first operation)."""
        history_now = state.real_ms + state.offsets[0]
        if self.clock_shift is None:
            self.clock_shift = clock.now() - (self.history.start_ms + self.history.clock_offsets[0])
        if clock.now() != history_now + self.clock_shift:
            clock.set(history_now + self.clock_shift)

    def send(self, op, pipeline: Pipeline, slot: Slot, answered: Callable) -> None:
        config = self.configs.get(op.topic)
        steps = (
            pipeline.retention.steps(self.names[op.topic], op.partition, config)
            if isinstance(op, RetentionPass)
            else operation(
                op,
                self.names[op.topic],
                exists_ok=op.topic not in self.configs,
                wait_s=pipeline.ready_s,
                configs=pipeline.creation_configs,
                list_offsets_version=pipeline.list_offsets_version,
                fetch_wait_ms=pipeline.probed.fetch_wait_ms,
            )
        )
        sent = pipeline.clock.now()
        segments = pipeline.segment_count(op, self.names)  # None: the log directory is not ours to read

        def done(outcome, received):
            received = pipeline.clock.stamp(received)
            if isinstance(outcome, (Lost, Broken)):
                self.cut = Cut(
                    "unknown" if isinstance(outcome, Lost) else "error",
                    len(self.observed),
                    f"op #{len(self.observed)} ({type(op).__name__}): {outcome.reason}",
                )
            else:
                result, produced = outcome
                seen = (
                    Observed(result, sent, received)
                    if produced is None or isinstance(produced, Cut)
                    else produce_observed(produced, config, sent, received, pipeline.limit_defaults)
                )
                self.record(op, with_rolled(seen, segments, pipeline.segment_count(op, self.names)))
                if isinstance(produced, Cut):  # the operation left the broker where the model cannot follow
                    self.cut = replace(produced, op_index=len(self.observed) - 1)
            answered(self)

        pipeline.start(steps, slot, done)

    def send_probe(self, pipeline: Pipeline, slot: Slot, answered: Callable) -> None:
        """ListOffsets EARLIEST of the partitions produced to (judge/logstart.py)."""

        def done(answers, received):
            self.probe = []
            self.cut = logstart.cut_after(answers, len(self.observed))
            answered(self)

        pipeline.start(logstart.probe(self.probe), slot, done)

    def trace(self) -> JudgedTrace:
        return judged(self.history, self.executed, self.observed, self.names, self.cut)
