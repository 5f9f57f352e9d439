"""results.json: one row per clause x implementation x profile, written atomically.

Rows are merged from per-test contributions: a clause cited by several tests gets the worst
verdict (reports/verdicts.py: fail > error > pass > unknown > unsupported) and the sum of their examples.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

from . import coverage, rootcause
from .dedupe import text_signature
from .files import SCHEMA_VERSION, write_atomically
from .verdicts import BAD, SHOWN, rank


def merge_rows(contributions: Iterable[dict]) -> list[dict]:
    merged: dict[tuple, dict] = {}
    for part in contributions:
        key = (part["clause"], part["implementation"], part["profile"])
        row = merged.setdefault(key, {**part, "examples": 0, "tests": [], "duration": 0.0, "signatures": {},
                                       "signature": next(iter(_signatures(part)), None), "features": {}})
        row["examples"] += part.get("examples") or 0
        for name, count in (part.get("features") or {}).items():
            row["features"][name] = row["features"].get(name, 0) + count
        row["duration"] = round(row["duration"] + (part.get("duration") or 0.0), 4)
        row["tests"] = sorted(set(row["tests"]) | set(part.get("tests", ())))
        for sig, count in _signatures(part).items():
            row["signatures"][sig] = row["signatures"].get(sig, 0) + count
        if rank(part["verdict"]) > rank(row["verdict"]):
            row.update({k: part.get(k) for k in ("verdict", "reason", "counterexample", "first_failure_at", "expected",
                                                 "first_divergence")})
            row["signature"] = next(iter(_signatures(part)), None)
    for row in merged.values():
        if row["verdict"] == "unexercised":
            row["verdict"] = "unknown"
    return sorted(merged.values(), key=lambda r: (r["implementation"], r["profile"], r["clause"]))


def _signatures(part: dict) -> dict:
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


def document(rows: list[dict], provenance: dict) -> dict:
    return {"schema_version": SCHEMA_VERSION,
            "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "provenance": provenance, "rows": rows}


def write(directory: Path, rows: list[dict], provenance: dict) -> Path:
    """Write results.json and summary.txt into ``directory``; return the results path."""
    doc = document(rows, provenance)
    results = directory / "results.json"
    write_atomically(results, json.dumps(doc, indent=1, sort_keys=True))
    write_atomically(directory / "summary.txt", summary(doc))
    return results


def summary(doc: dict) -> str:
    """Clauses x verdict, one block per implementation and profile; counts first."""
    blocks: dict[tuple, list[dict]] = {}
    for row in doc["rows"]:
        blocks.setdefault((row["implementation"], row["profile"]), []).append(row)
    lines = [f"ktc results (schema {doc['schema_version']}, {doc['generated_at']})"]
    for (impl, profile), rows in blocks.items():
        counts = {v: sum(r["verdict"] == v for r in rows) for v in SHOWN}
        lines.append(f"\n{impl} / {profile}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
        lines += [summary_line(r) for r in rows if r["verdict"] != "unsupported"]
        lines += unsupported_lines(rows)
    lines += rootcause.text(doc)
    lines += coverage.text(coverage.table(doc["rows"]), coverage.not_sent_of(doc.get("provenance") or {}))
    return "\n".join(lines) + "\n"


def summary_line(row: dict) -> str:
    expected = row.get("expected")
    verdict = row["verdict"] + ("*" if expected else "")
    note = f"expected deviation: {expected.get('reason')}" if expected else row.get("reason")
    return f"  {verdict:<11} {row['clause']:<48} {row['examples']:>6} ex" + (f"  ({note})" if note else "")


def unsupported_lines(rows: list[dict]) -> list[str]:
    """Unsupported rows folded by reason: one line each, with how many clauses it covers."""
    reasons: dict[str, int] = {}
    for row in rows:
        if row["verdict"] == "unsupported":
            reasons[row.get("reason") or "unsupported"] = reasons.get(row.get("reason") or "unsupported", 0) + 1
    return [f"  unsupported {n:>3} clauses  ({reason})" for reason, n in sorted(reasons.items())]
