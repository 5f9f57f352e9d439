"""The HTML report (format ``html``), in the manner of test262.fyi / wpt.fyi: it opens on one column per
target under the profile it is judged under, a conformance percentage and pass counts per KIP on top,
one row per clause (its statement and quote one click away); the full implementation x profile grid is
behind a toggle, drawn by the page's script from compact data.

Everything is read from the results document (clause texts, timelines and replay commands were joined in
before results.json was written).  The page is self-contained (inline CSS, JS, data; no network: a CI
artifact opened from a file); per-row details (tests, counterexamples, timelines) are in a side file,
``<side_name>.details.js``, loaded with a ``<script>`` tag on the first click, since a page opened from
file:// may not fetch().  Links to KIP texts and JIRA issues are plain anchors: nothing is loaded.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from .counterexamples import REPLAYED, located, replay_of
from .html_data import OwnView, ShownTarget, by_kip, details, grid, own_view, percent
from .html_parts import SYMBOL, deviations, failures_table, headline, legend, linked, meta, rootcause_table
from .outcomes import EXPECTED, label, outcome, worst
from .registry import Context, renderer
from .schema import ClauseInfo, Document, Expected, Provenance, Row, provenance_of
from .svg import timeline_svg

STATUSES = ("accepted", "draft", "abandoned", "under-discussion")
ASSETS = Path(__file__).with_name("assets")


@renderer("html")
def render(doc: Document, context: Context) -> str:
    """The page; its details go to ``context.files`` as ``<side_name>.details.js``."""
    view, side = own_view(doc), f"{context.side_name}.details.js"
    context.files[side] = details_script(doc, context)
    data = {"grid": grid(doc), "details": side, "targets": [t["implementation"] for t in view["targets"]]}
    return PAGE.format(
        css=(ASSETS / "report.css").read_text(),
        js=(ASSETS / "report.js").read_text(),
        meta=meta(doc),
        headline=headline(doc),
        legend=legend(),
        kip_options="".join(f"<option>{escape(k)}</option>" for k in by_kip(doc)),
        status_boxes="".join(
            f'<label><input type="checkbox" name="status" value="{s}" checked> {s}</label>' for s in STATUSES
        ),
        head=head(view),
        body=body(doc, view),
        data=script_json(data),
        deviations=deviations(doc),
        rootcauses=rootcause_table(doc, context.report_dir),
        failures=failures_table(doc["rows"]),
    )


def script_json(data: object) -> str:
    """JSON that cannot end the <script> element it sits in."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def head(view: OwnView) -> str:
    return "".join(target_head(t) for t in view["targets"])


def target_head(t: ShownTarget) -> str:
    version = escape(str(t.get("version") or ""))
    if not_run := t.get("not_run"):
        return (
            f'<th class="tgt notrun" data-target="{escape(t["implementation"])}">{escape(t["implementation"])}'
            f"<br><small>{version}</small><br><small>not run: {escape(not_run)}</small></th>"
        )
    note = " (its profiles aggregated)" if t["profile"] == "every profile" else ""
    said = [str(t.get(key)) for key in ("evidence", "summary") if t.get(key)]
    evidence = f' title="{escape(chr(10).join(said))}"' if said else ""
    return (
        f'<th class="tgt" data-target="{escape(t["implementation"])}"{evidence}>{escape(t["implementation"])}'
        f"<br><small>{version}</small><br><small>{escape(t['profile'])}{note}</small>"
        f'<br><b class="pct">{percent(*t["score"])}</b><br><small>{t["score"][0]}/{t["score"][1]} pass</small>'
        "</th>"
    )


def body(doc: Document, view: OwnView) -> str:
    clauses, out = doc.get("clauses") or {}, []
    for kip, ids in by_kip(doc).items():
        title = (clauses.get(ids[0]) or {}).get("kip_title", "")
        counts = "".join(f'<td class="kipcount">{kip_count(t, kip)}</td>' for t in view["targets"])
        out.append(
            f'<tbody data-kip="{escape(kip)}"><tr class="kiphead"><th>{escape(kip)} <span>{escape(title)} · '
            f"{len(ids)} clauses</span></th>{counts}</tr>"
        )
        out += [clause_rows(cid, clauses.get(cid) or {}, view, doc["rows"]) for cid in ids]
        out.append("</tbody>")
    return "".join(out)


def kip_count(target: ShownTarget, kip: str) -> str:
    passed, applicable = target["kips"].get(kip, (0, 0))
    return f"{passed}/{applicable}" if applicable else "–"


def clause_rows(cid: str, clause: ClauseInfo, view: OwnView, rows: list[Row]) -> str:
    """The clause's row (one cell per target) and, hidden until its name is clicked, its quote."""
    status, width = clause.get("status", "accepted"), len(view["targets"])
    cells = "".join(own_cell(cid, t, view, rows) for t in view["targets"])
    kip = clause.get("kip", cid.split(".")[0])
    return (
        f'<tr class="clause" data-kip="{escape(kip)}" data-status="{escape(status)}"'
        f' data-clause="{escape(cid)}"><th><button class="expand" title="show the clause">{escape(cid)}</button>'
        f"{'' if status == 'accepted' else f' <small class=st>{escape(status)}</small>'}</th>{cells}</tr>"
        f'<tr class="quote" data-clause="{escape(cid)}" hidden><td colspan="{width + 1}">{quote(clause)}</td></tr>'
    )


