"""results.json: one row per clause x implementation x profile, written atomically, then summary.txt.

Rows are merged from per-test contributions: a clause cited by several tests gets the strongest verdict
in the one order of reports/verdicts.py (fail > error > pass > unknown > unsupported > unknown
(unexercised)) and the sum of their examples.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .dedupe import text_signature
from .files import SCHEMA_VERSION, write_atomically
from .schema import Document, Row
from .verdicts import BAD, Validity, stronger


def merge_rows(contributions: Iterable[Row]) -> list[Row]:
    merged: dict[tuple[str, str, str], Row] = {}
    for part in contributions:
        key = (part["clause"], part["implementation"], part["profile"])
        row = merged.setdefault(
            key,
            {
                **part,
                "examples": 0,
                "tests": [],
                "duration": 0.0,
                "signatures": {},
                "signature": next(iter(_signatures(part)), None),
                "features": {},
                "decided_by": first_test(part),
            },
        )
        row["examples"] += part.get("examples") or 0
        for name, count in (part.get("features") or {}).items():
            row["features"][name] = row["features"].get(name, 0) + count
        row["duration"] = round(row["duration"] + (part.get("duration") or 0.0), 4)
        row["tests"] = sorted(set(row["tests"]) | set(part.get("tests", ())))
        for sig, count in _signatures(part).items():
            row["signatures"][sig] = row["signatures"].get(sig, 0) + count
        if stronger(part, row):
            take(row, part)
    for row in merged.values():
        if row["verdict"] != Validity.UNKNOWN or not row.get("unknown"):
            row.pop("unknown", None)
        if row["verdict"] not in BAD or not row.get("decided_by"):
            row.pop("decided_by", None)
    return sorted(merged.values(), key=lambda r: (r["implementation"], r["profile"], r["clause"]))


def take(row: Row, part: Row) -> None:
    """The stronger contribution's verdict and its evidence (the counts stay the sums)."""
    row["verdict"], row["unknown"], row["reason"] = part["verdict"], part.get("unknown", ""), part.get("reason")
    row["counterexample"], row["first_failure_at"] = part.get("counterexample"), part.get("first_failure_at")
    row["first_divergence"], row["signature"] = part.get("first_divergence"), next(iter(_signatures(part)), None)
    row["decided_by"] = first_test(part)
    if part.get("expected"):
        row["expected"] = part["expected"]
    else:
        row.pop("expected", None)


def first_test(part: Row) -> str:
    """The test a contribution came from: a fail or error row's ``decided_by``, the test its replay runs (the one
    whose reason the row shows, not merely the first of ``tests`` in sorted order)."""
    return next(iter(part.get("tests") or ()), "")


def _signatures(part: Row) -> dict[str, int]:
    """Raw failure counts per signature of one contribution (a failure without a counterexample
    is signed by its normalised reason, so an assertion or a crash is still deduplicated)."""
    if part["verdict"] not in BAD:
        return {}
    return part.get("signatures") or {part.get("signature") or text_signature(part.get("reason")): 1}


def git_sha(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def document(rows: list[Row], provenance: Mapping[str, object]) -> Document:
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "provenance": provenance,
        "rows": rows,
    }


def write(
    directory: Path,
    rows: list[Row],
    provenance: Mapping[str, object],
    attach: Callable[[Document], object] | None = None,
) -> Path:
    """Write results.json and summary.txt into ``directory``; return the results path.  ``attach(doc)``
    joins in what only upper layers know (clause texts, timelines, replays) before anything is written."""
    doc = document(rows, provenance)
    if attach is not None:
        attach(doc)
    return write_document(directory, doc)


def write_document(directory: Path, doc: Document) -> Path:
    """results.json, then summary.txt rendered from it (reports/summary.py; imported here, not at the top, so
    that the readers of this module, the ``ktc`` command among them, do not load every format on start)."""
    from .registry import Context
    from .render import render

    results = directory / "results.json"
    write_atomically(results, json.dumps(doc, indent=1, sort_keys=True))
    write_atomically(directory / "summary.txt", render("summary", doc, Context(report_dir=str(directory))))
    return results
