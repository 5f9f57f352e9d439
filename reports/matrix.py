"""The version matrix (``ktc matrix``): one column per Apache Kafka release, each judged under its own
profile; a row per clause, and a row per Kafka change (suites/pinned/test_kafka_changes.py, judged under
the change's profile).  A cell that differs from its left neighbour is marked and annotated with the
changes (specs/kafka-versions.toml) released in between whose clauses include the row, in the manner of
test262.fyi's engine x feature grid.  Or one column per release of another target (a client library:
``implementation_column``), a row per clause and profile, a changed cell annotated by the caller's ``Explain``
(the library's known fixes).  Every fail or error cell no expectations file explains is listed with its
counterexample (the row's reason) and the command that replays it.  Data first (``build``), rendered last
(text, JSON, HTML).
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict
from xml.etree.ElementTree import Element

from ktc.specs import versions

from . import junit
from .counterexamples import located
from .files import write_atomically
from .outcomes import EXPECTED, outcome, worst
from .registry import Context, renderer
from .schema import Document, Row, Target, provenance_of

CHANGE_TEST = "test_a_change_in_kafka_fails_exactly_where_it_did_not_hold"
DECIDED = ("pass", "fail", "error", "expected")  # a cell that says what the release does
SYMBOL = {
    "pass": "ok",
    "fail": "FAIL",
    "error": "ERR",
    "unknown": "?",
    "unsupported": "-",
    "expected": "exp",
    "missing": " ",
}


class MatrixVersion(TypedDict):
    """A release's column in matrix.json: its run's facts (the cells are in the rows)."""

    version: str
    profile: str
    wall_s: float
    clauses: None
    changes: None
    problem: str | None


class MatrixRow(TypedDict):
    """A clause's or a Kafka change's row: its cell per version, and a note where a cell changes."""

    kind: str  # clauses | changes
    row: str
    notes: dict[str, str]
    cells: dict[str, str]


class Failure(TypedDict):
    """A fail or error cell's evidence: the row's reason (its counterexample) and the command that replays it."""

    verdict: str
    reason: str
    replay: str


class MatrixFailure(Failure):
    """A failure as matrix.json lists it: the cell it is in."""

    version: str
    row: str


class MatrixTable(TypedDict):
    """matrix.json: the versions, the rows, how many fail/error cells no expectations file explains, and each
    of those cells' evidence (older matrix.json files lack ``failures``)."""

    versions: list[MatrixVersion]
    rows: list[MatrixRow]
    unexplained: int
    failures: list[MatrixFailure]


Explain = Callable[[str, str, str, str], str]  # (older, newer, kind, row) -> the note of a cell that changed


@dataclass
class Column:
    """One release's run: its profile, wall time, and the verdict per clause and per change."""

    version: str
    profile: str
    wall_s: float
    clauses: dict[str, str] = field(default_factory=dict)
    changes: dict[str, str] = field(default_factory=dict)
    problem: str | None = None  # why the run gave no results (a broker that did not start, ...)
    failures: dict[str, Failure] = field(default_factory=dict)  # row -> its fail/error cell's evidence


def cell(row: Row) -> str:
    """A row's verdict, with a fail or error an expectations file explains shown as ``expected``."""
    return EXPECTED if outcome(row) == EXPECTED else row["verdict"]


def worst_rows(rows: list[Row], profile: str) -> dict[str, Row]:
    """The version's own-profile row of each clause (the worst when several implementations ran)."""
    found: dict[str, list[Row]] = {}
    for row in (r for r in rows if r["profile"] == profile):
        found.setdefault(row["clause"], []).append(row)
    return {clause: worst(candidates) for clause, candidates in found.items()}


def clause_cells(rows: list[Row], profile: str) -> dict[str, str]:
    return {clause: cell(row) for clause, row in worst_rows(rows, profile).items()}


