"""A pull-request comment (format ``markdown``): the terminal's table as a GitHub-flavoured Markdown
table, and the largest root causes, each with its replay command, folded under a ``<details>``."""

from __future__ import annotations

from . import rootcause, terminal
from .outcomes import UNEXPECTED, conforms, counted, targets, unexpected_pass
from .registry import Context, renderer
from .schema import Document

HEADERS = (
    "target",
    "version",
    "profile (evidence)",
    "pass",
    "unexpected fail",
    "expected",
    "unknown",
    "not applicable",
    "time",
)
SHOWN = 10  # root causes listed in a comment; the rest are in summary.txt


@renderer("markdown")
def render(doc: Document, context: Context) -> str:
    lines = [f"### {headline(doc)}", "", table(doc)]
    return "\n".join(lines + causes(doc, context) + [""])


def headline(doc: Document) -> str:
    passes = sum(map(unexpected_pass, doc["rows"]))
    if conforms(doc):
        return f"ktc: {len(targets(doc))} targets conform (every failure is expected)"
    failing = sum(t["counts"][UNEXPECTED] for t in targets(doc))
    return f"ktc: {failing} unexpected failures, {passes} unexpected passes"


def table(doc: Document) -> str:
    """One row per target; a target that did not run says why in the profile column."""
    rows = [[escape(c) for c in cells] + [""] * (len(HEADERS) - len(cells)) for cells in terminal.cells(doc)]
    head = [f"| {' | '.join(HEADERS)} |", "|" + "---|" * 3 + "--:|" * (len(HEADERS) - 3)]
    return "\n".join(head + [f"| {' | '.join(r)} |" for r in rows])


def escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def causes(doc: Document, context: Context) -> list[str]:
    found = rootcause.groups(doc, context.report_dir)
    if not found:
        return []
    lines = ["", f"<details><summary>{counted(len(found), 'root cause')}, largest first</summary>", ""]
    for n, g in enumerate(found[:SHOWN], 1):
        example = (g["example"] or g["cause"] or "").splitlines()[:1] or [""]
        lines += [
            f"{n}. **{escape(g['implementation'])}**, {counted(g['rows'], 'row')}: "
            f"{', '.join(f'`{c}`' for c in g['clauses'])}  ",
            f"   first divergence: `{escape(example[0])}`  ",
            f"   `{g['replay']}`",
        ]
    if len(found) > SHOWN:
        lines.append(f"\n{len(found) - SHOWN} more in summary.txt")
    return lines + ["", "</details>"]
