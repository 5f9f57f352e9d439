"""A real broker's trace is judged on placements of the history (``judged_as``: each operation at one end
of its clock interval), in which the broker's own ``Advance``/``StepClock`` ops stand for the real time
between operations, in place of the history's.  The verdicts then point at placed operations; this maps
them back to the history the user gave, so that a counterexample, its replay and a hunt's reproducer name
the operation that failed."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypeVar

from ktc.checks.verdicts import Divergence, Mismatch, Verdict
from ktc.reference.types import Advance, History, StepClock

CLOCK_OPS = (Advance, StepClock)


Placed = TypeVar("Placed", Mismatch, Divergence)  # what names an operation by its index


def frame_map(placed: History, original: History) -> list[int] | None:
    """Placed op index -> the history's; a placed clock op maps to the operation it precedes.  None when the
    placement does not keep the history's other operations one for one."""
    answered = [i for i, op in enumerate(original.ops) if not isinstance(op, CLOCK_OPS)]
    if not answered or sum(not isinstance(op, CLOCK_OPS) for op in placed.ops) != len(answered):
        return None
    index, seen = [], 0
    for op in placed.ops:
        index.append(answered[min(seen, len(answered) - 1)])
        seen += not isinstance(op, CLOCK_OPS)
    return index


def in_history_frame(verdicts: list[Verdict], placed: History, original: History) -> list[Verdict]:
    index = frame_map(placed, original)
    return verdicts if index is None else [moved(v, index) for v in verdicts]


OP_REFERENCE = re.compile(r"op #(\d+)")  # how a check's text names another operation


def moved(verdict: Verdict, index: list[int]) -> Verdict:
    if verdict.mismatch is None and verdict.divergence is None:  # nothing names an operation (most verdicts)
        return verdict

    def at(thing: Placed | None) -> Placed | None:
        return thing if thing is None else replace(thing, op_index=renamed(thing.op_index, index))

    mismatch = at(verdict.mismatch)
    if mismatch is not None:
        mismatch = replace(mismatch, what=OP_REFERENCE.sub(lambda m: f"op #{renamed(int(m[1]), index)}", mismatch.what))
    return replace(verdict, mismatch=mismatch, divergence=at(verdict.divergence))


def renamed(placed_index: int, index: list[int]) -> int:
    return index[placed_index] if 0 <= placed_index < len(index) else placed_index