def row_name(clause: str, profile: str, profiles: tuple[str, ...]) -> str:
    """A clause's row: the clause, with its profile when the column is judged under several."""
    return clause if len(profiles) == 1 else f"{clause} ({profile})"


def clause_of(row: str) -> str:
    return row.split(" (", 1)[0]


def failures(rows: list[Row], profiles: tuple[str, ...], report: Path) -> dict[str, Failure]:
    """Per row, a fail or error no expectations file explains: its reason and its replay, a counterexample's path
    made whole under the run's directory (``report`` resolved: ``latest`` moves on with the next run)."""
    where = str(report.resolve())
    found: dict[str, Failure] = {
        row_name(clause, profile, profiles): {
            "verdict": row["verdict"],
            "reason": row.get("reason") or "",
            "replay": located(row.get("replay") or "", where),
        }
        for profile in profiles
        for clause, row in worst_rows(rows, profile).items()
        if cell(row) in ("fail", "error")
    }
    return dict(sorted(found.items()))


def change_cells(junit: Path) -> dict[str, str]:
    """Per change id, what its pinned test decided (pass, fail, expected, error, unknown, unsupported): the worst
    of the rows its test case carries in junit.xml (reports/junit.py)."""
    if not junit.exists():
        return {}
    ids = [c.id for c in versions.changes()]
    cells = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "")
        found = next((i for i in ids if name.startswith(CHANGE_TEST + "[") and name.endswith(f"-{i}]")), None)
        if found is not None:
            cells[found] = case_cell(case)
    return cells


def case_cell(case: Element) -> str:
    """The worst row the test case carries; without one (no row was decided: its setup broke, say), how pytest
    ended it, and unknown when it did not fail."""
    rows = junit.rows_of(case)
    if rows:
        return cell(worst(rows))
    if case.find("failure") is not None:
        return "fail"
    return "error" if case.find("error") is not None else "unknown"


def column(version: str, profile: str, wall_s: float, report: Path | None, problem: str | None = None) -> Column:
    """A release's column from its run directory (results.json, junit.xml)."""
    if report is None or not (report / "results.json").exists():
        return Column(version, profile, wall_s, problem=problem or "the run wrote no results.json")
    rows = json.loads((report / "results.json").read_text())["rows"]
    cells, changes = clause_cells(rows, profile), change_cells(report / "junit.xml")
    return Column(version, profile, wall_s, cells, changes, problem, failures(rows, (profile,), report))


def implementation_column(version: str, implementation: str | None, report: Path | None, problem: str | None) -> Column:
    """One release's column out of a run that judged several (a client library's releases side by side): the rows
    of ``implementation``, a row per clause and profile; its wall time and whether it ran, from its target."""
    found = report / "results.json" if report is not None else None
    doc: Document = json.loads(found.read_text()) if found is not None and found.exists() else {}
    rows = [r for r in doc.get("rows", ()) if r["implementation"] == implementation]
    targets = provenance_of(doc).get("targets", ())
    target = next((t for t in targets if t.get("implementation") == implementation), Target())
    profiles = tuple(sorted({r["profile"] for r in rows}))
    said = problem or target.get("not_run") or (None if rows else "the run has no rows of this release")
    wall = target.get("duration_s", 0.0)
    if report is None or not rows:
        return Column(version, ", ".join(profiles), wall, problem=said)
    cells = {row_name(c, p, profiles): v for p in profiles for c, v in clause_cells(rows, p).items()}
    return Column(version, ", ".join(profiles), wall, cells, {}, said, failures(rows, profiles, report))


def tally(column: Column) -> str:
    """The column's cells counted by verdict (``2 fail, 15 pass``), or its problem."""
    if column.problem:
        return column.problem
    counted: dict[str, int] = {}
    for verdict in [*column.clauses.values(), *column.changes.values()]:
        counted[verdict] = counted.get(verdict, 0) + 1
    return ", ".join(f"{n} {verdict}" for verdict, n in sorted(counted.items()))


