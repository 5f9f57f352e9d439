"""What the invariants over reads share: the stored log as Fetch and ListOffsets return it, paired by
log state, and each record read traced back to the append that wrote it (by the offsets the
implementation answered, never by the model's)."""

from __future__ import annotations

from collections.abc import Iterator

from ktc.checks.scenario import ProduceView, Scenario
from ktc.reference.types import DescribeLog, Fetch, ListOffsets, Produce, RetentionPass

STATE_CHANGES = (Produce, RetentionPass)  # what changes a partition's stored log (clocks and leaders do not)


def where(op) -> tuple[str, int]:
    return op.topic, op.partition


def records(fetch) -> list:
    """Every record a Fetch read, in offset order: (offset, timestamp, batch)."""
    return sorted(((r.offset, r.timestamp, b) for b in fetch.batches for r in b.records), key=lambda x: x[0])


def appended_by(s: Scenario) -> dict[tuple[str, int], list[tuple[int, int, ProduceView]]]:
    """Per partition, (first offset, end offset, view) of each append as the implementation answered it."""
    found: dict = {}
    for view in s.produces():
        base = view.observed.base_offset
        if base >= 0 and view.batch.records:
            found.setdefault(where(view.op), []).append((base, base + len(view.batch.records), view))
    return found


def writer(spans, offset: int, before: int) -> ProduceView | None:
    """The append (before op ``before``) whose answered offsets hold ``offset``; the latest one if several."""
    hits = [v for lo, hi, v in spans if lo <= offset < hi and v.index < before]
    return hits[-1] if hits else None


def fetches(s: Scenario) -> Iterator[tuple[int, object, object]]:
    """(op index, Fetch op, observed result) of every Fetch the implementation answered."""
    for i, op, _exp, obs in s.ops_of(Fetch):
        if obs.error_code == 0:
            yield i, op, obs


def same_state(s: Scenario, i: int, kind, keep=lambda op: True) -> tuple[int, object] | None:
    """An answered read of ``kind`` (that ``keep`` selects) of op ``i``'s partition with no append or
    retention pass on it in between (the nearest after, else before): (its index, its observed result)."""
    ops, key = s.history.ops, where(s.history.ops[i])
    for step in (1, -1):
        j = i + step
        while 0 <= j < len(ops) and not (isinstance(ops[j], STATE_CHANGES) and where(ops[j]) == key):
            if isinstance(ops[j], kind) and where(ops[j]) == key and keep(ops[j]) and s.observed[j].error_code == 0:
                return j, s.observed[j]
            j += step
    return None


def lookups(s: Scenario, keep) -> Iterator[tuple[int, ListOffsets, object, list]]:
    """(index, op, observed, records of a same-state Fetch) of each answered ListOffsets ``keep(op)`` selects."""
    for i, op, _exp, obs in s.ops_of(ListOffsets):
        paired = same_state(s, i, Fetch) if obs.error_code == 0 and keep(op) else None
        if paired is not None:
            yield i, op, obs, records(paired[1])


def segment_of(s: Scenario, i: int, offset: int) -> int | None:
    """The base offset of the segment holding ``offset``, from a DescribeLog of the same state (None: unknown)."""
    paired = same_state(s, i, DescribeLog)
    if paired is None or not paired[1].segments:
        return None
    bases = [g.base_offset for g in paired[1].segments if g.base_offset <= offset]
    return max(bases) if bases else None
