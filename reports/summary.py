"""summary.txt (format ``summary``): the terminal's table first, then everything the terminal cuts.

It opens with exactly the table ``ktc run`` prints (reports/terminal.py), so the two never disagree;
then every root cause, then each target's line on how it was judged (its clock, leader moves), then
clauses x verdict per implementation and profile (``unsupported`` rows folded into one line per reason,
expected deviations marked ``fail*``, unknown rows with their kind), then which input features reached
which implementation.
"""

from __future__ import annotations

from . import coverage, outcomes, rootcause, terminal
from .registry import Context, renderer
from .schema import Document, Row, provenance_of
from .verdicts import SHOWN


@renderer("summary")
def render(doc: Document, context: Context) -> str:
    lines = terminal.table_lines(doc, context) + terminal.passes_lines(doc, context)
    lines += rootcause.text(doc, context.report_dir) + how_judged(doc) + blocks(doc)
    lines += coverage.text(coverage.table(doc["rows"]), coverage.not_sent_of(provenance_of(doc)))
    return "\n".join(lines) + "\n"


def how_judged(doc: Document) -> list[str]:
    """Each target's one line on how it was judged (a broker's clock, retention passes, leader moves and the
    clock skew measured), as its family words it."""
    lines = [f"  {t['implementation']}: {t['summary']}" for t in outcomes.targets(doc) if t.get("summary")]
    return ["", "how each target was judged:", *lines] if lines else []


def blocks(doc: Document) -> list[str]:
    """Clauses x verdict, one block per implementation and profile; counts first."""
    found: dict[tuple[str, str], list[Row]] = {}
    for row in doc["rows"]:
        found.setdefault((row["implementation"], row["profile"]), []).append(row)
    lines = []
    for (impl, profile), rows in found.items():
        counts = {v: sum(r["verdict"] == v for r in rows) for v in SHOWN}
        lines.append(f"\n{impl} / {profile}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
        lines += [summary_line(r) for r in rows if r["verdict"] != "unsupported"]
        lines += unsupported_lines(rows)
    return lines


def summary_line(row: Row) -> str:
    """One row: its verdict (``*``: an expectations file names it), clause, examples and why; an unknown row
    says its kind (reports/verdicts.py: ``Unknown``) before its reason."""
    expected = row.get("expected")
    verdict = row["verdict"] + ("*" if expected else "")
    note = f"expected deviation: {expected.get('reason')}" if expected else row.get("reason")
    if row.get("unknown") and not expected:
        note = f"{row['unknown']}: {note}" if note else row["unknown"]
    return f"  {verdict:<11} {row['clause']:<48} {row.get('examples') or 0:>6} ex" + (f"  ({note})" if note else "")


def unsupported_lines(rows: list[Row]) -> list[str]:
    """Unsupported rows folded by reason: one line each, with how many clauses it covers."""
    reasons: dict[str, int] = {}
    for row in rows:
        if row["verdict"] == "unsupported":
            reasons[row.get("reason") or "unsupported"] = reasons.get(row.get("reason") or "unsupported", 0) + 1
    return [f"  unsupported {n:>3} clauses  ({reason})" for reason, n in sorted(reasons.items())]
