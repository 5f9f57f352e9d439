"""One self-contained HTML page for a results document: the clause x (implementation/profile)
matrix grouped by KIP, filters, and a drill-down per cell.

Self-contained on purpose: it is a CI artifact opened from a file or an air-gapped mirror, so
CSS, JS and the timeline SVGs are all inline and nothing is fetched.  The ``reports`` layer knows
no rules, so clause texts (``clauses``) and timeline numbers (``timelines``) are handed in.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

from . import rootcause
from .counterexamples import file_name, replay_command, spec_of
from .dedupe import groups
from .svg import timeline_svg

SYMBOL = {"pass": "✓", "fail": "✗", "error": "!", "unknown": "?", "unsupported": "–"}
STATUSES = ("accepted", "draft", "abandoned", "under-discussion")
ASSETS = Path(__file__).with_name("assets")


def columns(rows: list[dict]) -> list[tuple[str, str]]:
    return sorted({(r["implementation"], r["profile"]) for r in rows})


def clause_order(rows: list[dict], clauses: dict) -> list[str]:
    """Registry order first (KIP by KIP), then any clause the rows name that the registry lacks."""
    seen = {r["clause"] for r in rows}
    return [c for c in clauses if c in seen] + sorted(seen - clauses.keys())


def render(doc: dict, clauses: dict, timelines: dict, counterexample_dir: str = "counterexamples") -> str:
    """``clauses``: id -> {kip, kip_title, status, statement, quote}; ``timelines``: (clause, impl,
    profile) -> timeline data or None."""
    rows, cols = doc["rows"], columns(doc["rows"])
    cells = {(r["clause"], r["implementation"], r["profile"]): r for r in rows}
    details, body = [], []
    kips: dict[str, list[str]] = {}
    for cid in clause_order(rows, clauses):
        kips.setdefault(clauses.get(cid, {}).get("kip", cid.split(".")[0]), []).append(cid)
    for kip, ids in kips.items():
        title = clauses.get(ids[0], {}).get("kip_title", "")
        body.append(
            f'<tbody data-kip="{escape(kip)}"><tr class="kiphead" data-kip="{escape(kip)}">'
            f'<th colspan="{len(cols) + 2}">{escape(kip)} <span>{escape(title)} · {len(ids)} clauses</span></th></tr>'
        )
        for cid in ids:
            body.append(clause_row(cid, clauses.get(cid, {}), cols, cells, details, doc, timelines, counterexample_dir))
        body.append("</tbody>")
    head = "".join(f'<th class="col">{escape(i)}<br><small>{escape(p)}</small></th>' for i, p in cols)
    return PAGE.format(
        css=(ASSETS / "report.css").read_text(), js=(ASSETS / "report.js").read_text(),
        meta=meta(doc), legend=legend(rows), kip_options="".join(f'<option>{escape(k)}</option>' for k in kips),
        status_boxes="".join(f'<label><input type="checkbox" name="status" value="{s}" checked> {s}</label>'
                             for s in STATUSES),
        head=head, body="".join(body), details="".join(details), failures=failures_table(rows),
        rootcauses=rootcause_table(doc, counterexample_dir))


def clause_row(cid, clause, cols, cells, details, doc, timelines, cx_dir) -> str:
    status = clause.get("status", "accepted")
    out = [
        f'<tr class="clause" data-kip="{escape(clause.get("kip", cid.split(".")[0]))}" data-status="{escape(status)}">'
        f'<th title="{escape(clause.get("statement", ""))}">{escape(cid)}</th>'
        f'<td class="st st-{escape(status)}">{escape(status)}</td>'
    ]
    for impl, profile in cols:
        row = cells.get((cid, impl, profile))
        if row is None:
            out.append('<td class="cell v-none" title="not run: the clause does not hold in this profile">·</td>')
            continue
        did = f"d{len(details)}"
        details.append(detail(did, row, clause, doc, timelines.get((cid, impl, profile)), cx_dir))
        known = " expected" if row.get("expected") else ""
        out.append(f'<td class="cell v-{row["verdict"]}{known}" data-detail="{did}" tabindex="0" '
                   f'title="{escape(row["verdict"])}{known and " (expected deviation)"}: {escape(cid)} on '
                   f'{escape(impl)}/{escape(profile)}">{SYMBOL.get(row["verdict"], "?")}</td>')
    return "".join(out) + "</tr>"


def detail(did: str, row: dict, clause: dict, doc: dict, timeline, cx_dir: str) -> str:
    facts = [
        ("verdict", row["verdict"]),
        ("examples", row.get("examples")),
        ("duration", f"{row.get('duration', 0)} s"),
        ("seed", row.get("seed")),
        ("signature", row.get("signature")),
        ("reason", row.get("reason")),
        ("expected deviation", expected_text(row.get("expected"))),
    ]
    parts = [f'<template id="{did}"><h2>{escape(row["clause"])} <small>on {escape(row["implementation"])} '
             f'{escape(str(row.get("implementation_version") or ""))} / {escape(row["profile"])}</small></h2>',
             f'<p class="statement">{escape(clause.get("statement", "(not in the clause registry)"))}</p>',
             f'<blockquote>{escape(clause.get("quote", ""))}</blockquote>']
    cx = row.get("counterexample")
    if cx:
        m = cx.get("mismatch", {})
        spec = spec_of(row["implementation"], doc.get("provenance", {}))
        parts += [
            f'<h3>Minimal counterexample</h3><p class="mismatch">op #{escape(str(m.get("op_index")))}: '
            f"{escape(str(m.get('what')))}: expected <code>{escape(str(m.get('expected')))}</code>, observed "
            f"<code>{escape(str(m.get('observed')))}</code></p>",
            timeline_svg(timeline),
            f'<h3>Replay</h3><pre class="replay">{escape(replay_command(f"{cx_dir}/{file_name(row)}", spec))}</pre>',
            "<details><summary>history JSON</summary>"
            f"<pre>{escape(json.dumps(cx.get('history'), indent=1))}</pre></details>",
        ]
    parts += [
        "<dl>",
        "".join(f"<dt>{k}</dt><dd>{escape(str(v))}</dd>" for k, v in facts if v not in (None, "")),
        "</dl>",
        f"<details><summary>{len(row.get('tests', []))} tests</summary><ul>",
        "".join(f"<li><code>{escape(t)}</code></li>" for t in row.get("tests", [])),
        "</ul></details>",
    ]
    return "".join(parts) + "</template>"


def expected_text(entry) -> str | None:
    if not entry:
        return None
    return f'{entry.get("verdict")}: {entry.get("reason")} ({entry.get("source") or "no source"}; {entry.get("file")})'


def meta(doc: dict) -> str:
    p = doc.get("provenance", {})
    impls = ", ".join(f'{i.get("name")} {i.get("version")}' for i in p.get("implementations", []))
    hyp = p.get("hypothesis", {})
    return escape(f'generated {doc.get("generated_at")} · ktc {str(p.get("ktc_git_sha") or "?")[:10]} · '
                  f'implementations: {impls} · profiles: {", ".join(p.get("profiles", []))} · Hypothesis '
                  f'{hyp.get("version")} profile {hyp.get("profile")} seed {hyp.get("seed")}')


def legend(rows: list[dict]) -> str:
    return "".join(f'<span class="chip v-{v}">{SYMBOL[v]} {v}: {sum(r["verdict"] == v for r in rows)}</span>'
                   for v in ("pass", "fail", "error", "unknown", "unsupported"))


def rootcause_table(doc: dict, cx_dir: str) -> str:
    found = rootcause.groups(doc, cx_dir)
    if not found:
        return "<p>No unexpected failures.</p>"
    return ('<table class="dedupe"><tr><th>rows</th><th>implementation</th><th>first divergence</th><th>clauses</th>'
            f'<th>replay</th></tr>{"".join(rootcause_row(g) for g in found)}</table>')


def rootcause_row(g: dict) -> str:
    explains = f'<br><small>made unknown: {escape(", ".join(g["explains"]))}</small>' if g["explains"] else ""
    return (f'<tr><td>{g["rows"]}</td><td>{escape(g["implementation"])}</td><td><code>{escape(g["cause"])}</code>'
            f'<br><small>{escape(g["example"])}</small></td><td>{escape(", ".join(g["clauses"]))}{explains}</td>'
            f'<td><code>{escape(g["replay"])}</code></td></tr>')


def failures_table(rows: list[dict]) -> str:
    found = groups(rows)
    if not found:
        return "<p>No failures.</p>"
    lines = "".join(f'<tr><td>{g["raw"]}</td><td>{escape(g["clause"])}</td><td><code>{g["signature"]}</code></td>'
                    f'<td>{escape(", ".join(sorted(set(g["cells"]))))}</td><td>{escape(str(g["what"]))}</td></tr>'
                    for g in found)
    return ('<table class="dedupe"><tr><th>raw failures</th><th>clause</th><th>signature</th><th>cells</th>'
            f'<th>mismatch</th></tr>{lines}</table>')


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ktc conformance report</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{css}</style></head>
<body data-ready="0">
<header><h1>ktc conformance report</h1><p class="meta">{meta}</p><p class="legend">{legend}</p></header>
<section id="filters">KIP <select id="kip"><option value="">all</option>{kip_options}</select>
<span class="statuses">status {status_boxes}</span>
<label><input type="checkbox" id="onlybad"> only clauses with a non-pass cell</label> <span id="shown"></span></section>
<main><div class="matrix-wrap">
<table id="matrix"><thead><tr><th>clause</th><th>status</th>{head}</tr></thead>{body}</table></div>
<aside id="detail" hidden></aside></main>
<section id="rootcauses">
<h2>Root causes (failures grouped by their history's first divergence, largest first)</h2>{rootcauses}</section>
<section id="failures"><h2>Distinct failures (deduplicated by clause and signature)</h2>{failures}</section>
<div hidden>{details}</div>
<script>{js}</script>
</body></html>
"""
