"""GitHub Actions annotations (format ``github``): workflow commands a job log turns into annotations.

One ``::error`` per root cause of the unexpected failures (not per row: GitHub shows only the first few
annotations of a step, and one bug reaching thirty clauses is one bug), one ``::error`` per unexpected
pass, and one ``::warning`` per target with unknown rows.  ``ktc run`` prints them when
``GITHUB_ACTIONS`` is set.  Escaping follows the workflow-command rules: ``%``, CR and LF in the
message; also ``:`` and ``,`` in a property value.
"""

from __future__ import annotations

from . import rootcause
from .outcomes import UNKNOWN, counted, outcome, unexpected_pass
from .registry import Context, renderer
from .rootcause import RootCause
from .schema import Document, Row


@renderer("github")
def render(doc: Document, context: Context) -> str:
    lines = [cause_error(g) for g in rootcause.groups(doc, context.report_dir)]
    lines += [pass_error(r) for r in doc["rows"] if unexpected_pass(r)]
    lines += unknown_warnings(doc)
    return "".join(line + "\n" for line in lines)


def command(kind: str, title: str, message: str) -> str:
    return f"::{kind} title={escape_property(title)}::{escape_data(message)}"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def cause_error(group: RootCause) -> str:
    clauses = group["clauses"]
    more = f" (+{len(clauses) - 1})" if len(clauses) > 1 else ""
    title = f"ktc {group['implementation']} fails {clauses[0]}{more}"
    message = (
        f"{counted(group['rows'], 'row')}, first divergence: {group['example'] or group['cause']}\n"
        f"clauses: {', '.join(clauses)}\nreplay: {group['replay']}"
    )
    return command("error", title, message)


def pass_error(row: Row) -> str:
    expected = row["expected"]
    return command(
        "error",
        f"ktc unexpected pass {row['clause']} on {row['implementation']}/{row['profile']}",
        f"expected {expected.get('verdict')} ({expected.get('reason')}; {expected.get('source')}) but it "
        f"passed: remove the entry from expectations/{expected.get('file')}",
    )


def unknown_warnings(doc: Document) -> list[str]:
    """Per implementation, the clauses no example decided (evidence missing, not a failure)."""
    found: dict[str, list[str]] = {}
    for row in doc["rows"]:
        if outcome(row) == UNKNOWN:
            found.setdefault(row["implementation"], []).append(f"{row['clause']} ({row['profile']})")
    return [
        command("warning", f"ktc {impl}: {counted(len(rows), 'row')} unknown", "no example decided: " + ", ".join(rows))
        for impl, rows in found.items()
    ]
