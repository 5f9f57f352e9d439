"""The HTML report's data, built before any markup: the own-profile view (one column per target, its rows
under the profile it is judged under), the cross-profile grid (every implementation x profile, compact,
for the page's script to draw on demand) and the per-row details of the side file.

An every-profile target (the reference, Spark) has one row per profile for a clause; its cell aggregates
them (the worst outcome shows, reports/outcomes.py: ``worst``; the pass count says how many of its profiles
passed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from .outcomes import EXPECTED, NOT_APPLICABLE, PASS, by_implementation, label, outcome, own_rows, targets
from .schema import Document, Row, Target

CODES = {"pass": "p", "fail": "f", "error": "e", "unknown": "u", "unsupported": "s"}
Score = tuple[int, int]  # (passed, applicable)


class ShownTarget(Target):
    """A column of the own-profile view: the target, its score and its score per KIP."""

    score: Score
    kips: dict[str, Score]


class OwnView(TypedDict):
    """The own-profile view: its columns, and each cell's rows (indexes into the document's rows)."""

    targets: list[ShownTarget]
    cells: dict[tuple[str, str], list[int]]


class Grid(TypedDict):
    """Every implementation x profile, compact: each row as [clause, column, verdict code, expected?]."""

    clauses: list[str]
    columns: list[list[str]]
    cells: list[list[int | str]]


class Details(TypedDict):
    """The side file's data: the test ids once, and each row's facts and HTML fragments."""

    tests: list[str]
    rows: list[dict[str, object]]


def clause_ids(doc: Document) -> list[str]:
    """The clauses the rows name, in the registry's order (KIP by KIP), unknown ones last."""
    info = doc.get("clauses") or {}
    seen = {r["clause"] for r in doc["rows"]}
    return sorted(seen, key=lambda c: (c not in info, (info.get(c) or {}).get("order", 0), c))


def kip_of(doc: Document, clause: str) -> str:
    return ((doc.get("clauses") or {}).get(clause) or {}).get("kip") or clause.split(".")[0]


def by_kip(doc: Document) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for clause in clause_ids(doc):
        found.setdefault(kip_of(doc, clause), []).append(clause)
    return found


def own_view(doc: Document) -> OwnView:
    """{"targets": [target + score + kips], "cells": {(clause, implementation): [row index]}}."""
    index = {id(row): n for n, row in enumerate(doc["rows"])}
    rows = by_implementation(doc)
    cells: dict[tuple[str, str], list[int]] = {}
    shown: list[ShownTarget] = []
    for target in targets(doc):
        own = own_rows(target, rows.get(target["implementation"], []))
        for row in own:
            cells.setdefault((row["clause"], row["implementation"]), []).append(index[id(row)])
        kips = {k: score([r for r in own if kip_of(doc, r["clause"]) == k]) for k in by_kip(doc)}
        shown.append({**target, "score": score(own), "kips": kips})
    return {"targets": shown, "cells": cells}


def score(rows: list[Row]) -> Score:
    """(passed, applicable): expected deviations count as not passing; unsupported rows not at all."""
    outcomes = [outcome(r) for r in rows]
    return outcomes.count(PASS), len(outcomes) - outcomes.count(NOT_APPLICABLE)


def percent(passed: int, applicable: int) -> str:
    return f"{100 * passed / applicable:.1f}%" if applicable else "–"


def grid(doc: Document) -> Grid:
    """Every row as [clause, column, verdict code, expected?], indexes into ``clauses`` and ``columns``."""
    clauses = clause_ids(doc)
    columns = sorted({(r["implementation"], r["profile"]) for r in doc["rows"]})
    at, col = {c: n for n, c in enumerate(clauses)}, {c: n for n, c in enumerate(columns)}
    cells: list[list[int | str]] = [
        [
            at[r["clause"]],
            col[(r["implementation"], r["profile"])],
            CODES.get(r["verdict"], "u"),
            int(outcome(r) == EXPECTED),
        ]
        for r in doc["rows"]
    ]
    return {"clauses": clauses, "columns": [list(c) for c in columns], "cells": cells}


def details(doc: Document, markup: Callable[[Row], dict[str, str]]) -> Details:
    """The side file's data: test ids once, and per row its facts and ``markup(row)`` (a dict of HTML
    fragments: the counterexample, the expected deviation)."""
    tests: dict[str, int] = {}
    rows = [row_detail(r, tests) | markup(r) for r in doc["rows"]]
    return {"tests": list(tests), "rows": rows}


def row_detail(row: Row, tests: dict[str, int]) -> dict[str, object]:
    facts: dict[str, object] = {
        "clause": row["clause"],
        "implementation": row["implementation"],
        "profile": row["profile"],
        "version": row.get("implementation_version"),
        "verdict": row["verdict"],
        "label": label(row),
        "examples": row.get("examples"),
        "duration": row.get("duration"),
        "seed": row.get("seed"),
        "signature": row.get("signature"),
        "reason": row.get("reason"),
        "tests": [tests.setdefault(t, len(tests)) for t in row.get("tests") or ()],
    }
    return {k: v for k, v in facts.items() if v not in (None, "", [])}
