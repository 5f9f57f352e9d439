"""Retention and rolling judged over real time on a broker ktc did not start: windows, never a guess.

The broker runs its retention passes when it will.  ktc reads each history's log start offset (ListOffsets
EARLIEST) again and again, each answer with the [sent, received] interval it was given in, and judges it
against the model's log start after a pass at an instant ``t`` (``M(t)``, which only grows with ``t``):

- **Safety**: nothing is gone that the model keeps at every instant up to the answer: ``seen <= M(received)``,
  with the produces placed at their earliest (``sent``; an earlier mtime only deletes sooner).
- **Liveness**: what the model deletes is gone within the check interval and a stated slack:
  ``seen >= M(sent - interval - slack)``, with the produces at their latest (``received``).  Where the broker
  does not say its interval, the budget bounds the wait: a pass is taken to come at least every half budget,
  and the report says so (``over_real_time``).
- **Settled**: the answer is the model's state at the run's end (``M(end)``): nothing more can change.  Its
  ListOffsets reads are then asked once, and judged at both ends of their interval.

A history that fails neither but is not settled by the end of the budget is ``unknown``, with why; so is
one whose produces the broker answered other than the model (nothing after them can be judged).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ktc.checks.verdicts import Mismatch, Validity, Verdict
from ktc.judge import realtime_plan
from ktc.judge.realtime_plan import Planned
from ktc.reference.model import run as model_run
from ktc.reference.types import (
    Advance,
    CreateTopicResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Op,
    ProduceResult,
    RetentionPass,
    RetentionResult,
    Trace,
)

INITIAL_DELAY_MS = 30_000  # log.initial.task.delay.ms: a broker's first pass, after it starts (no request shows it)
PASS_SLACK_MS = 5_000  # a pass over many logs, and a clock a few seconds off ktc's
SLACK_MS = INITIAL_DELAY_MS + PASS_SLACK_MS


class Seen(Protocol):
    result: object
    sent: int
    received: int


@dataclass(frozen=True)
class Timing:
    """The broker's check interval (None: it did not say), the slack, and the run's end (wall clock, ms)."""

    interval_ms: int | None
    slack_ms: int
    end_ms: int
    how: str = ""  # how the interval was known (DescribeConfigs), or that it was assumed: said in every reason


@dataclass
class Judged:
    """One history's state while the tier runs: its verdict so far, the last log start seen, why it is open."""

    planned: Planned
    produced: list[Seen]
    mismatch: Mismatch | None = None
    unknown: str | None = None
    settled: bool = False
    seen: list[tuple[int, int, int]] = field(default_factory=list)  # (sent, received, log start)
    reads: list[Verdict] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.mismatch is None and self.unknown is None and not self.settled


def placed(history: History, produced: Sequence[Seen], end: str, pass_at: int, tail: Sequence[Op] = ()) -> History:
    """The history with every op at the ``end`` (sent or received) of its interval, then a pass at ``pass_at``."""
    clock, ops = getattr(produced[0], end), list[Op]()
    for op, seen in zip([o for o in history.ops if not isinstance(o, ListOffsets)], produced):
        at = getattr(seen, end)
        if at > clock:
            ops.append(Advance(at - clock))
            clock = at
        ops.append(op)
    if pass_at > clock:
        ops.append(Advance(pass_at - clock))
    return History(history.profile, (*ops, RetentionPass("t"), *tail), start_ms=getattr(produced[0], end))


def model_start(history: History, produced: Sequence[Seen], end: str, at: int) -> int:
    """The model's log start after a pass at ``at`` (0 before the last produce: nothing can have gone)."""
    if at < getattr(produced[-1], end):
        return 0
    result = model_run(placed(history, produced, end, at))[-1]
    return result.log_start_offset if isinstance(result, RetentionResult) else 0


