"""Shrink a disagreement in bulk: every candidate reduction of a history is judged in one run.

Used for bulk implementations (Spark), where one job per Hypothesis shrink step would cost
0.1-0.5 s each.  Greedy: each round proposes every one-step reduction (drop an operation, drop
a record, simplify a timestamp), judges them all in a single ``impl.run`` call, and keeps the
smallest that still breaks the same clause.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from ktc.reference.types import CreateTopic, History, Produce

MAX_ROUNDS = 40


def size(h: History) -> tuple[int, int, int]:
    records = sum(len(op.batch.records) for op in h.ops if isinstance(op, Produce))
    spread = sum(abs(r.timestamp - h.start_ms) for op in h.ops if isinstance(op, Produce) for r in op.batch.records)
    return (len(h.ops), records, spread)


def candidates(h: History) -> Iterator[History]:
    for i, op in enumerate(h.ops):
        if not isinstance(op, CreateTopic):
            yield replace(h, ops=h.ops[:i] + h.ops[i + 1 :])
    for i, op in enumerate(h.ops):
        if isinstance(op, Produce):
            yield from (replace(h, ops=h.ops[:i] + (b,) + h.ops[i + 1 :]) for b in smaller_produces(op, h.start_ms))


def smaller_produces(op: Produce, now: int) -> Iterator[Produce]:
    records = op.batch.records
    if len(records) > 1:
        for j in range(len(records)):
            yield replace(op, batch=replace(op.batch, records=records[:j] + records[j + 1 :]))
    for j, r in enumerate(records):
        for simpler in (now, 0, -1):
            if r.timestamp != simpler and abs(simpler - now) < abs(r.timestamp - now):
                fixed = records[:j] + (replace(r, timestamp=simpler),) + records[j + 1 :]
                yield replace(op, batch=replace(op.batch, records=fixed))


def shrink(
    history: History, still_fails: Callable[[list[History]], list[bool]], deadline: float | None = None
) -> tuple[History, int]:
    """The smallest history found that still fails, and the number of bulk rounds it took; no round begins
    after ``deadline`` (``time.monotonic()``), as a broker's round can take a minute."""
    rounds = 0
    while rounds < MAX_ROUNDS and (deadline is None or time.monotonic() < deadline):
        pool = sorted(set(candidates(history)), key=size)
        if not pool:
            break
        rounds += 1
        failing = [c for c, bad in zip(pool, still_fails(pool)) if bad]
        if not failing:
            break
        history = failing[0]
    return history, rounds
