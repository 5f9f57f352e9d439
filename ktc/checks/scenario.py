"""Read-only views over a history and its two traces, shared by every check.

Bookkeeping only (which topic config applies, which broker leads, what its clock reads); no
timestamp rule lives here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from ktc.reference.types import (
    Batch,
    CreateTopic,
    ElectLeader,
    FetchResult,
    History,
    Produce,
    ProduceResult,
    StepClock,
    TimestampType,
    TopicConfig,
    Trace,
    clock_states,
    header_max,
)
from ktc.specs.profiles import Profile

LAT = TimestampType.LOG_APPEND_TIME


@dataclass(frozen=True)
class ProduceView:
    index: int
    op: Produce
    config: TopicConfig
    now: int
    leader_changed_before: bool
    expected: ProduceResult
    observed: ProduceResult

    @property
    def batch(self) -> Batch:
        return self.op.batch

    @property
    def on_log_append_time_topic(self) -> bool:
        return self.config.timestamp_type is LAT

    @property
    def honest_header(self) -> bool:
        return self.batch.max_timestamp is None or self.batch.max_timestamp == header_max(Batch(self.batch.records))


@dataclass
class Scenario:
    history: History
    profile: Profile
    expected: Trace
    observed: Trace

    @cached_property
    def created(self) -> dict[str, TopicConfig]:
        """Topics the reference created, with their configs."""
        return {
            op.topic: op.config
            for op, r in zip(self.history.ops, self.expected)
            if isinstance(op, CreateTopic) and r.error_code == 0
        }

    def produces(self) -> Iterator[ProduceView]:
        return iter(self.produce_views)

    @cached_property
    def produce_views(self) -> tuple[ProduceView, ...]:
        """Each Produce to a created topic, with the leader's clock it ran under (computed once: every check
        reads them)."""
        configs, snapshots, changed, views = self.created, clock_states(self.history), False, []
        for i, op in enumerate(self.history.ops):
            changed = changed or isinstance(op, (ElectLeader, StepClock))
            if isinstance(op, Produce) and op.topic in configs:
                now = snapshots[i].leader_now(op.topic, op.partition)
                views.append(ProduceView(i, op, configs[op.topic], now, changed, self.expected[i], self.observed[i]))
        return tuple(views)

    def last_fetches(self) -> Iterator[tuple[int, str, int, FetchResult, FetchResult]]:
        """The final Fetch of each topic-partition: (op index, topic, partition, expected, observed)."""
        last: dict[tuple[str, int], int] = {}
        for i, r in enumerate(self.expected):
            if isinstance(r, FetchResult):
                op = self.history.ops[i]
                last[(op.topic, op.partition)] = i
        for (topic, partition), i in last.items():
            yield i, topic, partition, self.expected[i], self.observed[i]

    def ops_of(self, kind) -> Iterator[tuple[int, object, object, object]]:
        for i, op in enumerate(self.history.ops):
            if isinstance(op, kind):
                yield i, op, self.expected[i], self.observed[i]

    def config_of(self, topic: str) -> TopicConfig | None:
        return self.created.get(topic)
