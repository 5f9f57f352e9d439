"""What the invariants over reads share: the stored log as Fetch and ListOffsets return it, paired by
log state, and each record read traced back to the append that wrote it (by the offsets the
implementation answered, never by the model's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from ktc.checks.scenario import ProduceView, Scenario, answer
from ktc.reference.types import (
    DescribeLog,
    DescribeLogResult,
    ElectLeader,
    Fetch,
    FetchResult,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    RetentionPass,
    StoredBatch,
)

STATE_CHANGES = (Produce, RetentionPass)  # what changes a partition's stored log (clocks and leaders do not)
PLACED = (Produce, ElectLeader, RetentionPass, ListOffsets, Fetch, DescribeLog)  # the operations on one partition

Read = TypeVar("Read", ListOffsets, Fetch, DescribeLog)
Answer = TypeVar("Answer", ListOffsetsResult, FetchResult, DescribeLogResult)


class Placed(Protocol):
    """An operation on one topic-partition."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...


def where(op: Placed) -> tuple[str, int]:
    return op.topic, op.partition


def records(fetch: FetchResult) -> list[tuple[int, int, StoredBatch]]:
    """Every record a Fetch read, in offset order: (offset, timestamp, batch)."""
    return sorted(((r.offset, r.timestamp, b) for b in fetch.batches for r in b.records), key=lambda x: x[0])


def appended_by(s: Scenario) -> dict[tuple[str, int], list[tuple[int, int, ProduceView]]]:
    """Per partition, (first offset, end offset, view) of each append as the implementation answered it."""
    found: dict[tuple[str, int], list[tuple[int, int, ProduceView]]] = {}
    for view in s.produces():
        base = view.observed.base_offset
        if base >= 0 and view.batch.records:
            found.setdefault(where(view.op), []).append((base, base + len(view.batch.records), view))
    return found


def writer(spans: Sequence[tuple[int, int, ProduceView]], offset: int, before: int) -> ProduceView | None:
    """The append (before op ``before``) whose answered offsets hold ``offset``; the latest one if several."""
    hits = [v for lo, hi, v in spans if lo <= offset < hi and v.index < before]
    return hits[-1] if hits else None


def fetches(s: Scenario) -> Iterator[tuple[int, Fetch, FetchResult]]:
    """(op index, Fetch op, observed result) of every Fetch the implementation answered."""
    for i, op, _exp, obs in s.ops_of(Fetch, FetchResult):
        if obs.error_code == 0:
            yield i, op, obs


def same_state(
    s: Scenario, i: int, kind: type[Read], answers: type[Answer], keep: Callable[[Read], bool] = lambda op: True
) -> tuple[int, Answer] | None:
    """An answered read of ``kind`` (that ``keep`` selects) of op ``i``'s partition with no append or
    retention pass on it in between (the nearest after, else before): (its index, its observed result)."""
    ops = s.history.ops
    here = ops[i]
    if not isinstance(here, PLACED):
        raise TypeError(f"{type(here).__name__} is on no partition")
    key = where(here)
    for step in (1, -1):
        j = i + step
        while 0 <= j < len(ops):
            op = ops[j]
            if isinstance(op, STATE_CHANGES) and where(op) == key:
                break
            if isinstance(op, kind) and where(op) == key and keep(op):
                found = answer(s.observed[j], answers)
                if found.error_code == 0:
                    return j, found
            j += step
    return None


def lookups(
    s: Scenario, keep: Callable[[ListOffsets], bool]
) -> Iterator[tuple[int, ListOffsets, ListOffsetsResult, list[tuple[int, int, StoredBatch]]]]:
    """(index, op, observed, records of a same-state Fetch) of each answered ListOffsets ``keep(op)`` selects."""
    for i, op, _exp, obs in s.ops_of(ListOffsets, ListOffsetsResult):
        paired = same_state(s, i, Fetch, FetchResult) if obs.error_code == 0 and keep(op) else None
        if paired is not None:
            yield i, op, obs, records(paired[1])


def segment_of(s: Scenario, i: int, offset: int) -> int | None:
    """The base offset of the segment holding ``offset``, from a DescribeLog of the same state (None: unknown)."""
    paired = same_state(s, i, DescribeLog, DescribeLogResult)
    if paired is None or not paired[1].segments:
        return None
    bases = [g.base_offset for g in paired[1].segments if g.base_offset <= offset]
    return max(bases) if bases else None
