"""The version matrix (``ktc matrix``): one column per Apache Kafka release, each judged under its own
profile; a row per clause, and a row per Kafka change (suites/pinned/test_kafka_changes.py, judged under
the change's profile).  A cell that differs from its left neighbour is marked and annotated with the
changes (specs/kafka-versions.toml) released in between whose clauses include the row, in the manner of
test262.fyi's engine x feature grid.  Data first (``build``), rendered last (text, JSON, HTML).
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict
from xml.etree.ElementTree import Element

from ktc.specs import versions

from . import junit
from .files import write_atomically
from .outcomes import EXPECTED, outcome, worst
from .registry import Context, renderer
from .schema import Row

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


class MatrixTable(TypedDict):
    """matrix.json: the versions, the rows, and how many fail/error cells no expectations file explains."""

    versions: list[MatrixVersion]
    rows: list[MatrixRow]
    unexplained: int


@dataclass
class Column:
    """One release's run: its profile, wall time, and the verdict per clause and per change."""

    version: str
    profile: str
    wall_s: float
    clauses: dict[str, str] = field(default_factory=dict)
    changes: dict[str, str] = field(default_factory=dict)
    problem: str | None = None  # why the run gave no results (a broker that did not start, ...)


def cell(row: Row) -> str:
    """A row's verdict, with a fail or error an expectations file explains shown as ``expected``."""
    return EXPECTED if outcome(row) == EXPECTED else row["verdict"]


def clause_cells(rows: list[Row], profile: str) -> dict[str, str]:
    """The version's own-profile row of each clause (the worst when several implementations ran)."""
    found: dict[str, list[Row]] = {}
    for row in (r for r in rows if r["profile"] == profile):
        found.setdefault(row["clause"], []).append(row)
    return {clause: cell(worst(candidates)) for clause, candidates in found.items()}


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
    return Column(version, profile, wall_s, clause_cells(rows, profile), change_cells(report / "junit.xml"), problem)


# ---- the table ---------------------------------------------------------------------------------


def rows_of(columns: list[Column]) -> tuple[list[str], list[str]]:
    clauses = sorted({c for col in columns for c in col.clauses})
    changes = [c.id for c in versions.changes() if any(c.id in col.changes for col in columns)]
    return clauses, changes


def notes(columns: list[Column], kind: str, row: str) -> dict[str, str]:
    """Per version whose cell differs from its left neighbour: the changes in between that name the row."""
    out: dict[str, str] = {}
    for left, right in zip(columns, columns[1:]):
        a, b = (getattr(col, kind).get(row, "missing") for col in (left, right))
        if a != b and a in DECIDED and b in DECIDED:
            fixed = versions.changes_between(left.version, right.version)
            broke = versions.introduced_between(left.version, right.version)
            named = [
                f"{c.id}{suffix}"
                for found, suffix in ((fixed, ""), (broke, " (introduced)"))
                for c in found
                if (row in c.clauses if kind == "clauses" else c.id == row)
            ]
            out[right.version] = ", ".join(named) or "changed (no change in kafka-versions.toml names it)"
    return out


def build(columns: list[Column]) -> MatrixTable:
    """The matrix as data: versions, then per row its cells and the notes where a cell changes."""
    clauses, changes = rows_of(columns)
    rows: list[MatrixRow] = []
    for kind, names in (("changes", changes), ("clauses", clauses)):
        for name in names:
            rows.append(
                {
                    "kind": kind,
                    "row": name,
                    "notes": notes(columns, kind, name),
                    "cells": {col.version: getattr(col, kind).get(name, "missing") for col in columns},
                }
            )
    return {
        "versions": [version_of(c) for c in columns],
        "rows": rows,
        "unexplained": sum(1 for r in rows for v in r["cells"].values() if v in ("fail", "error")),
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
    head = " " * width + "  " + " ".join(f"{v:>7}" for v in versions_)
    profiles = " ".join(f"{v['profile'].removeprefix('kafka-'):>7}" for v in table["versions"])
    lines = [head, f"{'(profile)':<{width}}  {profiles}"]
    for row in table["rows"]:
        marks = "".join(f"{SYMBOL[row['cells'][v]] + ('*' if v in row['notes'] else ''):>8}" for v in versions_)
        lines.append(f"{row['row']:<{width}} {marks}")
    lines += ["", "* differs from the version to its left:"]
    lines += [f"  {r['row']} @ {v}: {n}" for r in table["rows"] for v, n in r["notes"].items()]
    lines += [
        "",
        "wall time: " + ", ".join(f"{v['version']} {v['wall_s']:.0f} s" for v in table["versions"]),
        f"fail/error cells no expectations file explains: {table['unexplained']}",
    ]
    lines += [f"{v['version']}: {v['problem']}" for v in table["versions"] if v["problem"]]
    return "\n".join(lines) + "\n"


def page(table: MatrixTable) -> str:
    """A static HTML page: the grid, changed cells outlined with their note as a tooltip."""
    head = "".join(
        f"<th>{html.escape(v['version'])}<br><small>{html.escape(v['profile'])}</small></th>" for v in table["versions"]
    )
    body = "".join(page_row(r, [v["version"] for v in table["versions"]]) for r in table["rows"])
    return (
        f"<!doctype html><meta charset=utf-8><title>ktc matrix</title><style>{STYLE}</style>"
        f"<h1>Kafka versions x clauses</h1><table><tr><th></th>{head}</tr>{body}</table>"
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
