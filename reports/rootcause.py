"""Failures grouped by root cause: the first divergence of their history, largest group first.

A failing row carries ``first_divergence`` (ktc/judge/divergence.py): the operation and field where the
implementation first answered differently, and its ``cause`` (op kind, field, expected vs observed
shape: ``Produce.error_code: expected 32, observed 0``).  Rows of one implementation with the same
cause are one defect, however many clauses it reached: ``fail`` rows own it, ``error`` rows met a
divergence no clause decides, ``unknown`` rows were made undecidable by it.  A failure without a
divergence (a warning, a text, an invariant) is its own cause: its op kind and normalised mismatch.
Each group names its clauses and one command that replays it.  Expected deviations are no root cause:
only rows counted as unexpected failures (reports/outcomes.py) are grouped.
"""

from __future__ import annotations

from typing import TypedDict

from .counterexamples import located, replay_of
from .dedupe import normalise, op_type
from .outcomes import UNEXPECTED, UNKNOWN, outcome
from .schema import Document, FirstDivergence, Row, provenance_of


class Gathered(TypedDict):
    """A root cause while its rows are gathered (``replay``: None until its first row)."""

    implementation: str
    cause: str
    example: str
    rows: int
    clauses: set[str]
    explains: set[str]
    replay: str | None


class RootCause(TypedDict):
    """A root cause, gathered: its clauses and the unknown rows it explains sorted, its replay command located."""

    implementation: str
    cause: str
    example: str
    rows: int
    clauses: list[str]
    explains: list[str]
    replay: str


def divergence_of(row: Row) -> FirstDivergence | str | None:
    return row.get("first_divergence") or (row.get("counterexample") or {}).get("first_divergence")


def cause_of(row: Row) -> str:
    """The root cause's name: the divergence's cause, else the row's own mismatch or reason."""
    found = divergence_of(row)
    if isinstance(found, dict):
        return found.get("cause") or found.get("text", "?")
    if isinstance(found, str):  # results written before divergences were data: 'op #2 Produce.error_code: ...'
        return found.split(" ", 2)[-1]
    example = row.get("counterexample") or {}
    mismatch = example.get("mismatch")
    if mismatch:
        return f"{op_type(example)}: {normalise(str(mismatch.get('what')))}"
    return normalise(row.get("reason") or row["clause"])[:160]


def example_of(row: Row) -> str:
    found = divergence_of(row)
    return found.get("text", "") if isinstance(found, dict) else str(found or row.get("reason") or "")


def groups(doc: Document, report_dir: str | None = None) -> list[RootCause]:
    """[{implementation, cause, example, rows, clauses, explains, replay}], largest first: ``clauses`` are
    the unexpected fail/error rows' clauses (``error`` ones marked), ``explains`` the unknown rows it made
    undecidable; ``replay`` replays one of its rows, a counterexample file's when it has one."""
    found: dict[tuple[str, str], Gathered] = {}
    for row in doc["rows"]:
        if outcome(row) == UNEXPECTED:
            group = group_for(found, row)
            group["rows"] += 1
            group["clauses"].add(row["clause"] + ("" if row["verdict"] == "fail" else f" ({row['verdict']})"))
            group["replay"] = better(group["replay"], replay_of(row, provenance_of(doc)))
    for row in doc["rows"]:
        made = found.get((row["implementation"], cause_of(row)))
        if made is not None and outcome(row) == UNKNOWN:
            made["explains"].add(row["clause"])
    done = (finished(g, report_dir) for g in found.values())
    return sorted(done, key=lambda g: (-g["rows"], g["implementation"], g["cause"]))


def better(current: str | None, candidate: str) -> str:
    """The first replay command, unless a later row has a counterexample file to replay (``ktc replay``)."""
    if current is None or not current.startswith("ktc replay") and candidate.startswith("ktc replay"):
        return candidate
    return current


def group_for(found: dict[tuple[str, str], Gathered], row: Row) -> Gathered:
    key = (row["implementation"], cause_of(row))
    return found.setdefault(
        key,
        {
            "implementation": key[0],
            "cause": key[1],
            "example": example_of(row),
            "rows": 0,
            "clauses": set(),
            "explains": set(),
            "replay": None,
        },
    )


def finished(group: Gathered, report_dir: str | None) -> RootCause:
    return {
        "implementation": group["implementation"],
        "cause": group["cause"],
        "example": group["example"],
        "rows": group["rows"],
        "clauses": sorted(group["clauses"]),
        "explains": sorted(group["explains"]),
        "replay": located(group["replay"] or "", report_dir),
    }


def text(doc: Document, report_dir: str | None = None) -> list[str]:
    """Every root cause, four or five lines each (summary.txt; the terminal shows the largest few)."""
    found = groups(doc, report_dir)
    if not found:
        return []
    lines = ["", f"root causes of the failures ({len(found)}; largest first):"]
    for g in found:
        lines.append(f"  {g['rows']:>3} {'row' if g['rows'] == 1 else 'rows':<4}  {g['implementation']}: {g['cause']}")
        lines.append(f"            e.g.     {g['example']}")
        lines.append(f"            clauses: {', '.join(g['clauses'])}")
        if g["explains"]:
            lines.append(f"            made {len(g['explains'])} more unknown: {', '.join(g['explains'])}")
        lines.append(f"            replay:  {g['replay']}")
    return lines