# ---- the table ---------------------------------------------------------------------------------


def rows_of(columns: list[Column]) -> tuple[list[str], list[str]]:
    clauses = sorted({c for col in columns for c in col.clauses})
    changes = [c.id for c in versions.changes() if any(c.id in col.changes for col in columns)]
    return clauses, changes


def kafka_changes(older: str, newer: str, kind: str, row: str) -> str:
    """The changes of specs/kafka-versions.toml released between two Kafka releases that name the row."""
    fixed = versions.changes_between(older, newer)
    broke = versions.introduced_between(older, newer)
    named = [
        f"{c.id}{suffix}"
        for found, suffix in ((fixed, ""), (broke, " (introduced)"))
        for c in found
        if (row in c.clauses if kind == "clauses" else c.id == row)
    ]
    return ", ".join(named) or "changed (no change in kafka-versions.toml names it)"


def notes(columns: list[Column], kind: str, row: str, explain: Explain = kafka_changes) -> dict[str, str]:
    """Per version whose cell differs from its left neighbour: what was released in between that names the row."""
    out: dict[str, str] = {}
    for left, right in zip(columns, columns[1:]):
        a, b = (getattr(col, kind).get(row, "missing") for col in (left, right))
        if a != b and a in DECIDED and b in DECIDED:
            out[right.version] = named_on_one_side(left, right, a, b) or explain(left.version, right.version, kind, row)
    return out


def named_on_one_side(left: Column, right: Column, a: str, b: str) -> str | None:
    """A fail beside an expected cell: no change of behaviour is shown, only an expectations file on one side."""
    if {a, b} != {"fail", EXPECTED}:
        return None
    return f"a known deviation on {(left if a == EXPECTED else right).version} only: its expectations file names it"


def build(columns: list[Column], explain: Explain = kafka_changes) -> MatrixTable:
    """The matrix as data: versions, then per row its cells and the notes where a cell changes, then the evidence
    of every unexplained fail or error cell."""
    clauses, changes = rows_of(columns)
    rows: list[MatrixRow] = []
    for kind, names in (("changes", changes), ("clauses", clauses)):
        for name in names:
            rows.append(
                {
                    "kind": kind,
                    "row": name,
                    "notes": notes(columns, kind, name, explain),
                    "cells": {col.version: getattr(col, kind).get(name, "missing") for col in columns},
                }
            )
    return {
        "versions": [version_of(c) for c in columns],
        "rows": rows,
        "unexplained": sum(1 for r in rows for v in r["cells"].values() if v in ("fail", "error")),
        "failures": [{"version": c.version, "row": row, **found} for c in columns for row, found in c.failures.items()],
    }


def version_of(column: Column) -> MatrixVersion:
    """The column's facts in matrix.json, in its fields' order (the cells are the rows')."""
    return {
        "version": column.version,
        "profile": column.profile,
        "wall_s": column.wall_s,
        "clauses": None,
        "changes": None,
        "problem": column.problem,
    }


# ---- rendering -----------------------------------------------------------------------------------


def text(table: MatrixTable) -> str:
    versions_ = [v["version"] for v in table["versions"]]
    width = max([len(r["row"]) for r in table["rows"]] + [10])
    wide = {v: max(7, len(v)) for v in versions_}
    head = " " * width + "  " + " ".join(f"{v:>{wide[v]}}" for v in versions_)
    lines = [head, profile_line(table, width, wide)]
    for row in table["rows"]:
        marks = "".join(
            f"{SYMBOL[row['cells'][v]] + ('*' if v in row['notes'] else ''):>{wide[v] + 1}}" for v in versions_
        )
        lines.append(f"{row['row']:<{width}} {marks}")
    lines += ["", "* differs from the version to its left:"]
    lines += [f"  {r['row']} @ {v}: {n}" for r in table["rows"] for v, n in r["notes"].items()]
    lines += [
        "",
        "wall time: " + ", ".join(f"{v['version']} {v['wall_s']:.0f} s" for v in table["versions"]),
        f"fail/error cells no expectations file explains: {table['unexplained']}",
    ]
    lines += [f"{v['version']}: {v['problem']}" for v in table["versions"] if v["problem"]]
    return "\n".join(lines + evidence(table)) + "\n"


