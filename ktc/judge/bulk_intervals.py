"""Bulk differential testing for implementations judged over clock intervals (real brokers).

A broker's answers depend on its clock, so its traces cannot be compared whole with the
reference as ktc/judge/bulk.py does for deterministic engines.  Here every scenario goes through the
harness's interval judging (``judge_one``): each clause at both ends of every operation's
[sent, received] interval; where the ends disagree, or a validation boundary falls inside an
interval, the verdict is ``unknown``, never pass or fail.

Scenarios: a seeded Hypothesis corpus of single-append histories (``append_histories``) under the
implementation's profile, each ending with one ListOffsets, expanded by ktc/judge/bulk.py's
edge-preserving mutations.  Only operations a broker performs (CreateTopic, Produce, Fetch,
ListOffsets): no RetentionPass, ElectLeader, StepClock or DescribeLog.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from ktc.checks import CHECKS
from ktc.checks.verdicts import Validity, Verdict
from ktc.implementations.protocol import Implementation
from ktc.judge import bulk
from ktc.judge.harness import ClauseViolation, judge_one, minimal_violation
from ktc.reference.types import CreateTopic, Fetch, History, ListOffsets, Produce, Trace
from ktc.specs.clauses import all_clauses
from ktc.strategies import append_histories, topic_configs

BROKER_OPS = (CreateTopic, Produce, Fetch, ListOffsets)
SPECIAL_TARGETS = (-1, -2, -3)  # latest, earliest, max timestamp


@dataclass
class IntervalReport:
    scenarios: int = 0
    unknown: int = 0  # scenarios with at least one unknown verdict
    failed: int = 0  # scenarios with at least one fail verdict
    verdicts: Counter[str] = field(default_factory=Counter)
    run_seconds: float = 0.0
    judge_seconds: float = 0.0
    wall_seconds: float = 0.0  # from the first run to the last verdict, when running and judging overlap
    violation: ClauseViolation | None = None  # the first failure, shrunk

    @property
    def rate(self) -> float:
        """Scenarios per second, run on the implementation and judged."""
        seconds = self.wall_seconds or self.run_seconds + self.judge_seconds
        return self.scenarios / seconds if seconds else 0.0

    @property
    def run_rate(self) -> float:
        return self.scenarios / self.run_seconds if self.run_seconds else 0.0


def with_list_offsets(history: History, rng: random.Random) -> History:
    """The history with one ListOffsets at its end: a special target or a record's own timestamp."""
    stamps = [
        r.timestamp for op in history.ops if isinstance(op, Produce) for r in op.batch.records if r.timestamp >= 0
    ]
    target = rng.choice(SPECIAL_TARGETS + tuple(stamps[:2]))
    return replace(history, ops=history.ops + (ListOffsets("t", target),))


def scenarios(profile: str, total: int, seed: int, bases: int = 300) -> list[History]:
    """``total`` append scenarios under ``profile``, deterministic for a seed.  Their topics have one
    partition: an append scenario uses only partition 0, and each partition costs the broker a
    log directory (creation, not appends, bounds a broker's scenarios/s)."""
    rng = random.Random(seed)
    configs = topic_configs(profile=profile).map(lambda config: replace(config, partitions=1))
    found = [
        with_list_offsets(h, rng) for h in bulk.corpus(append_histories(profile=profile, config=configs), bases, seed)
    ]
    out = list(bulk.expand(found, [profile], total, seed))
    assert all(isinstance(op, BROKER_OPS) for h in out for op in h.ops)
    return out


def clauses_for(impl: Implementation, profile: str) -> list[str]:
    """Every clause with a check that holds in ``profile`` and that ``impl`` does not declare unsupported."""
    caps, registry = impl.capabilities(), all_clauses()
    return sorted(
        c for c in CHECKS if c in registry and registry[c].holds_in(profile) and not caps.reason_unsupported(c)
    )


def check(
    impl: Implementation, histories: list[History], clauses: list[str], report: IntervalReport
) -> tuple[History, list[Verdict]] | None:
    """Run and judge one chunk; the first (history, its failing verdicts), if any."""
    return judge_chunk(histories, timed_run(impl, histories, report), clauses, report)


def timed_run(impl: Implementation, histories: list[History], report: IntervalReport) -> Sequence[Trace]:
    started = time.monotonic()
    traces = impl.run(histories)
    report.run_seconds += time.monotonic() - started
    return traces


def judge_chunk(
    histories: list[History], traces: Sequence[Trace], clauses: list[str], report: IntervalReport
) -> tuple[History, list[Verdict]] | None:
    """Judge one chunk's traces; the first (history, its failing verdicts), if any."""
    started, first = time.monotonic(), None
    for history, trace in zip(histories, traces, strict=True):
        verdicts = tally(judge_one(history, trace, tuple(clauses)), report)
        failed = [verdict for verdict in verdicts if verdict.validity is Validity.FAIL]
        if failed and first is None:
            first = (history, failed)
    report.judge_seconds += time.monotonic() - started
    report.scenarios += len(histories)
    return first


def tally(verdicts: list[Verdict], report: IntervalReport) -> list[Verdict]:
    report.verdicts.update(v.validity.value for v in verdicts)
    report.unknown += any(v.validity is Validity.UNKNOWN for v in verdicts)
    report.failed += any(v.validity is Validity.FAIL for v in verdicts)
    return verdicts


def run_intervals(
    impl: Implementation, histories: list[History], clauses: list[str], chunk: int, warmup: Sequence[History] = ()
) -> IntervalReport:
    """Judge every history in chunks of one ``impl.run`` each, after an uncounted run of ``warmup``
    (a JVM compiles its request path as it goes); the first failure is shrunk through ``impl.run``
    with small lists, as the harness does.  A chunk is judged while the next one runs (on a thread of
    its own: the run mostly waits for the implementation), so the rate is of the wall time of both."""
    report = IntervalReport()
    impl.run(list(warmup))
    chunks = [histories[start : start + chunk] for start in range(0, len(histories), chunk)]
    first, started = None, time.monotonic()
    with ThreadPoolExecutor(1, thread_name_prefix="ktc-bulk-run") as runner:
        running: Future[Sequence[Trace]] | None = runner.submit(timed_run, impl, chunks[0], report) if chunks else None
        for n, part in enumerate(chunks):
            assert running is not None  # one submitted per chunk
            traces = running.result()
            running = runner.submit(timed_run, impl, chunks[n + 1], report) if n + 1 < len(chunks) else None
            found = judge_chunk(part, traces, clauses, report)
            first = first or found
    report.wall_seconds = time.monotonic() - started
    if first is not None:
        report.violation = minimal_violation(impl, *first)
    return report
