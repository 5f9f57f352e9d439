"""Observations of a real broker, and how they are judged: each operation over [sent, received].

A broker's clock cannot be set, so each operation's ``now`` is only known to lie in
[request sent, response received].  ``judged`` returns, with each trace, the history as the broker
actually ran it twice: once with every operation placed at the start of its interval and once at
its end (``trace.judged_as``).  The harness judges both and calls a clause ``unknown`` where they
disagree.  Echoes narrow the interval to a point: a LogAppendTime *is* the broker's now, and an
out-of-range text prints ``now - before`` and ``now + after``.  A history whose validation boundary
falls inside an interval is undecidable (found by the harness, ktc/judge/harness.py): never pass, never fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ktc.implementations.protocol import Cut, JudgedTrace
from ktc.kafka.client import wire
from ktc.reference.types import (
    Ack,
    Advance,
    DescribeLog,
    DescribeLogResult,
    ElectLeader,
    FetchResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    ProduceResult,
    RetentionPass,
    RetentionResult,
    StepClock,
    StoredBatch,
    StoredRecord,
    TopicConfig,
)

UNSUPPORTED_VERSION = 35
RANGE_TEXT = re.compile(r"The timestamp should be within \[(-?\d+), (-?\d+)\]")


@dataclass(frozen=True)
class Observed:
    result: object
    sent: int
    received: int
    exact_now: int | None = None
    ambiguous: bool = False  # the broker's answer depends on a now the interval cannot pin
    skipped: bool = False  # a read never sent (the broker was probed not to answer it): judged without it


def local(op) -> Observed | None:
    """What an operation the broker cannot be asked for answers, at once (None: ask the broker)."""
    now = wire.now_ms()
    if isinstance(op, (Advance, StepClock, ElectLeader)):
        return Observed(Ack(), now, now)
    if isinstance(op, RetentionPass):  # a retention pass cannot run on demand: what follows is undecidable
        return Observed(RetentionResult((), -1, UNSUPPORTED_VERSION), now, now, ambiguous=True)
    if isinstance(op, DescribeLog):
        return Observed(DescribeLogResult((), UNSUPPORTED_VERSION), now, now)
    return None


def judged(
    history: History, executed: list, observed: list[Observed], names: dict, cut: Cut | None = None
) -> JudgedTrace:
    """The trace, with the history as run (rebased, renamed) placed at both ends of every interval."""
    if cut is not None:
        trace = JudgedTrace(o.result for o in observed)
        trace.cut = cut
        return trace
    trace = JudgedTrace(o.result for o in observed)
    renamed = replace(history, ops=tuple(rename(op, names) for op in executed))
    trace.judged_as = (placed(renamed, observed, "sent"), placed(renamed, observed, "received"))
    # (Boundaries inside a clock interval are found by the harness, which knows the effective limits.)
    trace.undecidable = any(o.ambiguous for o in observed)
    return trace


def produce_result(out: wire.ProduceOutcome) -> ProduceResult:
    return ProduceResult(
        out.error_code,
        out.error_message,
        out.record_errors,
        out.base_offset,
        out.log_append_time,
        out.log_start_offset,
        False,
        (),
    )


def fetch_result(out: wire.FetchOutcome) -> FetchResult:
    batches = tuple(
        StoredBatch(
            b.base_offset,
            b.timestamp_type,
            b.max_timestamp,
            tuple(StoredRecord(r.offset, r.timestamp) for r in b.records),
        )
        for b in out.batches
    )
    return FetchResult(batches, out.error_code)


def list_result(out: wire.ListOffsetsOutcome) -> ListOffsetsResult:
    return ListOffsetsResult(out.offset, out.timestamp, out.error_code)


def echoed_now(
    out, config: TopicConfig | None, interval: tuple[int, int] | None = None, defaults: dict[str, int] | None = None
) -> int | None:
    """The broker's own clock when it told us: its LogAppendTime, or the one now a range text allows."""
    if out.error_code == 0 and out.log_append_time >= 0:
        return out.log_append_time
    nows = text_nows(out, config, interval, defaults)
    return next(iter(nows)) if nows is not None and len(nows) == 1 else None


def text_nows(
    out, config: TopicConfig | None, interval: tuple[int, int] | None, defaults: dict[str, int] | None
) -> set[int] | None:
    """The instants of ``interval`` a rejected record's range text allows; None without a text.

    The text prints ``[now - before, now + after]`` (Java long arithmetic) with the broker's
    effective limits.  A topic's own setting of a limit overrides the broker's default
    (``defaults``, see BrokerAdapter.limit_defaults), and the effective before is that
    before or that difference limit (after: after or difference), whatever the version's rule.
    So the true now is one of these instants; it is pinned when it is the only one.  Without an
    interval or the defaults, only a topic with an explicit before and no difference limit is read.
    """
    bounds = range_bounds(out)
    if bounds is None or config is None:
        return None
    if interval is not None and defaults is not None:
        return {n for n in implied_nows(bounds, config, defaults) if interval[0] <= n <= interval[1]}
    explicit = (
        config.difference_max_ms is None and config.before_max_ms is not None and config.before_max_ms < 2**63 - 1
    )
    return {bounds[0] + config.before_max_ms} if explicit else None


