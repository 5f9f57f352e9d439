"""``ktc audit``'s pages, rendered last from its JSON: a text table and an HTML page (stdlib only)."""

from __future__ import annotations

import html
from typing import TypedDict

SHOWN = {"pass": "pass", "fail": "FAIL", "unknown": "unknown", None: "notice"}


class SampleData(TypedDict):
    """A violating record of a failing check (ktc/audit/engine.py: Sample)."""

    partition: int
    offset: int
    timestamp_ms: int
    detail: str


class CheckRow(TypedDict):
    """One check's result in the audit's JSON (ktc/audit/engine.py: AuditRow.as_dict)."""

    check: str
    clauses: list[str]
    kind: str
    unit: str
    describe: str
    verdict: str | None  # pass / fail / unknown; None for a notice
    checked: int | None
    violating: int | None
    reason: str
    promised: bool
    samples: list[SampleData]


class TopicFactsData(TypedDict):
    """The audited topic's facts (ktc/audit/facts.py: TopicFacts's fields)."""

    topic: str
    timestamp_type: str
    before_max_ms: int | None
    after_max_ms: int | None
    difference_max_ms: int | None
    compression_type: str
    profile: str
    read_ms: int | None
    skew_ms: int


class TopicData(TypedDict):
    """One audited topic (ktc/audit: AuditDoc) with the source ``ktc audit`` read it from."""

    topic: str
    facts: TopicFactsData
    records: int
    seconds: float
    rows: list[CheckRow]
    source: str
    failed: int


class AuditData(TypedDict):
    """The audit's JSON, as ``ktc audit`` writes audit.json."""

    bootstrap: str | None
    source: str
    seed: int
    notes: str
    topics: list[TopicData]
    failed: int
    violations: str


def verdict_text(row: CheckRow) -> str:
    word = SHOWN[row["verdict"]]
    return word if row["promised"] or row["verdict"] != "fail" else "fail*"


def count_text(row: CheckRow) -> str:
    if row["violating"] is None:
        return "-"
    return f"{row['violating']:,} of {row['checked']:,} {row['unit']}"


def topic_lines(topic: TopicData) -> list[str]:
    f = topic["facts"]
    rate = topic["records"] / topic["seconds"] if topic["seconds"] else 0.0
    lines = [
        f"topic {topic['topic']} ({f['timestamp_type']}, profile {f['profile']}, source {topic['source']}): "
        f"{topic['records']:,} records audited in {topic['seconds']:.1f} s ({rate:,.0f} records/s)"
    ]
    for row in topic["rows"]:
        lines.append(f"  {verdict_text(row):<8} {row['check']:<34} {count_text(row):<28} {', '.join(row['clauses'])}")
        lines += [f"           offset {s['partition']}:{s['offset']}  {s['detail']}" for s in row["samples"]]
        if row["reason"]:
            lines.append(f"           {row['reason']}")
    return lines


def render_text(data: AuditData) -> str:
    lines = [f"ktc audit of {data['bootstrap'] or data['source']} (seed {data['seed']}; {data['notes']})"]
    for topic in data["topics"]:
        lines += [""] + topic_lines(topic)
    lines += [
        "",
        f"{data['failed']} failing check(s) promised by the profile (fail* = a clause the profile does not "
        f"promise; Kafka departs from the KIP there); violating rows: {data['violations']}",
    ]
    return "\n".join(lines) + "\n"


def row_html(row: CheckRow) -> str:
    samples = "<br>".join(html.escape(f"{s['partition']}:{s['offset']} {s['detail']}") for s in row["samples"])
    cells = [
        verdict_text(row),
        row["check"],
        count_text(row),
        ", ".join(row["clauses"]),
        row["describe"],
        samples or html.escape(row["reason"]),
    ]
    tds = "".join(f"<td>{c if i == 5 else html.escape(c)}</td>" for i, c in enumerate(cells))
    return f'<tr class="{SHOWN[row["verdict"]].lower()}">{tds}</tr>'


def render_html(data: AuditData) -> str:
    parts = [
        "<!doctype html><meta charset=utf-8><title>ktc audit</title><style>body{font-family:sans-serif}"
        "td,th{border:1px solid #ccc;padding:4px;vertical-align:top}.fail{background:#fdd}"
        ".pass{background:#dfd}.unknown{background:#eee}</style>",
        f"<h1>ktc audit</h1><p>{html.escape(render_text(data).splitlines()[0])}</p>",
    ]
    for topic in data["topics"]:
        parts.append(
            f"<h2>{html.escape(topic_lines(topic)[0])}</h2><table><tr><th>verdict<th>check<th>violating"
            "<th>clauses<th>rule<th>samples / reason</tr>"
        )
        parts += [row_html(r) for r in topic["rows"]] + ["</table>"]
    return "\n".join(parts) + "\n"
