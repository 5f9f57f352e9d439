"""The HTML report's smaller sections: the provenance line, the headline (the terminal's answer and
counts), the cell legend, the known deviations with their sources linked, the root causes and the
deduplicated failures."""

from __future__ import annotations

import re
from html import escape

from . import rootcause
from .dedupe import groups
from .outcomes import (
    COLUMNS,
    EXPECTED,
    NOT_APPLICABLE,
    PASS,
    UNEXPECTED,
    UNKNOWN,
    collection_errors,
    conforms,
    counted,
    matched,
    targets,
)
from .rootcause import RootCause
from .schema import Document, Row, provenance_of
from .terminal import conforms_line
from .verdicts import Validity

LINKS = re.compile(r"\b(https?://[^\s;,)<>\"']+)|\b(KAFKA-\d+)\b")  # a URL, or a JIRA issue
JIRA_BASE = "https://issues.apache.org/jira/browse/"
SYMBOL: dict[str, str] = {
    Validity.PASS: "✓",
    Validity.FAIL: "✗",
    Validity.ERROR: "!",
    Validity.UNKNOWN: "?",
    Validity.UNSUPPORTED: "–",
}
CHIP = {
    PASS: "v-pass",
    UNEXPECTED: "v-fail",
    EXPECTED: "v-fail expected",
    UNKNOWN: "v-unknown",
    NOT_APPLICABLE: "v-unsupported",
}  # a column's colours: those of the cells it counts


def meta(doc: Document) -> str:
    p = provenance_of(doc)
    impls = ", ".join(f"{i.get('name')} {i.get('version')}" for i in p.get("implementations", []))
    hyp = p.get("hypothesis") or {}
    return escape(
        f"generated {doc.get('generated_at')} · ktc {str(p.get('ktc_git_sha') or '?')[:10]} · "
        f"implementations: {impls} · profiles: {', '.join(p.get('profiles', []))} · Hypothesis "
        f"{hyp.get('version')} profile {hyp.get('profile')} seed {hyp.get('seed')}"
    )


def headline(doc: Document) -> str:
    """What the terminal says at the end of the run: its answer, and its table's columns summed over the
    targets (reports/outcomes.py: ``counts``); a known deviation is counted as expected, not as a failure."""
    found = targets(doc)
    total = {column: sum(t["counts"][column] for t in found) for column in COLUMNS}
    if conforms(doc):
        answer = f'<span class="chip v-pass answer">✓ {escape(conforms_line(doc))}</span>'
    else:
        why = [
            counted(n, noun)
            for n, noun in (
                (total[UNEXPECTED], "unexpected failure"),
                (sum(t["counts"]["unexpected pass"] for t in found), "unexpected pass"),
                (len(collection_errors(doc)), "test file not collected"),
            )
            if n
        ]
        answer = f'<span class="chip v-fail answer">✗ does not conform: {escape(", ".join(why))}</span>'
    return answer + "".join(
        f'<span class="chip {CHIP[c] if total[c] else "zero"}">{escape(c)}: {total[c]}</span>' for c in COLUMNS
    )


def legend() -> str:
    """What a cell's symbol says (a hatched cell is a known deviation)."""
    return " ".join(f"{symbol} {verdict}" for verdict, symbol in SYMBOL.items()) + " · hatched: expected deviation"


def linked(source: str | None) -> str:
    """A deviation's source with its JIRA issues and URLs as links (escaped text otherwise)."""
    text, out, at = source or "no source", [], 0
    for m in LINKS.finditer(text):
        out += [
            escape(text[at : m.start()]),
            f'<a href="{escape(m.group(1) or JIRA_BASE + m.group(2))}">{escape(m.group(0))}</a>',
        ]
        at = m.end()
    return "".join(out) + escape(text[at:])


def deviations(doc: Document) -> str:
    """Every row an expectations entry names, with its reason and source."""
    rows = [r for r in doc["rows"] if r.get("expected")]
    if not rows:
        return "<p>None: no expectations file names a row of this run.</p>"
    body = "".join(
        f'<tr class="{"" if matched(r) else "unmatched"}"><td>{escape(r["implementation"])}</td>'
        f"<td>{escape(r['profile'])}</td>"
        f"<td>{escape(r['clause'])}</td><td>{escape(r['expected'].get('verdict') or '')} → {escape(r['verdict'])}</td>"
        f"<td>{escape(r['expected'].get('reason') or '')}</td><td>{linked(r['expected'].get('source'))}</td></tr>"
        for r in rows
    )
    return (
        '<table class="dedupe"><tr><th>target</th><th>profile</th><th>clause</th><th>expected → got</th>'
        f"<th>reason</th><th>source</th></tr>{body}</table>"
    )


def rootcause_table(doc: Document, report_dir: str | None) -> str:
    found = rootcause.groups(doc, report_dir)
    if not found:
        return "<p>No unexpected failures.</p>"
    return (
        '<table class="dedupe"><tr><th>rows</th><th>implementation</th><th>first divergence</th><th>clauses</th>'
        f"<th>replay</th></tr>{''.join(rootcause_row(g) for g in found)}</table>"
    )


def rootcause_row(g: RootCause) -> str:
    explains = f"<br><small>made unknown: {escape(', '.join(g['explains']))}</small>" if g["explains"] else ""
    return (
        f"<tr><td>{g['rows']}</td><td>{escape(g['implementation'])}</td><td><code>{escape(g['cause'])}</code>"
        f"<br><small>{escape(g['example'])}</small></td><td>{escape(', '.join(g['clauses']))}{explains}</td>"
        f"<td><code>{escape(g['replay'])}</code></td></tr>"
    )


def failures_table(rows: list[Row]) -> str:
    found = groups(rows)
    if not found:
        return "<p>No failures.</p>"
    lines = "".join(
        f"<tr><td>{g['raw']}</td><td>{escape(g['clause'])}</td><td><code>{g['signature']}</code></td>"
        f"<td>{escape(', '.join(sorted(set(g['cells']))))}</td><td>{escape(str(g['what']))}</td></tr>"
        for g in found
    )
    return (
        '<table class="dedupe"><tr><th>raw failures</th><th>clause</th><th>signature</th><th>cells</th>'
        f"<th>mismatch</th></tr>{lines}</table>"
    )
