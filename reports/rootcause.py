"""Failures grouped by root cause: the first divergence of their history, largest group first.

A failing row carries ``first_divergence`` (ktc/judge/divergence.py): the operation and field where the
implementation first answered differently, and its ``cause`` (op kind, field, expected vs observed
shape: ``Produce.error_code: expected 32, observed 0``).  Rows of one implementation with the same
cause are one defect, however many clauses it reached: ``fail`` rows own it, ``error`` rows met a
divergence no clause decides, ``unknown`` rows were made undecidable by it.  A failure without a
divergence (a warning, a text, an invariant) is its own cause: its op kind and normalised mismatch.
Each group names its clauses and one command that replays it.
"""
from __future__ import annotations

from .counterexamples import file_name, pytest_replay, replay_command, spec_of
from .dedupe import normalise, op_type
from .verdicts import BAD

GROUPED = BAD  # the verdicts a group counts; unknown rows are listed as explained by it


def divergence_of(row: dict):
    return row.get("first_divergence") or (row.get("counterexample") or {}).get("first_divergence")


def cause_of(row: dict) -> str:
    """The root cause's name: the divergence's cause, else the row's own mismatch or reason."""
    found = divergence_of(row)
    if isinstance(found, dict):
        return found.get("cause") or found.get("text", "?")
    if isinstance(found, str):  # results written before divergences were data: 'op #2 Produce.error_code: ...'
        return found.split(" ", 2)[-1]
    mismatch = (row.get("counterexample") or {}).get("mismatch")
    if mismatch:
        return f"{op_type(row['counterexample'])}: {normalise(str(mismatch.get('what')))}"
    return normalise(row.get("reason") or row["clause"])[:160]


def example_of(row: dict) -> str:
    found = divergence_of(row)
    return found.get("text", "") if isinstance(found, dict) else str(found or row.get("reason") or "")


def replay_line(row: dict, provenance: dict, counterexample_dir: str) -> str:
    """``ktc replay`` of the row's counterexample file when it has one, else the pytest command."""
    spec = spec_of(row["implementation"], provenance)
    if row["verdict"] == "fail" and row.get("counterexample"):
        return replay_command(f"{counterexample_dir}/{file_name(row)}", spec)
    return pytest_replay((row.get("tests") or ["suites"])[0], spec, row.get("seed"))


def groups(doc: dict, counterexample_dir: str = "counterexamples") -> list[dict]:
    """[{implementation, cause, example, rows, clauses, explains, replay}], largest first: ``clauses`` are
    the fail/error rows' clauses (``error`` ones marked), ``explains`` the unknown rows it made undecidable."""
    found: dict[tuple, dict] = {}
    for row in doc["rows"]:
        if row.get("expected") or row["verdict"] not in GROUPED and not divergence_of(row):
            continue
        if row["verdict"] in GROUPED:
            group = group_for(found, row, doc.get("provenance", {}), counterexample_dir)
            group["rows"] += 1
            group["clauses"].add(row["clause"] + ("" if row["verdict"] == "fail" else f" ({row['verdict']})"))
    for row in doc["rows"]:
        group = found.get((row["implementation"], cause_of(row)))
        if group is not None and row["verdict"] == "unknown" and not row.get("expected"):
            group["explains"].add(row["clause"])
    return sorted((finished(g) for g in found.values()), key=lambda g: (-g["rows"], g["implementation"], g["cause"]))


def group_for(found: dict, row: dict, provenance: dict, counterexample_dir: str) -> dict:
    key = (row["implementation"], cause_of(row))
    return found.setdefault(key, {"implementation": key[0], "cause": key[1], "example": example_of(row), "rows": 0,
                                  "clauses": set(), "explains": set(),
                                  "replay": replay_line(row, provenance, counterexample_dir)})


def finished(group: dict) -> dict:
    return {**group, "clauses": sorted(group["clauses"]), "explains": sorted(group["explains"])}


def text(doc: dict) -> list[str]:
    found = groups(doc)
    if not found:
        return []
    lines = ["", f"root causes of the failures ({len(found)}; largest first):"]
    for g in found:
        lines.append(f"  {g['rows']:>3} rows  {g['implementation']}: {g['cause']}")
        lines.append(f"            e.g.     {g['example']}")
        lines.append(f"            clauses: {', '.join(g['clauses'])}")
        if g["explains"]:
            lines.append(f"            made {len(g['explains'])} more unknown: {', '.join(g['explains'])}")
        lines.append(f"            replay:  {g['replay']}")
    return lines
