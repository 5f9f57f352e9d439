"""Read-only views over a history and its two traces, shared by every check.

Bookkeeping only (which topic config applies, which broker leads, what its clock reads); no
timestamp rule lives here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

from ktc.reference.types import (
    Batch,
    CreateTopic,
    CreateTopicResult,
    ElectLeader,
    Fetch,
    FetchResult,
    History,
    Op,
    Produce,
    ProduceResult,
    Result,
    StepClock,
    TimestampType,
    TopicConfig,
    Trace,
    clock_states,
    header_max,
)
from ktc.specs.profiles import Profile

LAT = TimestampType.LOG_APPEND_TIME

OpT = TypeVar("OpT", bound=Op)
ResultT = TypeVar("ResultT", bound=Result)


def answer(result: Result, kind: type[ResultT]) -> ResultT:
    """``result`` as the type that answers its operation: the harness checked every answer's type before any
    check runs (ktc/judge/contract.py), so a result of another type here is a bug of ktc's."""
    if not isinstance(result, kind):
        raise TypeError(f"{type(result).__name__} where {kind.__name__} answers the operation")
    return result


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
            if isinstance(op, CreateTopic) and answer(r, CreateTopicResult).error_code == 0
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
                expected, observed = answer(self.expected[i], ProduceResult), answer(self.observed[i], ProduceResult)
                views.append(ProduceView(i, op, configs[op.topic], now, changed, expected, observed))
        return tuple(views)

    def last_fetches(self) -> Iterator[tuple[int, str, int, FetchResult, FetchResult]]:
        """The final Fetch of each topic-partition: (op index, topic, partition, expected, observed)."""
        last: dict[tuple[str, int], int] = {}
        for i, op in enumerate(self.history.ops):
            if isinstance(op, Fetch):
                last[(op.topic, op.partition)] = i
        for (topic, partition), i in last.items():
            yield i, topic, partition, answer(self.expected[i], FetchResult), answer(self.observed[i], FetchResult)

    def ops_of(self, kind: type[OpT], answers: type[ResultT]) -> Iterator[tuple[int, OpT, ResultT, ResultT]]:
        """Each operation of ``kind`` with its expected and observed results, of the type ``answers``."""
        for i, op in enumerate(self.history.ops):
            if isinstance(op, kind):
                yield i, op, answer(self.expected[i], answers), answer(self.observed[i], answers)

    def config_of(self, topic: str) -> TopicConfig | None:
        return self.created.get(topic)