def profile_line(table: MatrixTable, width: int, wide: dict[str, int]) -> str:
    """Each column's profile; the one profile once when every column shares it (a client library's releases)."""
    profiles = [v["profile"] for v in table["versions"]]
    if len(set(profiles)) == 1:
        return f"{'(profile)':<{width}}  {profiles[0]}"
    return f"{'(profile)':<{width}}  " + " ".join(
        f"{v['profile'].removeprefix('kafka-'):>{wide[v['version']]}}" for v in table["versions"]
    )


def evidence(table: MatrixTable) -> list[str]:
    """Each unexplained fail or error cell: its counterexample (the row's reason) and the command that replays it."""
    found = table.get("failures") or []
    if not found:
        return []
    lines = ["", "fail/error cells, each with its counterexample and the command that replays it:"]
    for f in found:
        lines += [f"  {f['row']} @ {f['version']}: {f['verdict']}: {f['reason']}", f"    replay: {f['replay']}"]
    return lines


def page(table: MatrixTable) -> str:
    """A static HTML page: the grid, changed cells outlined with their note as a tooltip."""
    head = "".join(
        f"<th>{html.escape(v['version'])}<br><small>{html.escape(v['profile'])}</small></th>" for v in table["versions"]
    )
    body = "".join(page_row(r, [v["version"] for v in table["versions"]]) for r in table["rows"])
    found = "".join(
        f"<li><b>{html.escape(f['row'])} @ {html.escape(f['version'])}</b>: {html.escape(f['verdict'])}: "
        f"{html.escape(f['reason'])}<br><code>{html.escape(f['replay'])}</code></li>"
        for f in table.get("failures") or []
    )
    return (
        f"<!doctype html><meta charset=utf-8><title>ktc matrix</title><style>{STYLE}</style>"
        f"<h1>Versions x clauses</h1><table><tr><th></th>{head}</tr>{body}</table>"
        + (f"<h2>Fail and error cells: counterexample, replay</h2><ul>{found}</ul>" if found else "")
    )


def page_row(row: MatrixRow, versions_: list[str]) -> str:
    cells = "".join(
        f"<td class='{row['cells'][v]}{' changed' if v in row['notes'] else ''}' "
        f"title='{html.escape(row['notes'].get(v, ''))}'>{SYMBOL[row['cells'][v]]}</td>"
        for v in versions_
    )
    return f"<tr class='{row['kind']}'><th>{html.escape(row['row'])}</th>{cells}</tr>"


STYLE = (
    "body{font:13px system-ui}td{text-align:center;padding:2px 6px}th{text-align:left}"
    ".pass{background:#cfc}.fail,.error{background:#f99}.expected{background:#fd8}.unknown{background:#eee}"
    ".unsupported{color:#999}.changed{outline:2px solid #333}tr.changes th{font-style:italic}"
)


@renderer("matrix")
def render_text(table: MatrixTable, context: Context) -> str:
    """The table as text (a matrix.json document, not a results document)."""
    return text(table)


@renderer("matrix-html")
def render_page(table: MatrixTable, context: Context) -> str:
    return page(table)


def write(directory: Path, table: MatrixTable) -> list[Path]:
    """matrix.json, matrix.txt and matrix.html in ``directory``."""
    outputs = {"matrix.json": json.dumps(table, indent=1), "matrix.txt": text(table), "matrix.html": page(table)}
    for name, content in outputs.items():
        write_atomically(directory / name, content)
    return [directory / name for name in outputs]
