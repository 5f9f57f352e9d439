"""Everything written next to results.json: counterexample files and the HTML report.

Lives in ``ktc/`` (not ``reports/``) because it joins the rows with what only upper layers know:
the clause registry's statements and quotes, and the model's view of each counterexample's
clocks and bounds (``ktc.judge.timeline``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from ktc.judge.timeline import timeline
from reports import counterexamples, html
from reports.files import write_atomically
from specs import clauses as registry


def clause_info() -> dict:
    """id -> the registry facts the report shows, in registry (KIP) order."""
    titles = {k.id: k.title for k in registry.kips()}
    return {c.id: {"kip": c.kip, "kip_title": titles.get(c.kip, ""), "status": c.status,
                   "statement": c.statement, "quote": c.quote} for c in registry.all_clauses().values()}


def timelines(doc: dict) -> dict:
    return {(r["clause"], r["implementation"], r["profile"]): timeline(r["counterexample"])
            for r in doc["rows"] if r.get("counterexample")}


def render_html(doc: dict, counterexample_dir: str) -> str:
    return html.render(doc, clause_info(), timelines(doc), counterexample_dir)


def write_report(doc: dict, out: Path, counterexample_dir: str) -> tuple[Path, float]:
    """Render and write the HTML atomically; return its path and the seconds rendering took."""
    started = time.perf_counter()
    text = render_html(doc, counterexample_dir)
    write_atomically(out, text)
    return out, time.perf_counter() - started


def write_artifacts(directory: Path, results_path: Path) -> list[Path]:
    """After a run: counterexamples/*.json for failing rows, and index.html."""
    doc = json.loads(results_path.read_text())
    written = counterexamples.write_all(directory, doc)
    write_report(doc, directory / "index.html", str(directory / "counterexamples"))
    return written