def produce_departure(judged: Judged) -> str | None:
    """Why the produces cannot be judged on: an answer other than the model's, or None."""
    history = placed(judged.planned.history, judged.produced, "received", 0)
    expected = [r for op, r in zip(history.ops, model_run(history)) if not isinstance(op, Advance)]
    for i, (want, seen) in enumerate(zip(expected, judged.produced)):
        got = seen.result
        if isinstance(want, CreateTopicResult) and getattr(got, "error_code", None) != want.error_code:
            return f"CreateTopics answered error {getattr(got, 'error_code', None)} (the model: {want.error_code})"
        if isinstance(want, ProduceResult) and (got.error_code, got.base_offset) != (want.error_code, want.base_offset):  # type: ignore[attr-defined]
            return (
                f"produce #{i} answered error {got.error_code} at offset {got.base_offset} "  # type: ignore[attr-defined]
                f"(the model: error {want.error_code} at {want.base_offset})"
            )
    return None


def observe(judged: Judged, seen: Seen, timing: Timing) -> None:
    """Judge one log start answer: safety, liveness, settled."""
    result = seen.result
    if not judged.open or not isinstance(result, ListOffsetsResult) or result.error_code:
        return
    history, produced, start = judged.planned.history, judged.produced, result.offset
    last = judged.seen[-1][2] if judged.seen else 0
    judged.seen.append((seen.sent, seen.received, start))
    op = len(history.ops)
    if start < last:
        judged.mismatch = Mismatch(op, "the log start offset never moves back", f">= {last}", start, True)
        return
    upper = model_start(history, produced, "sent", seen.received)
    if start > upper:
        judged.mismatch = Mismatch(
            op, f"log start by {seen.received} (safety: nothing gone the model keeps)", upper, start
        )
        return
    if timing.interval_ms is not None:
        lower = model_start(history, produced, "received", seen.sent - timing.interval_ms - timing.slack_ms)
        if start < lower:
            judged.mismatch = Mismatch(
                op,
                f"log start by {seen.sent} (liveness: gone within the check interval {timing.interval_ms} ms "
                f"+ slack {timing.slack_ms} ms; {timing.how})",
                lower,
                start,
            )
            return
    judged.settled = start == model_start(history, produced, "sent", timing.end_ms)


def verdicts(judged: Judged, timing: Timing) -> list[Verdict]:
    """One verdict per clause the history judges (its reads' clause from its reads)."""
    if judged.open and judged.unknown is None:
        judged.unknown = unsettled(judged, timing)
    out = []
    for clause in judged.planned.clauses:
        read = next((v for v in judged.reads if v.clause == clause), None)
        if judged.mismatch is not None and clause == realtime_plan.FIRST_SEGMENT and read is None:
            why = f"its ListOffsets wait for the log start the model reaches, which failed: {judged.mismatch.what}"
            out.append(Verdict(clause, Validity.UNKNOWN, 0, None, (why,)))
        elif judged.mismatch is not None:
            out.append(Verdict(clause, Validity.FAIL, len(judged.seen), judged.mismatch))
        elif judged.unknown is not None:
            out.append(Verdict(clause, Validity.UNKNOWN, 0, None, (judged.unknown,)))
        else:
            out.append(read or Verdict(clause, Validity.PASS, len(judged.seen)))
    return out


def unsettled(judged: Judged, timing: Timing) -> str:
    final = model_start(judged.planned.history, judged.produced, "sent", timing.end_ms)
    seen = judged.seen[-1][2] if judged.seen else None
    deadline = "the broker did not say its check interval" if timing.interval_ms is None else "its deadline was not"
    return (
        f"the budget ended with the log start at {seen}, the model's {final} by its end not seen yet, "
        f"and {deadline} reached: the window is too wide to decide ({timing.how})"
    )


