"""Root cause first: the first operation where an implementation's answer departs from the model's.

One defect (a broker that skips timestamp validation) makes every later answer differ too (the
stored records, the offsets, ListOffsets), so every clause that looks at them would fail.  The first
divergence names the defect once: ``op #2 Produce.error_code: expected 32, observed 0``.  It is
found generically, by walking the two result dataclasses (reference/types.py) field by field and
tuples item by item.  A clause fails only when its own mismatch is at or before that operation; a
failure at a later operation is explained by it and becomes ``unknown``.  A divergence that no
clause compares at its operation (a CreateTopics 40 where the model created the topic,
UNKNOWN_TOPIC_OR_PARTITION on a produce) is an answer no clause decides: every clause of that
history is ``error``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields, is_dataclass, replace
from typing import TYPE_CHECKING

from ktc.checks.verdicts import Divergence, Validity, Verdict
from ktc.reference.types import (
    UNSUPPORTED_VERSION,
    Advance,
    DescribeLog,
    ElectLeader,
    Op,
    ProduceResult,
    RecordError,
    Result,
    RetentionPass,
    SegmentInfo,
    StepClock,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Difference = tuple[str, object, object]  # (field path, expected, observed)

CLOCK_OPS = (Advance, StepClock, ElectLeader)  # answered by the harness, not by the implementation
MODEL_ONLY_OPS = (RetentionPass, DescribeLog)  # an implementation may decline them (UNSUPPORTED_VERSION)
NOT_JUDGED = frozenset(
    {
        (ProduceResult, "error_message"),  # free text, its own clause; no later answer depends on it
        (RecordError, "message"),  # the same, per record
        (ProduceResult, "warnings"),  # the broker's log, not its answer
        (ProduceResult, "rolled"),  # the model's view of its segments; a broker's answer does not say
        (ProduceResult, "log_start_offset"),  # no clause decides it
        (SegmentInfo, "time_index"),  # sparse by design: its own clauses (KIP-33.time-index-*) judge it
    }
)


def first_divergence(ops: Sequence[Op], expected: Sequence[Result], observed: Sequence[Result]) -> Divergence | None:
    """The first answered operation whose result differs from the model's, at its first differing field."""
    for ordinal, (index, op, want, got) in enumerate(answered(ops, expected, observed)):
        found = None if declined(op, got) else differs(want, got)
        if found is not None:
            return Divergence(index, type(op).__name__, *found, ordinal=ordinal)
    return None


def answered(
    ops: Sequence[Op], expected: Sequence[Result], observed: Sequence[Result]
) -> Iterator[tuple[int, Op, Result, Result]]:
    """(op index, op, expected, observed) of the operations the implementation itself answers."""
    return (
        (i, op, want, got)
        for i, (op, want, got) in enumerate(zip(ops, expected, observed))
        if not isinstance(op, CLOCK_OPS)
    )


def declined(op: Op, got: Result) -> bool:
    return isinstance(op, MODEL_ONLY_OPS) and getattr(got, "error_code", None) == UNSUPPORTED_VERSION


def differs(want: object, got: object, path: str = "") -> Difference | None:
    """(field path, expected, observed) of the first difference between two results, or None."""
    if is_dataclass(want) and is_dataclass(got):
        if type(want) is not type(got):
            return path or "result type", type(want).__name__, type(got).__name__
        return first(differs(getattr(want, name), getattr(got, name), joined(path, name)) for name in judged(want))
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)):
        if len(want) != len(got):
            return f"len({path})", len(want), len(got)
        return first(differs(w, g, f"{path}[{i}]") for i, (w, g) in enumerate(zip(want, got)))
    return None if want == got else (path, want, got)


def judged(result: DataclassInstance | type[DataclassInstance]) -> list[str]:
    return [f.name for f in fields(result) if (type(result), f.name) not in NOT_JUDGED]


def joined(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def first(found: Iterator[Difference | None]) -> Difference | None:
    return next((f for f in found if f is not None), None)


def same_place(a: Divergence | None, b: Divergence | None) -> bool:
    """Both ends of a clock interval diverge at the same operation and field: not the clock's doing."""
    return a is not None and b is not None and (a.ordinal, a.op_kind, a.field) == (b.ordinal, b.op_kind, b.field)


def owned_by(verdicts: list[Verdict], divergence: Divergence) -> bool:
    """Whether one of these verdicts fails exactly at the divergent operation."""
    return any(v.failed and v.mismatch is not None and v.mismatch.op_index == divergence.op_index for v in verdicts)


def attribute(verdicts: list[Verdict], divergence: Divergence | None, owned: bool) -> list[Verdict]:
    """Failures at a later operation than the first divergence are explained by it (unknown); a
    divergence no clause owns makes every verdict an error; failures at it carry it."""
    if divergence is None:
        return verdicts
    if not owned:
        note = f"unexplained divergence (no clause decides it): {divergence.describe()}"
        return [replace(v, validity=Validity.ERROR, notes=(note,), divergence=divergence) for v in verdicts]
    return [explained(v, divergence) for v in verdicts]


def explained(verdict: Verdict, divergence: Divergence) -> Verdict:
    """An invariant broken by the observation alone (the log's LogAppendTime going backwards) stays a
    failure wherever it is: whatever the implementation answered before, the invariant had to hold."""
    if not verdict.failed or verdict.mismatch is None or verdict.mismatch.op_index < divergence.op_index:
        return verdict  # passed, or failed before the divergence: on a field of its own (a text, a warning)
    if verdict.mismatch.invariant:
        return replace(verdict, notes=(*verdict.notes, f"first divergence: {divergence.describe()}"))
    if verdict.mismatch.op_index > divergence.op_index:
        return replace(
            verdict,
            validity=Validity.UNKNOWN,
            divergence=divergence,
            notes=(f"explained by an earlier divergence: {divergence.describe()}",),
        )
    return replace(verdict, notes=(*verdict.notes, f"first divergence: {divergence.describe()}"), divergence=divergence)
