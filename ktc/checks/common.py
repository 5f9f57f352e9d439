"""What checks of several KIPs share: timestamp types, which records a broker validates, flags."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ktc.checks.registry import Compare
from ktc.checks.scenario import Scenario
from ktc.reference.model import Model
from ktc.reference.types import (
    INVALID_CONFIG,
    NO_TIMESTAMP,
    CreateTopic,
    CreateTopicResult,
    Fetch,
    FetchResult,
    ProduceResult,
    RetentionPass,
    RetentionResult,
    TimestampType,
)

LAT = TimestampType.LOG_APPEND_TIME

CT = TimestampType.CREATE_TIME


def flagged(result: ProduceResult) -> frozenset[int]:
    """Indices of the records an answer blames (whatever the error code; the code is its own clause)."""
    if result.error_code == 0:
        return frozenset()
    return frozenset(e.batch_index for e in result.record_errors)


def exempt(scenario: Scenario, ts: int) -> bool:
    return ts in (NO_TIMESTAMP, scenario.history.no_timestamp)


def count(fetch: FetchResult) -> int:
    return sum(len(b.records) for b in fetch.batches)


def topic_config_conformance(s: Scenario, c: Compare, attr: str) -> None:
    """CreateTopics answers for configs that set ``attr``: whether the config exists is the clause's business
    (any other CreateTopics answer belongs to no clause: a divergence there is an error, ktc/judge/divergence.py)."""
    create_topic_answers(s, c, (attr,), "error_code for configs {}", lambda r: r.error_code)


def create_topic_answers(
    s: Scenario, c: Compare, attrs: tuple[str, ...], what: str, answer: Callable[[CreateTopicResult], object]
) -> None:
    """``answer`` of each CreateTopic whose config sets one of ``attrs``; ``what`` names it ({} = the keys set)."""
    for i, op, exp, obs in s.ops_of(CreateTopic, CreateTopicResult):
        if any(getattr(op.config, a) is not None for a in attrs):
            c.eq(i, "CreateTopic " + what.format(op.config.set_keys()), answer(exp), answer(obs))


def refused_as_invalid(s: Scenario, c: Compare, attrs: tuple[str, ...]) -> None:
    """Whether CreateTopics refused a config setting one of ``attrs`` as invalid (error 40), topic by topic."""
    create_topic_answers(s, c, attrs, "refused configs {} as invalid (40)", lambda r: r.error_code == INVALID_CONFIG)


def stamps(fetch: FetchResult) -> list[tuple[int, int]]:
    return [(r.offset, r.timestamp) for b in fetch.batches for r in b.records]


def stamps_with_create_time(fetch: FetchResult) -> list[tuple[int, int, int | None]]:
    return [(r.offset, r.timestamp, r.create_time) for b in fetch.batches for r in b.records]


def every_fetch(s: Scenario) -> Iterator[tuple[int, str, int, FetchResult, FetchResult]]:
    """Every Fetch, mid-history reads included: (op index, topic, partition, expected, observed)."""
    for i, op, exp, obs in s.ops_of(Fetch, FetchResult):
        yield i, op.topic, op.partition, exp, obs


def fetches_of(s: Scenario, timestamp_type: TimestampType) -> Iterator[tuple[int, str, FetchResult, FetchResult]]:
    for i, topic, _partition, exp, obs in every_fetch(s):
        config = s.config_of(topic)
        if config is not None and config.timestamp_type is timestamp_type:
            yield i, topic, exp, obs


def segment_fates(s: Scenario) -> Iterator[tuple[int, int, str, bool, bool, bool]]:
    """Per retention pass, per segment up to the first one the reference keeps: what decided its fate.

    Yields (op index, base offset, basis kind, expected deleted?, observed deleted?, event limit set?).
    ``basis kind`` is 'mtime' (no usable timestamp), 'future' (basis after the leader clock) or 'timestamp'.
    """
    model = Model.for_history(s.history)
    for i, op, exp, obs in s.ops_of(RetentionPass, RetentionResult):
        cluster = model.replay(s.history, i)
        partition = model.partition(cluster, op.topic, op.partition)  # None: no such topic or partition
        if partition is None:
            continue
        now, leader = cluster.now(partition.leader), partition.leader
        limit_set = cluster.topics[op.topic].config.retention_max_eventtime_ms is not None
        for segment in partition.segments[: len(exp.deleted_base_offsets) + 1]:
            if segment.empty:
                continue
            basis = model.retention_basis(segment, leader)
            kind = "mtime" if basis == segment.mtime_ms[leader] else "future" if basis > now else "timestamp"
            yield (
                i,
                segment.base_offset,
                kind,
                segment.base_offset in exp.deleted_base_offsets,
                segment.base_offset in obs.deleted_base_offsets,
                limit_set,
            )


def compare_fates(s: Scenario, c: Compare, keep: Callable[[str, bool], bool]) -> None:
    for i, base, kind, expected, observed, limit_set in segment_fates(s):
        if keep(kind, limit_set):
            c.eq(i, f"segment {base} ({kind} basis) deleted", expected, observed)