def quote(clause: ClauseInfo) -> str:
    if not clause:
        return "<p>(not in the clause registry)</p>"
    url = clause.get("quote_url") or clause.get("kip_url")
    source = f' <a href="{escape(url)}">source</a>' if url else ""
    return (
        f'<p class="statement">{escape(clause.get("statement", ""))}</p>'
        f'<blockquote>{escape(clause.get("quote", ""))}</blockquote><p class="src">{escape(clause.get("kip", ""))}'
        f" {escape(clause.get('kip_title', ''))}{source}</p>"
    )


def own_cell(cid: str, target: ShownTarget, view: OwnView, rows: list[Row]) -> str:
    found = view["cells"].get((cid, target["implementation"]))
    if not found:
        return '<td class="cell v-none" title="no row under this profile (or the target did not run)">·</td>'
    return cell_html(found, [rows[n] for n in found], cid, target["implementation"])


def cell_html(indexes: list[int], rows: list[Row], cid: str, impl: str) -> str:
    """A cell of the own-profile view: the row a reader must see first (reports/outcomes.py: ``worst``), and
    the rows it opens (``data-rows``)."""
    shown = worst(rows)
    verdict, expected = shown["verdict"], outcome(shown) == EXPECTED
    count = f" <small>{sum(r['verdict'] == 'pass' for r in rows)}/{len(rows)}</small>" if len(rows) > 1 else ""
    tip = f"{label(shown)}: {cid} on {impl}"
    return (
        f'<td class="cell v-{verdict}{" expected" if expected else ""}" data-rows="{" ".join(map(str, indexes))}" '
        f'tabindex="0" title="{escape(tip)}">{SYMBOL.get(verdict, "?")}{count}</td>'
    )


def details_script(doc: Document, context: Context) -> str:
    prov = provenance_of(doc)
    data = details(doc, lambda row: markup(row, prov, context.report_dir))
    return f"window.KTC_DETAILS = {script_json(data)};\n"


def markup(row: Row, provenance: Provenance, report_dir: str | None) -> dict[str, str]:
    """A row's HTML fragments for the side file: its known deviation, its counterexample and replay."""
    found: dict[str, str] = {}
    if row.get("expected"):
        found["expected_html"] = expected_html(row["expected"])
    if row.get("counterexample") or row["verdict"] in REPLAYED:
        found["counterexample"] = counterexample_html(row, provenance, report_dir)
    return found


def expected_html(entry: Expected) -> str:
    return (
        f'<p class="exp">expected deviation ({escape(entry.get("file") or "")}): '
        f"{escape(entry.get('verdict') or '')}"
        f" — {escape(entry.get('reason') or '')} — {linked(entry.get('source'))}</p>"
    )


def counterexample_html(row: Row, provenance: Provenance, report_dir: str | None) -> str:
    """The minimal counterexample (mismatch, timeline, history) and the command that replays the row."""
    parts: list[str] = []
    cx = row.get("counterexample")
    if cx:
        m = cx.get("mismatch") or {}
        parts += [
            f'<h3>Minimal counterexample</h3><p class="mismatch">op #{escape(str(m.get("op_index")))}: '
            f"{escape(str(m.get('what')))}: expected <code>{escape(str(m.get('expected')))}</code>, observed "
            f"<code>{escape(str(m.get('observed')))}</code></p>"
        ]
        parts += [timeline_svg(row["timeline"])] if "timeline" in row else []
    parts.append(f'<h3>Replay</h3><pre class="replay">{escape(located(replay_of(row, provenance), report_dir))}</pre>')
    if cx:
        history = escape(json.dumps(cx.get("history")))
        parts.append(f"<details><summary>history JSON</summary><pre>{history}</pre></details>")
    return "".join(parts)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ktc conformance report</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{css}</style></head>
<body data-ready="0">
<header><h1>ktc conformance report</h1><p class="meta">{meta}</p><p class="headline">{headline}</p>
<p class="legend">{legend}</p></header>
<section id="filters">KIP <select id="kip"><option value="">all</option>{kip_options}</select>
<span class="statuses">status {status_boxes}</span>
<label><input type="checkbox" id="onlybad"> only clauses with a non-pass cell</label>
<label><input type="checkbox" id="cross"> every implementation x profile</label> <span id="shown"></span></section>
<main><div class="matrix-wrap"><p class="how">One column per target, judged under its own profile; a target
judged under every profile (the reference, Spark) has one cell per clause aggregating its profiles: the worst
outcome shows, with how many profiles passed.  Conformance: passing rows over rows that apply (known deviations
count as not passing).  Click a clause for its text, a cell for its evidence.</p>
<table id="own"><thead><tr><th>clause</th>{head}</tr></thead>{body}</table>
<div id="crosswrap" hidden></div></div>
<aside id="detail" hidden></aside></main>
<section id="deviations"><h2>Known deviations (expected failures, from expectations files)</h2>{deviations}</section>
<section id="rootcauses">
<h2>Root causes (unexpected failures grouped by their history's first divergence, largest first)</h2>
{rootcauses}</section>
<section id="failures"><h2>Distinct failures (deduplicated by clause and signature)</h2>{failures}</section>
<script>window.KTC = {data};</script>
<script>{js}</script>
</body></html>
"""
