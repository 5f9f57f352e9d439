"""One history on the pipeline (pipeline.py): its operations in order, each sent after the previous one's answer,
each observed over its own interval, and its log start offsets read after the last (logstart.py).  The
``pipeline`` its methods take is pipeline.py's ``Pipeline`` (not imported: the pipeline imports this module)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ktc.kafka.client.connection import Broken
from ktc.kafka.client.multiplex import Lost, Slot
from ktc.kafka.client.routing import Leaders
from ktc.kafka.topics import kafka_configs
from ktc.reference.types import Crash, CreateTopic, CreateTopicResult, History, RetentionPass, clock_states

from . import logstart
from .observe import Cut, JudgedTrace, Observed, judged, produce_observed, rebase, with_rolled
from .operations import leading_creates, operation, skipped

PARKED = "parked"  # HistoryRun.step: its next operation is due at a later clock
PROBING = "probing"  # HistoryRun.step: every operation answered, its log start offsets still to read (logstart.py)
ELSEWHERE = "elsewhere"  # HistoryRun.step: its next request is for another broker than the slot's (``address``)


class HistoryRun:
    """One history's operations in order, each sent after the previous one's answer."""

    def __init__(
        self, history: History, names: dict[str, str], bootstrap: tuple[str, int], leaders: Leaders | None = None
    ):
        self.history, self.names, self.bootstrap = history, names, bootstrap
        self.leaders = Leaders() if leaders is None else leaders  # the pipeline's: who leads each partition
        self.base: dict[str, int] = {}  # topic -> its first partition on the broker, when it shares one (sharing.py)
        self.clocks = clock_states(history)
        self.configs: dict = {}  # topics created on the broker -> their config
        self.executed: list = []
        self.observed: list[Observed] = []
        self.prefix = leading_creates(history)
        self.cut: Cut | None = None
        self.probe = self.probed_partitions()  # read after the last operation; [] once read
        self.clock_shift: int | None = None  # broker clock - history clock, when the pipeline drives the clock

    @property
    def finished(self) -> bool:
        return self.cut is not None or (not self.probe and len(self.observed) == len(self.history.ops))

    def at(self, topic: str, partition: int) -> tuple[str, int]:
        """The broker's (topic, partition) for the history's: the same numbers, or a block of a shared topic."""
        return self.names[topic], self.base.get(topic, 0) + partition

    def place(self, topic: str, name: str, base: int) -> None:
        """Run the history's ``topic`` as partitions ``base``.. of the broker's topic ``name`` (sharing.py)."""
        self.names = {**self.names, topic: name}
        self.base[topic] = base
        self.probe = self.probed_partitions()

    def probed_partitions(self) -> list[tuple[str, int]]:
        bases = {self.names[topic]: base for topic, base in self.base.items()}
        return [(name, bases.get(name, 0) + p) for name, p in logstart.partitions_to_probe(self.history, self.names)]

    def on_wire(self, op):
        """The operation as sent: on its partition of a shared topic, when its topic is one."""
        return replace(op, partition=self.at(op.topic, op.partition)[1]) if self.base.get(op.topic) else op

    def needs(self, pending) -> bool:
        """Whether one of this history's leading topics still has a partition in ``pending``."""
        return any(self.at(op.topic, p) in pending for op in self.prefix for p in range(op.config.partitions))

    def asked_configs(self, held=lambda config: ()) -> dict[str, dict]:
        """The configs asked for this history's leading topics that the broker created (but ``held`` ones)."""
        asked = {
            self.names[op.topic]: {k: v for k, v in kafka_configs(op.config).items() if k not in held(op.config)}
            for op in self.prefix
            if op.topic in self.configs
        }
        return {name: configs for name, configs in asked.items() if configs}

    def crash(self, pipeline) -> Observed:
        """The broker restarted (Pipeline.crash); the time that passed meanwhile is the history's from here on:
        a clock the pipeline drives goes on from where the restart left it, never back."""
        seen = pipeline.crash(self.partitions())
        if self.clock_shift is not None:
            self.clock_shift += seen.received - seen.sent
        return seen

    def partitions(self) -> list[tuple[str, int]]:
        """Every partition of the topics this history created on the broker."""
        return [self.at(topic, p) for topic, config in self.configs.items() for p in range(config.partitions)]

    def created_partitions(self) -> dict[str, int]:
        """The broker topics this history creates, each with how many partitions of it are the history's."""
        out: dict[str, int] = {}
        for op in self.history.ops:
            if isinstance(op, CreateTopic):
                out[self.names[op.topic]] = max(out.get(self.names[op.topic], 0), op.config.partitions)
        return out

    def address(self) -> tuple[str, int]:
        """The broker that leads the partition the next operation is about (the bootstrap if unknown)."""
        if len(self.observed) == len(self.history.ops):
            return (self.leaders.address(self.probe[0]) if self.probe else None) or self.bootstrap
        op = self.history.ops[len(self.observed)]
        topic = getattr(op, "topic", None)
        key = self.at(topic, getattr(op, "partition", 0)) if topic in self.names else ("", 0)
        return self.leaders.address(key) or self.bootstrap

    def created(self, results: dict, sent: int, received: int) -> None:
        for op in self.prefix:
            code = results[self.names[op.topic]][0]
            self.record(op, Observed(CreateTopicResult(code), sent, received))

    def record(self, op, seen: Observed) -> None:
        self.executed.append(op)
        self.observed.append(seen)
        if isinstance(op, CreateTopic) and seen.result.error_code == 0:
            self.configs[op.topic] = op.config

    def step(self, pipeline, slot: Slot, answered: Callable) -> bool | str:
        """Answer local operations; send the next request on ``slot``.  False when nothing is left,
        PARKED when the next operation is due at a later clock (lockstep.py), PROBING when only the read
        of its log start offsets is left (the session sends it with others', Session.probe), ELSEWHERE when
        the next request is for another broker than the slot's (local operations came first: the session
        queues it for a slot to that broker)."""
        while not self.finished:
            if len(self.observed) == len(self.history.ops):
                return PROBING
            if not self.due(pipeline.clock):
                return PARKED
            op, state = self.history.ops[len(self.observed)], self.clocks[len(self.observed)]
            history_now = state.leader_now(op.topic, op.partition) if hasattr(op, "partition") else None
            if pipeline.drive:
                self.follow(pipeline.clock, state)
            op = rebase(op, history_now, pipeline.clock.now())
            seen = (
                self.crash(pipeline)
                if isinstance(op, Crash)
                else pipeline.answer_locally(op, self.names) or skipped(op, pipeline.probed)
            )
            if seen is None:
                if self.address() != slot.address:
                    return ELSEWHERE
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

    def send(self, op, pipeline, slot: Slot, answered: Callable) -> None:
        config, wire = self.configs.get(op.topic), self.on_wire(op)
        steps = (
            pipeline.retention.steps(self.names[op.topic], op.partition, config)
            if isinstance(op, RetentionPass)
            else operation(
                wire,
                self.names[op.topic],
                exists_ok=op.topic not in self.configs,
                wait_s=pipeline.ready_s,
                configs=pipeline.creation_configs,
                list_offsets_version=pipeline.list_offsets_version,
                fetch_wait_ms=pipeline.probed.fetch_wait_ms,
                leaders=self.leaders,
            )
        )
        sent = pipeline.clock.now()
        segments = pipeline.segment_count(wire, self.names)  # None: the log directory is not ours to read

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
                self.record(op, with_rolled(seen, segments, pipeline.segment_count(wire, self.names)))
                if isinstance(produced, Cut):  # the operation left the broker where the model cannot follow
                    self.cut = replace(produced, op_index=len(self.observed) - 1)
            answered(self)

        pipeline.start(steps, slot, done)

    def probed(self, answers, op_count: int) -> None:
        """The answers of a ListOffsets EARLIEST that read this history's partitions (judge/logstart.py)."""
        mine = answers if not isinstance(answers, dict) else {key: answers[key] for key in self.probe if key in answers}
        self.probe = []
        self.cut = logstart.cut_after(mine, op_count)

    def trace(self) -> JudgedTrace:
        return judged(self.history, self.executed, self.observed, self.names, self.cut)
