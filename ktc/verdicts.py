"""Verdicts are data first and rendered last (Jepsen's checker contract).

A check yields a ``Verdict`` per clause per history: PASS, FAIL or UNKNOWN (a real broker's
clock interval could not decide).  Merging takes the worst: FAIL > UNKNOWN > PASS.  A run's row
per clause adds two outcomes a check cannot produce: ``unsupported`` (the implementation says so)
and ``error`` (the harness or implementation crashed).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional


class Validity(str, enum.Enum):
    PASS = "pass"
    UNKNOWN = "unknown"
    FAIL = "fail"


_PRIORITY = {Validity.PASS: 0, Validity.UNKNOWN: 1, Validity.FAIL: 2}
ROW_VERDICTS = ("pass", "fail", "unsupported", "unknown", "error")


def merge(validities: Iterable[Validity]) -> Optional[Validity]:
    """The worst of several validities; None when there are none."""
    return max(validities, key=_PRIORITY.__getitem__, default=None)


@dataclass(frozen=True)
class Mismatch:
    """Where expectation and observation part: an operation index, a label and both values."""

    op_index: int
    what: str
    expected: Any
    observed: Any


@dataclass(frozen=True)
class Verdict:
    clause: str
    validity: Validity
    compared: int = 0
    mismatch: Optional[Mismatch] = None
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> bool:
        return self.validity is Validity.FAIL


def render_mismatch(m: Mismatch) -> str:
    return f"op #{m.op_index}: {m.what}: expected {m.expected!r}, observed {m.observed!r}"
