"""Bulk differential testing: many generated scenarios per run of a bulk implementation.

1. A seeded Hypothesis corpus (edge-biased histories, generate phase only).
2. Each base history expanded by deterministic mutations that stay on the edges: timestamps
   moved by +-1 or onto the bounds, clocks advanced, the history replayed under every profile
   whose configs it uses.
3. Chunks judged in one ``impl.run`` each; every trace compared whole with the reference.
4. The first disagreement shrunk in bulk (ktc/judge/shrink.py) to a single minimal scenario.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.strategies import SearchStrategy

from ktc import reference
from ktc.implementations.protocol import Implementation
from ktc.judge.shrink import shrink
from ktc.reference.configs import config_error
from ktc.reference.types import INT64_MAX, INT64_MIN, CreateTopic, History, Produce
from ktc.specs.profiles import get as get_profile

EDGES = (INT64_MIN, INT64_MIN + 1, -2, -1, 0, 1, INT64_MAX - 1, INT64_MAX)


@dataclass
class BulkReport:
    scenarios: int = 0
    disagreements: int = 0
    generate_seconds: float = 0.0
    check_seconds: float = 0.0
    counterexample: History | None = None
    shrink_rounds: int = 0
    per_profile: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.scenarios / self.check_seconds if self.check_seconds else 0.0


def corpus(strategy: SearchStrategy[History], count: int, seed: int) -> list[History]:
    """``count`` histories from a strategy, deterministic for a seed (no shrinking, no database)."""
    found: list[History] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(history: History) -> None:
        found.append(history)

    collect()
    return found


def mutate(history: History, rng: random.Random) -> History:
    """One edge-preserving mutation: a record timestamp nudged or snapped to an edge, or time moved."""
    produces = [(i, op) for i, op in enumerate(history.ops) if isinstance(op, Produce)]
    if not produces or rng.random() < 0.15:
        return replace(history, start_ms=history.start_ms + rng.choice((-1, 1, 1000, -3_600_000, 3_600_000)))
    i, op = rng.choice(produces)
    j = rng.randrange(len(op.batch.records))
    record = op.batch.records[j]
    ts = nudge(record.timestamp, history.start_ms, rng)
    records = op.batch.records[:j] + (replace(record, timestamp=ts),) + op.batch.records[j + 1 :]
    return replace(
        history, ops=history.ops[:i] + (replace(op, batch=replace(op.batch, records=records)),) + history.ops[i + 1 :]
    )


def nudge(ts: int, now: int, rng: random.Random) -> int:
    choice = rng.random()
    if choice < 0.4:
        return max(INT64_MIN, min(INT64_MAX, ts + rng.choice((-1, 1))))
    if choice < 0.6:
        return rng.choice(EDGES)
    bound = rng.choice((0, 1, 3_600_000, 86_400_000, 604_800_000))
    return max(INT64_MIN, min(INT64_MAX, now + rng.choice((-1, 1)) * bound + rng.choice((-1, 0, 1))))


def retarget(history: History, profile: str) -> History | None:
    """The same history under another profile, if every topic config is valid there."""
    p = get_profile(profile)
    configs = [op.config for op in history.ops if isinstance(op, CreateTopic)]
    if any(config_error(c, p) for c in configs):
        return None
    return replace(history, profile=profile)


def expand(bases: list[History], profiles: list[str], total: int, seed: int) -> Iterator[History]:
    rng = random.Random(seed)
    retargeted = [h2 for h in bases for p in profiles if (h2 := retarget(h, p)) is not None]
    produced = 0
    while produced < total:
        base = retargeted[produced % len(retargeted)]
        yield base if produced < len(retargeted) else mutate(base, rng)
        produced += 1


def check(impl: Implementation, histories: list[History], report: BulkReport) -> History | None:
    started = time.monotonic()
    observed = impl.run(histories)
    first = None
    for history, trace in zip(histories, observed):
        report.per_profile[history.profile] = report.per_profile.get(history.profile, 0) + 1
        if tuple(trace) != reference.run(history):
            report.disagreements += 1
            first = first or history
    report.scenarios += len(histories)
    report.check_seconds += time.monotonic() - started
    return first


def run_bulk(
    impl: Implementation, bases: list[History], profiles: list[str], total: int, chunk: int, seed: int
) -> BulkReport:
    """Throughput is measured after a warm-up run (JVM start and first job excluded)."""
    report = BulkReport()
    impl.run(bases[:50])
    batch: list[History] = []
    for history in expand(bases, profiles, total, seed):
        batch.append(history)
        if len(batch) == chunk:
            report.counterexample = report.counterexample or check(impl, batch, report)
            batch = []
    if batch:
        report.counterexample = report.counterexample or check(impl, batch, report)
    if report.counterexample is not None:
        report.counterexample, report.shrink_rounds = shrink(
            report.counterexample, lambda cs: [tuple(t) != reference.run(c) for c, t in zip(cs, impl.run(cs))]
        )
    return report
