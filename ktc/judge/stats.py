"""Per-test statistics, keyed by clause id: examples, verdict counts, the first failure and notes."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ktc.checks.verdicts import Verdict
from ktc.reports.schema import FirstDivergence


@dataclass
class ClauseStats:
    examples: int = 0
    validities: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    first_failure_at: int | None = None
    first_notes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # validity -> the notes of its first verdict
    first_divergences: dict[str, FirstDivergence] = field(
        default_factory=dict
    )  # validity -> the first divergence attributed to it
    features: Counter[str] = field(default_factory=Counter)  # input feature -> examples carrying it (judge/features.py)


class Recorder:
    """Per-test statistics, keyed by clause id; the run context starts a new one for each test."""

    def __init__(self) -> None:
        self.clauses: dict[str, ClauseStats] = defaultdict(ClauseStats)

    def add(self, verdict: Verdict, features: Iterable[str] = ()) -> None:
        stats = self.clauses[verdict.clause]
        stats.examples += 1
        stats.features.update(features)
        stats.validities[verdict.validity.value] += 1
        if verdict.notes:
            stats.first_notes.setdefault(verdict.validity.value, verdict.notes)
        if verdict.divergence is not None:
            stats.first_divergences.setdefault(verdict.validity.value, verdict.divergence.as_data())
        if verdict.failed and stats.first_failure_at is None:
            stats.first_failure_at = stats.examples