def judge_reads(judged: Judged, reads: list[Seen], clause: str) -> None:
    """The settled history's ListOffsets answers against the model's, at both ends of each interval."""
    history, produced, ops = judged.planned.history, judged.produced, judged.planned.reads
    compared, mismatch, unknown = 0, None, None
    for i, (op, seen) in enumerate(zip(ops, reads)):
        low = model_read(history, produced, "sent", seen.received, op)
        high = model_read(history, produced, "received", seen.received, op)
        if seen.result is None or low != high:
            unknown = f"ListOffsets {op.target}: no answer, or the model's answer moves within its interval"
            continue
        compared += 1
        if seen.result != low and mismatch is None:
            mismatch = Mismatch(len(history.ops) + i, f"ListOffsets {op.target} after retention", low, seen.result)
    if mismatch is not None:
        judged.reads.append(Verdict(clause, Validity.FAIL, compared, mismatch))
    elif compared:
        judged.reads.append(Verdict(clause, Validity.PASS, compared))
    else:
        judged.reads.append(Verdict(clause, Validity.UNKNOWN, 0, None, (unknown or "no read",)))


def model_read(history: History, produced: Sequence[Seen], end: str, at: int, op: ListOffsets) -> object:
    trace: Trace = model_run(placed(history, produced, end, at, (op,)))
    return trace[-1]


@dataclass
class Tier:
    """The tier's histories, judged as their answers come; ``done()`` once none is open."""

    judged: list[Judged]
    timing: Timing

    def observe_all(self, answers: Sequence[Seen]) -> None:
        for judged, seen in zip(self.judged, answers):
            observe(judged, seen, self.timing)

    def done(self) -> bool:
        return not any(j.open for j in self.judged)

    def settled_unread(self) -> list[int]:
        return [i for i, j in enumerate(self.judged) if j.settled and not j.reads and j.planned.reads]


def start(planned: Sequence[Planned], produced: Sequence[Sequence[Seen]], timing: Timing) -> Tier:
    judged = [Judged(p, list(seen)) for p, seen in zip(planned, produced)]
    for j in judged:
        j.unknown = produce_departure(j)
    return Tier(judged, timing)


def run_tier(
    planned: Sequence[Planned],
    produce: Callable[[list[History]], Sequence[Sequence[Seen]]],
    poll: Callable[[], Sequence[Seen]],
    read: Callable[[int, list[ListOffsets]], Sequence[Seen]],
    timing: Timing,
    clock: Callable[[], int],
    pause: Callable[[int], None],
    read_clause: str,
) -> list[tuple[Planned, list[Verdict]]]:
    """Produce every history, read their log starts every ``pause`` until all settle or the run's end, read
    what the settled ones ask, and judge each: the whole tier, as data."""
    tier = start(planned, produce([p.history for p in planned]), timing)
    while not tier.done() and clock() < timing.end_ms:
        tier.observe_all(poll())
        for i in tier.settled_unread():
            judge_reads(tier.judged[i], list(read(i, tier.judged[i].planned.reads)), read_clause)
        if not tier.done():
            pause(min(poll_every(timing), max(0, timing.end_ms - clock())))
    return [(j.planned, verdicts(j, timing)) for j in tier.judged]


def poll_every(timing: Timing) -> int:
    """A tenth of the check interval, within [0.5 s, 5 s]: windows narrow enough, requests few."""
    interval = timing.interval_ms if timing.interval_ms is not None else 50_000
    return max(500, min(5_000, interval // 10))


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def over_real_time(session: Any, profile: str) -> tuple[list[tuple[Planned, list[Verdict]]], Timing, str]:
    """The whole tier on a broker's real-time session (implementations/kafka/realtime/session.py): its
    verdicts, its timing and how the check interval was known."""
    interval = session.check_interval()
    now, budget_ms = wall_ms(), int(session.budget_s * 1000)
    every, how = interval.ms, str(interval.how)
    if every is None:  # the budget bounds the wait: a pass at least every half of it, and the report says so
        every = budget_ms // 2
        how += f"; liveness assumes a retention pass at least every {every} ms (half the budget)"
    timing = Timing(every, SLACK_MS, now + budget_ms, how)
    planned = realtime_plan.plan(profile, now, realtime_plan.due_ms(interval.ms, budget_ms))
    judged = run_tier(
        planned,
        session.start,
        session.log_starts,
        session.list_offsets,
        timing,
        wall_ms,
        lambda ms: time.sleep(ms / 1000),
        realtime_plan.FIRST_SEGMENT,
    )
    return judged, timing, how
