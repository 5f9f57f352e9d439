"""Everything written next to results.json, and what is joined into it before it is written.

Lives in ``ktc/`` (not ``reports/``) because it joins the rows with what only upper layers know: the
clause registry's statements and quotes, the model's view of each counterexample's clocks and bounds
(``ktc.judge.timeline``), and the command that replays each failure.  ``attach`` puts them into the
results document (schema 3), so every renderer in ``reports/`` reads results.json alone.

The plugin's one call after a session is ``write_results(directory, rows, provenance)``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ktc.judge.timeline import timeline
from ktc.reports import counterexamples, render, results
from ktc.reports.counterexamples import REPLAYED, replay_line
from ktc.reports.registry import Context
from ktc.reports.schema import Document
from ktc.specs import clauses as registry


def clause_info(ids: set[str] | None = None) -> dict:
    """id -> the registry facts the reports show, with the registry's (KIP by KIP) order; only ``ids``."""
    kips = {k.id: k for k in registry.kips()}
    found = {}
    for order, c in enumerate(registry.all_clauses().values()):
        if ids is None or c.id in ids:
            kip = kips.get(c.kip)
            found[c.id] = {
                "kip": c.kip,
                "kip_title": kip.title if kip else "",
                "kip_url": kip.url if kip else "",
                "status": c.status,
                "statement": c.statement,
                "quote": c.quote,
                "quote_url": c.quote_url,
                "order": order,
            }
    return found


def attach(doc: Document) -> Document:
    """Join clause texts (``clauses``), each counterexample's ``timeline`` and each failure's ``replay``
    (its counterexample path relative to the report directory) into ``doc``; returns it."""
    prov = doc.get("provenance") or {}
    doc["clauses"] = clause_info({r["clause"] for r in doc["rows"]})
    for row in doc["rows"]:
        if row.get("counterexample"):
            row["timeline"] = timeline(row["counterexample"])
        if row["verdict"] in REPLAYED:
            row["replay"] = replay_line(row, prov)
    return doc


def write_results(directory: Path, rows: list[dict], provenance: dict) -> Path:
    """After a session: results.json (joined as above), summary.txt, counterexamples/*.json, index.html
    and its details file.  Returns the results path."""
    path = results.write(directory, rows, provenance, attach=attach)
    write_artifacts(directory, path)
    return path


def write_report(doc: dict, out: Path, report_dir: str) -> tuple[list[Path], float]:
    """Render the HTML and its details file atomically; return the paths and the seconds rendering took."""
    started = time.perf_counter()
    paths = render.write("html", doc, out, Context(report_dir=report_dir, side_name=out.stem))
    return paths, time.perf_counter() - started


def write_artifacts(directory: Path, results_path: Path) -> list[Path]:
    """counterexamples/*.json for failing rows, and index.html.  A results.json written without ``attach``
    (an older caller) is joined and written again first, so what is on disk is always schema 3 complete."""
    doc = json.loads(results_path.read_text())
    if "clauses" not in doc:
        results.write_document(directory, attach(doc))
    written = counterexamples.write_all(directory, doc)
    write_report(doc, directory / "index.html", str(directory))
    return written
