"""The end-of-run answer (format ``terminal``): one table, one row per target, then the root causes of
the unexpected failures, largest first, cut to fit a screen.

Does each implementation conform, under which profile and why that one, and if not, what to run to
see it fail: that is what a reader of ``ktc run`` wants, in a screenful.  Every row of results.json is
in summary.txt, which opens with this same table (reports/summary.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import outcomes, rootcause
from .outcomes import COLUMNS, EXPECTED, UNEXPECTED, conforms, counted, human_seconds, targets, unexpected_pass
from .registry import Context, renderer
from .rootcause import RootCause
from .schema import Document, provenance_of

HEADERS = ("target", "version", "profile (evidence)", "pass", "unexp.fail", "expected", "unknown", "n/a", "time")
NUMERIC = len(HEADERS) - 3  # the counts and the time, right-aligned
LEGEND = "unexp.fail: fail/error rows no expectation names · expected: known deviations · n/a: unsupported"
BLOCK = 3  # lines per root cause: what, where it first diverged, how to replay it


@renderer("terminal")
def render(doc: Document, context: Context) -> str:
    table = table_lines(doc, context)
    return "\n".join(table + answer_lines(doc, context, context.max_lines - len(table))) + "\n"


def title(doc: Document) -> str:
    hyp = provenance_of(doc).get("hypothesis") or {}
    count = len(targets(doc))
    return (
        f"ktc results: {counted(count, 'target')}, {len(doc['rows'])} rows; seed {hyp.get('seed')}, "
        f"Hypothesis profile {hyp.get('profile')}; {doc.get('generated_at')}"
    )


def short_version(version: str) -> str:
    """A Go pseudo-version (kfake's ``v0.0.0-20260918054303-01f206a7e32c``) as its commit date and hash, the
    parts that tell two builds apart in the 14-character column: ``260918-01f206a`` (yymmdd-hash)."""
    parts = version.split("-")
    if len(parts) == 3 and len(parts[1]) == 14 and parts[1].isdigit() and len(parts[2]) == 12:
        return f"{parts[1][2:8]}-{parts[2][:7]}"
    return version


def cells(doc: Document) -> list[list[str]]:
    """One list of cells per target, in HEADERS order; a target that did not run has three."""
    out: list[list[str]] = []
    for t in targets(doc):
        head = [t["implementation"], short_version(t.get("version") or "-")]
        if t.get("not_run"):
            out.append(head + [f"not run: {t['not_run']}"])
            continue
        profile = t["profile"] + (f" ({t['evidence']})" if t.get("evidence") else "")
        took = ("~" if t.get("duration_summed") else "") + human_seconds(t["duration_s"])
        out.append(head + [profile, *(str(t["counts"][c]) for c in COLUMNS), took])
    return out


def table_lines(doc: Document, context: Context) -> list[str]:
    """The title, the header and one line per target, fitted to ``context.width``."""
    rows = cells(doc)
    widths = column_widths(rows, context.width)
    lines = [title(doc), line(HEADERS, widths, context.width)]
    return lines + [line(r, widths, context.width) for r in rows] + [LEGEND[: context.width]]


def column_widths(rows: list[list[str]], width: int) -> list[int]:
    """Every column as wide as its widest cell (name, version and profile at most 22, 14 and 40); over
    ``width``, those three give up a character at a time, whichever has most to spare, down to 12, 7 and 24."""
    widths = [
        max([len(h)] + [len(r[i]) for r in rows if i < len(r) and (i < 2 or len(r) == len(HEADERS))])
        for i, h in enumerate(HEADERS)
    ]
    widths[:3] = min(widths[0], 22), min(widths[1], 14), min(widths[2], 40)
    while sum(widths) + 2 * (len(HEADERS) - 1) > width:
        spare = [w - floor for w, floor in zip(widths, (12, 7, 24))]
        if max(spare) <= 0:
            break
        widths[spare.index(max(spare))] -= 1
    return widths


def line(row: Sequence[str], widths: list[int], width: int) -> str:
    """Cells padded (counts right-aligned) and cut with an ellipsis; a not-run row's reason takes the rest."""
    out = [fit(row[0], widths[0]), fit(row[1], widths[1])]
    if len(row) == 3:
        return "  ".join(out + [fit(row[2], width - widths[0] - widths[1] - 4)]).rstrip()
    out.append(fit(row[2], widths[2]))
    out += [str(cell).rjust(w) for cell, w in zip(row[3:], widths[3:])]
    return "  ".join(out).rstrip()


def fit(text: str, width: int) -> str:
    return (text if len(text) <= width else text[: width - 1] + "…").ljust(width)


def answer_lines(doc: Document, context: Context, budget: int) -> list[str]:
    """Conforms (and how many expected deviations), or the root causes that fit in ``budget`` lines."""
    lines = passes_lines(doc, context) + uncollected_lines(doc, context)
    if conforms(doc):
        return lines + [conforms_line(doc)]
    if not any(t["counts"][UNEXPECTED] for t in targets(doc)):
        return lines + ["does not conform: the run is incomplete (above); no unexpected failure where it ran"]
    return lines + cause_lines(doc, context, budget - len(lines))


def conforms_line(doc: Document) -> str:
    """Yes, with how many known deviations; a target that did not run is no evidence, and is named."""
    found = targets(doc)
    expected, idle = sum(t["counts"][EXPECTED] for t in found), [t["implementation"] for t in found if t.get("not_run")]
    if found and len(idle) == len(found):
        return "nothing was judged: no target ran (pytest.log says why)"
    said = f"every failure is expected ({expected} known deviations, in summary.txt)" if expected else "no failures"
    return f"conforms where it ran: {said}; not run: {', '.join(idle)}" if idle else f"conforms: {said}"


def uncollected_lines(doc: Document, context: Context) -> list[str]:
    """Test files pytest could not collect: one line for the first, with its error, and how many more."""
    found = outcomes.collection_errors(doc)
    if not found:
        return []
    more = f" (and {len(found) - 1} more files, in pytest.log)" if len(found) > 1 else ""
    return [fit(f"not collected, so not judged: {found[0]['path']}: {found[0]['error']}{more}", context.width).rstrip()]


def passes_lines(doc: Document, context: Context) -> list[str]:
    """Expected deviations that passed (strict: each fails the run), on one line."""
    found = [f"{r['clause']} on {r['implementation']}/{r['profile']}" for r in doc["rows"] if unexpected_pass(r)]
    changed = [
        f"{r['clause']} on {r['implementation']}"
        for r in doc["rows"]
        if r["verdict"] == "pass" and (r.get("expected") or {}).get("inherited")
    ]
    undecided = [
        f"{r['clause']} on {r['implementation']}"
        for r in doc["rows"]
        if r["verdict"] == "pass" and (r.get("expected") or {}).get("undecided")
    ]
    lines = [f"{len(found)} unexpected passes (remove their expectations): " + ", ".join(found)] if found else []
    lines += (
        [
            f"{len(undecided)} expected deviations not shown by this selection (a whole run decides): "
            + ", ".join(undecided)
        ]
        if undecided
        else []
    )
    lines += (
        [
            f"{len(changed)} passes an older version's file expected to fail (a change, not a failure): "
            + ", ".join(changed)
        ]
        if changed
        else []
    )
    return [fit(line, context.width).rstrip() for line in lines]


def cause_lines(doc: Document, context: Context, budget: int) -> list[str]:
    found = rootcause.groups(doc, context.report_dir)
    failing = sum(t["counts"][UNEXPECTED] for t in targets(doc))
    shown = found[: max(1, (budget - 2) // BLOCK)]
    lines = [f"{counted(failing, 'unexpected failure')}, {counted(len(found), 'root cause')} (largest first):"]
    for n, group in enumerate(shown, 1):
        lines += cause_block(n, group, context.width)
    if len(found) > len(shown):
        lines.append(f"{len(found) - len(shown)} more in {summary_path(context)}")
    return lines


def cause_block(n: int, group: RootCause, width: int) -> list[str]:
    where = f"{n:>2}. {group['implementation']}, {counted(group['rows'], 'row')}: "
    example = (group["example"] or group["cause"]).splitlines()[0] if (group["example"] or group["cause"]) else ""
    return [
        where + listed(group["clauses"], width - len(where)),
        fit(f"    first divergence: {example}", width).rstrip(),
        f"    {group['replay']}",
    ]


def listed(names: list[str], width: int) -> str:
    """As many names as fit in ``width``, then ``+N more``."""
    out = ""
    for n, name in enumerate(names):
        more = f", +{len(names) - n} more" if n else f"+{len(names)} clauses"
        candidate = f"{out}, {name}" if out else name
        if len(candidate) + (len(more) if n < len(names) - 1 else 0) > width:
            return out + more
        out = candidate
    return out


def summary_path(context: Context) -> str:
    return f"{context.report_dir.rstrip('/')}/summary.txt" if context.report_dir else "summary.txt"
