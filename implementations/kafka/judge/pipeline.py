"""The one executor: many histories on a broker at once, each operation judged over its own interval.

The adapter's executor (running.py) hands its histories here.  Histories never share a topic.  The leading
CreateTopic operations of a batch of histories (``chunk``) go out as one CreateTopics request; the
partitions' leaders are found through Metadata and each history starts as soon as its partitions
answer ListOffsets on their leader.  Its remaining operations run in order, each at its partition's leader
(a leader error refreshes Metadata and sends it again, client/routing.py), each sent only after the
previous one's response (the model is sequential per history), while operations of different
histories are in flight together on a few connections per broker (``connections`` x ``depth``).
One connection of depth one and batches of one history is the sequential baseline of bench_broker.py.

Every operation is rebased onto the broker's clock just before it is sent, and its interval is
[wall clock before its (first) request is handed to the socket, wall clock after the read that completed
its (last) response].  On a broker whose clock ktc sets (``clock.exact``, processes/clock.py) both ends are
the clock's setting; with ``drive`` the clock follows the history (its Advance and StepClock ops),
which needs the history to run alone.

Network faults (client/connection.py) never end a run: a broken connection is reopened with bounded
backoff, a request the broker cannot have seen or that is safe to repeat is sent again, and an
operation whose request may have reached the broker (a produce) cuts its history as ``unknown``.
An answer that cannot be read cuts its history as ``error``.  Other histories carry on.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence

from ktc.kafka.client import admin, messages
from ktc.kafka.client.multiplex import Multiplexer
from ktc.kafka.client.routing import Leaders
from ktc.kafka.processes.clock import HostClock
from ktc.kafka.topics import TopicNamer, kafka_configs
from ktc.reference.types import (
    Ack,
    DescribeLog,
    History,
    Produce,
    RetentionPass,
)

from . import logstart, sharing
from .creation import Creation
from .history_run import ELSEWHERE, PARKED, PROBING, HistoryRun
from .observe import (
    JudgedTrace,
    Observed,
    local,
)
from .probe import Probed
from .retention import held_configs

LIVE_BATCHES = 3  # batches of histories whose topics exist at once (created, running or awaiting deletion)
PROBES_AT_ONCE = 16  # finished histories whose log start offsets go out in one ListOffsets ahead of other work


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
        self.restart = None  # judge/restart.py: Crash on a broker ktc can restart (set by its implementation)
        self.limit_defaults, self.ready_s = limit_defaults, ready_s
        self.namer = namer or TopicNamer()
        self.live_topics: set[str] = set()  # created and not yet deleted (the adapter cleans up)
        self.ignored_configs: set[str] = set()  # config keys the broker accepted but did not apply
        self.list_offsets_version = messages.VERSIONS["ListOffsets"]  # for ops that name none (set from ApiVersions)
        self.probed = Probed()  # what the broker was seen to answer (judge/probe.py); by default, everything
        self.session: Session | None = None  # the run in progress (Session sets itself)
        self.leaders = Leaders()  # who leads each partition of its histories' topics (client/routing.py)

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

    def crash(self, partitions: list[tuple[str, int]]) -> Observed:
        """A Crash: the broker killed and started again (judge/restart.py), until ``partitions`` answer; every
        connection to the old process is dropped, so the next request opens a new one."""
        if self.restart is None:
            raise RuntimeError("a Crash reached a broker ktc cannot restart: its capabilities decline such histories")
        sent = self.clock.now()
        self.restart(partitions)
        for slot in self.slots:
            if slot.conn is not None:
                slot.conn.fail("the broker was restarted")
        return Observed(Ack(), sent, self.clock.now())

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
        self.to_create: deque = deque(sharing.grouped(self.runs))
        self.holders: Counter[str] = Counter()  # topic -> histories not yet finished that use it (sharing.py)
        self.ready: dict[tuple[str, int], deque] = {}  # broker address -> histories waiting for a slot to it
        self.unfinished, self.live = len(self.runs), 0
        self.committing = False  # a CreateTopics request is waiting for the controller
        self.doomed: list[str] = []  # topics of finished histories, deleted a batch at a time
        self.doomed_partitions = 0  # of the histories finished since the last DeleteTopics
        self.deleting = 0  # DeleteTopics requests sent and not yet answered
        self.inflight = 0  # histories with an operation sent and not yet answered
        self.parked: list[HistoryRun] = []  # waiting for the broker's clock to reach their next operation (lockstep.py)
        self.probing: dict[tuple[str, int], list[HistoryRun]] = {}  # broker address -> histories awaiting the probe
        pipeline.session = self  # the run in progress, for the words of a run that does not return (describe)

    def new_run(self, history: History) -> HistoryRun:
        return HistoryRun(history, self.pipeline.namer.names(history), self.pipeline.bootstrap, self.pipeline.leaders)

    def describe(self) -> str:
        """Where the run stands, in words: for a run that did not return (running.py ``stall``)."""
        queued, probing = sum(map(len, self.ready.values())), sum(map(len, self.probing.values()))
        return (
            f"{self.unfinished} of {len(self.runs)} histories unfinished: {self.inflight} in flight, {queued} "
            f"queued for a connection, {len(self.parked)} waiting for the clock, {probing} for their log start "
            f"probe, {len(self.to_create)} not created; {self.deleting} DeleteTopics unanswered; "
            f"{self.pipeline.scheduled()}"
        )

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
        sharing.share(runs, self.holders)
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
        """Start the next operation of waiting histories while their broker's slots have room; the log start
        probes of finished histories go out together, first once there are ``PROBES_AT_ONCE``.  A history whose
        next request turned out to be for another broker is queued there, and that queue served too."""
        while self.serve():
            pass
        for address in list(self.probing):
            self.probe(address)

    def serve(self) -> bool:
        """One round over the queues; whether a history moved to another broker's queue."""
        moved = False
        for address, queue in list(self.ready.items()):
            if len(self.probing.get(address, ())) >= PROBES_AT_ONCE:
                self.probe(address)
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
                elif status is PROBING:
                    self.probing.setdefault(address, []).append(run)
                elif status is ELSEWHERE:
                    self.wait_for_slot(run)
                    moved = True
                else:
                    self.finished(run)
        return moved

    def probe(self, address: tuple[str, int]) -> None:
        """One ListOffsets EARLIEST for the partitions of every history waiting for its probe on ``address``:
        each is read after that history's last answer, as one request per history would (logstart.py)."""
        slot = self.pipeline.free(address) if self.probing.get(address) else None
        if slot is None:
            return
        runs = self.probing.pop(address)
        self.inflight += 1

        def done(answers, received):
            self.inflight -= 1
            for run in runs:
                run.probed(answers, len(run.observed))
            self.released(runs)

        keys = [key for run in runs for key in run.probe]
        self.pipeline.start(logstart.probe(keys, self.pipeline.leaders), slot, done)

    def answered(self, run: HistoryRun) -> None:
        self.inflight -= 1
        self.released([run])

    def finished(self, run: HistoryRun) -> None:
        self.unfinished -= 1
        self.live -= 1
        for name, partitions in run.created_partitions().items():
            self.holders[name] -= 1
            self.doomed_partitions += partitions
            if self.holders[name] <= 0:  # its last history finished
                del self.holders[name]
                self.doomed.append(name)
        if self.doomed_partitions >= self.batch:
            self.delete()
        self.create_next()

    def delete(self) -> None:
        if self.doomed:
            names, self.doomed, self.doomed_partitions = self.doomed, [], 0
            self.deleting += 1
            self.pipeline.call(admin.delete_topics(names), lambda answer, received: self.deleted(names, answer))

    def deleted(self, names: list[str], answer) -> None:
        self.deleting -= 1
        if isinstance(answer, dict):
            self.pipeline.live_topics -= {n for n in names if answer.get(n) in (0, 3)}  # 3: already gone
        self.pump()