def implied_nows(bounds: tuple[int, int], config: TopicConfig, defaults: dict[str, int]) -> set[int]:
    """Every now that both printed bounds allow, for each candidate before and after limit."""

    def value(key: str) -> int | None:
        own = getattr(config, f"{key}_max_ms")
        return own if own is not None else defaults.get(key)

    low, high = bounds
    befores = {value("before"), value("difference")} - {None}
    afters = {value("after"), value("difference")} - {None}
    return {wire.wrap64(low + b) for b in befores} & {wire.wrap64(high - a) for a in afters}


def produce_observed(
    out, config: TopicConfig | None, sent: int, received: int, defaults: dict[str, int] | None
) -> Observed:
    """A produce over [sent, received]: pinned by an echo, or undecidable when its range text allows
    several instants (no single now could judge its text at both ends)."""
    nows = text_nows(out, config, (sent, received), defaults)
    return Observed(
        produce_result(out),
        sent,
        received,
        echoed_now(out, config, (sent, received), defaults),
        ambiguous=nows is not None and len(nows) > 1,
    )


def with_rolled(seen: Observed, before: int | None, after: int | None) -> Observed:
    """A produce's result saying whether it rolled a segment, when the segments were counted around it."""
    if before is None or after is None or not isinstance(seen.result, ProduceResult):
        return seen
    return replace(seen, result=replace(seen.result, rolled=after > before))


def range_bounds(out) -> tuple[int, int] | None:
    """``(now - before, now + after)`` from the first range text of a produce's record errors."""
    for error in out.record_errors:
        found = RANGE_TEXT.search(error.message or "")
        if found:
            return int(found.group(1)), int(found.group(2))
    return None


NEAR_MS = 10**12  # about 31 years: closer than this to the history's clock means "relative to now"


def rebase(op, history_now: int | None, broker_now: int):
    """Move clock-relative timestamps onto the broker's clock, just before the request is sent.

    A history is written against its own clock; a real broker has the wall clock.  Timestamps within
    NEAR_MS of the history's clock keep their distance to now; the absolute edges (Long.MIN/MAX, -1,
    0, unit mistakes, the Gregorian cutover) stay as they are.
    """
    if history_now is None:
        return op
    shift = broker_now - history_now
    move = lambda ts: ts + shift if ts is not None and abs(ts - history_now) < NEAR_MS else ts
    if isinstance(op, ListOffsets):
        return replace(op, target=move(op.target) if op.target >= 0 else op.target)
    if isinstance(op, Produce):
        records = tuple(replace(r, timestamp=move(r.timestamp)) for r in op.batch.records)
        return replace(op, batch=replace(op.batch, records=records, max_timestamp=move(op.batch.max_timestamp)))
    return op


def rename(op, names: dict):
    return replace(op, topic=names[op.topic]) if hasattr(op, "topic") else op


def placed(history: History, observed: list[Observed], end: str) -> tuple:
    """The history with each operation at one end of its interval (or its echoed now), and its trace.

    Clock operations the broker could not perform are dropped; Advance ops carry real time instead.  So
    are reads never sent (``skipped``): a ListOffsets changes nothing, so the rest is judged without it.
    """
    at = lambda seen: seen.exact_now if seen.exact_now is not None else getattr(seen, end)
    steps = [
        (op, seen.result, at(seen))
        for op, seen in zip(history.ops, observed)
        if not isinstance(op, (Advance, StepClock, ElectLeader)) and not seen.skipped
    ]
    ops, results, _start = on_real_time(steps)
    first = next((at(s) for s in observed), history.start_ms)
    return replace(history, ops=ops, start_ms=first, clock_offsets=(0,)), results


def on_real_time(steps) -> tuple:
    """(op, result, real ms) in order -> (ops with Advance ops for the real time between them, or a
    StepClock where it went back, their results, the first real time or None)."""
    ops, results, clock, start = [], [], None, None
    for op, result, real in steps:
        if clock is None:
            clock = start = real
        elif real != clock:  # a clock ktc sets can go back: a step of broker 0's clock
            ops.append(Advance(real - clock) if real > clock else StepClock(0, real - clock))
            results.append(Ack())
            clock = real
        ops.append(op)
        results.append(result)
    return tuple(ops), tuple(results), start
