"""The one check registry: ``@check(*clause_ids)`` over functions of one signature,
``check(scenario, compare) -> None``; ``run_check`` turns a check's comparisons into a Verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ktc.checks.scenario import Scenario
from ktc.checks.verdicts import Mismatch, Validity, Verdict

Check = Callable[[Scenario, "Compare"], None]

CHECKS: dict[str, Check] = {}


def check(*clause_ids: str) -> Callable[[Check], Check]:
    """Register a check for one or more clause ids."""

    def register(fn: Check) -> Check:
        for clause_id in clause_ids:
            if clause_id in CHECKS:
                raise ValueError(f"two checks for {clause_id}")
            CHECKS[clause_id] = fn
        return fn

    return register


class Compare:
    def __init__(self) -> None:
        self.count = 0
        self.first: Mismatch | None = None
        self.mismatched_ops: set[int] = set()  # every op index at which this check found a difference

    def eq(self, op_index: int, what: str, expected: object, observed: object, invariant: bool = False) -> None:
        self.count += 1
        if expected != observed:
            self.mismatched_ops.add(op_index)
            self.first = self.first or Mismatch(op_index, what, expected, observed, invariant)

    def holds(self, op_index: int, what: str, ok: bool, observed: object) -> None:
        """An invariant of the observation alone: no earlier divergence from the model can explain it away."""
        self.eq(op_index, what, "invariant holds", "invariant holds" if ok else observed, invariant=True)


def run_check(clause_id: str, scenario: Scenario) -> Verdict | None:
    compare = Compare()
    CHECKS[clause_id](scenario, compare)
    if compare.count == 0:
        return None
    validity = Validity.FAIL if compare.first else Validity.PASS
    return Verdict(clause_id, validity, compare.count, compare.first)


def owner_at(scenario: Scenario, op_index: int, clause_ids: Iterable[str]) -> str | None:
    """The first of ``clause_ids`` whose check finds a difference at ``op_index``: the clause that
    owns what the implementation answered there (ktc/judge/divergence.py), or None."""
    tried: set[Check] = set()
    for clause_id in clause_ids:
        fn = CHECKS[clause_id]
        if fn not in tried:
            tried.add(fn)
            compare = Compare()
            fn(scenario, compare)
            if op_index in compare.mismatched_ops:
                return clause_id
    return None
