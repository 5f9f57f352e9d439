"""A check's verdicts: data first, rendered last (Jepsen's checker contract).

A check yields a ``Verdict`` per clause per history, its ``validity`` one of the shared vocabulary's
(reports/verdicts.py): PASS, FAIL, UNKNOWN (a real broker's clock interval could not decide, a request was
lost with its connection, or an earlier divergence explains the mismatch) or ERROR (the history could not
be judged: an answer ktc cannot read, or a first divergence no clause decides).  A test's row per clause
merges its examples' verdicts in the vocabulary's one order (``reports.verdicts.ORDER``); the plugin adds
``unsupported`` (the implementation says so) and ``error`` also when the harness or implementation crashed.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any

from ktc.reports.schema import FirstDivergence, Scalar
from ktc.reports.verdicts import Validity

__all__ = ["Divergence", "Mismatch", "Validity", "Verdict", "render_mismatch"]


INDEX = re.compile(r"\[\d+\]")  # a position in a result's tuple: dropped from a root cause's name


@dataclass(frozen=True)
class Mismatch:
    """Where expectation and observation part: an operation index, a label and both values.
    ``invariant``: the check judged the observation alone (``Compare.holds``), not against the model."""

    op_index: int
    what: str
    expected: Any
    observed: Any
    invariant: bool = False


@dataclass(frozen=True)
class Divergence:
    """A history's first divergence: the first operation whose answer differs from the model's, and
    the first field of it that does (a path into the result, ``batches[0].records[1].timestamp``).
    ``ordinal`` counts only operations a broker answers, so the two ends of a clock interval (whose
    histories may differ in clock operations) can be compared."""

    op_index: int
    op_kind: str
    field: str
    expected: Any
    observed: Any
    ordinal: int = 0

    def describe(self) -> str:
        return (
            f"op #{self.op_index} {self.op_kind}.{self.field}: "
            f"expected {short(plain(self.expected))}, observed {short(plain(self.observed))}"
        )

    @property
    def cause(self) -> str:
        """The root cause's name, shared by every history that departs the same way (no indices, no
        offsets or timestamps): ``Produce.error_code: expected 32, observed 0``."""
        return f"{self.op_kind}.{INDEX.sub('[]', self.field)}: {shape(self.field, self.expected, self.observed)}"

    def as_data(self) -> FirstDivergence:
        return {
            "op_index": self.op_index,
            "op_kind": self.op_kind,
            "field": self.field,
            "expected": json_safe(self.expected),
            "observed": json_safe(self.observed),
            "text": self.describe(),
            "cause": self.cause,
        }


def plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_safe(value: object) -> Scalar:
    value = plain(value)
    return value if value is None or isinstance(value, (bool, int, str)) else short(value)


def shape(field_path: str, expected: Any, observed: Any) -> str:
    """Expected vs observed as a root cause names them: codes, flags and sentinels (< 0) exactly;
    other numbers (offsets, timestamps, counts) only by their order."""
    exact = field_path.endswith("error_code") or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in (expected, observed)
    )
    if exact:
        return f"expected {short(plain(expected), 60)}, observed {short(plain(observed), 60)}"
    if expected < 0 or observed < 0:
        return f"expected {expected if expected < 0 else 'n >= 0'}, observed {observed if observed < 0 else 'n >= 0'}"
    return f"observed {'>' if observed > expected else '<'} expected"


@dataclass(frozen=True)
class Verdict:
    clause: str
    validity: Validity
    compared: int = 0
    mismatch: Mismatch | None = None
    notes: tuple[str, ...] = field(default=())
    divergence: Divergence | None = field(default=None, compare=False)  # the root cause, when attributed

    @property
    def failed(self) -> bool:
        return self.validity is Validity.FAIL

    @property
    def bad(self) -> bool:
        """A failure, or an answer no clause decides (``error``): either fails the test that judged it."""
        return self.validity in (Validity.FAIL, Validity.ERROR)


def render_mismatch(m: Mismatch) -> str:
    return f"op #{m.op_index}: {m.what}: expected {m.expected!r}, observed {m.observed!r}"
