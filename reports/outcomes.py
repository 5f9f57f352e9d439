"""What a results document says per target, in the end-of-run answer's terms: one outcome per row
(pass, unexpected fail, expected, unknown, not applicable: reports/verdicts.py's ``Outcome``) and one
record per implementation under test.

The columns every renderer counts (the terminal table, summary.txt, Markdown, the HTML page's headline):
"unexpected fail" is a fail/error row without a matching expectation, "expected" a row whose
``expected`` entry names its verdict, "not applicable" an ``unsupported`` row.  A target's record comes
from ``provenance.targets`` (the plugin writes one per implementation); what a record lacks (an older
file, another writer) is inferred from the rows alone, so every renderer shows the same numbers whichever
file it is given.
"""

from __future__ import annotations

from .schema import CollectionError, Document, Expected, Provenance, Row, Target, provenance_of
from .verdicts import Outcome, Validity, outcome_rank, row_rank

PASS, UNEXPECTED, EXPECTED, UNKNOWN, NOT_APPLICABLE = (
    Outcome.PASS,
    Outcome.UNEXPECTED,
    Outcome.EXPECTED,
    Outcome.UNKNOWN,
    Outcome.NOT_APPLICABLE,
)
COLUMNS = (PASS, UNEXPECTED, EXPECTED, UNKNOWN, NOT_APPLICABLE)
EVERY_PROFILE = "every profile"


def matched(row: Row) -> bool:
    """Whether an expectations entry names the row with the verdict it has (a known deviation)."""
    return bool(row.get("expected")) and row["expected"].get("verdict") == row["verdict"]


def outcome(row: Row) -> Outcome:
    """The row's column; a fail or error an entry expected with another verdict stays unexpected."""
    if matched(row):
        return EXPECTED
    return {Validity.PASS: PASS, Validity.UNKNOWN: UNKNOWN, Validity.UNSUPPORTED: NOT_APPLICABLE}.get(
        Validity(row["verdict"]), UNEXPECTED
    )


def worst(rows: list[Row]) -> Row:
    """The row a reader must see first among several (a target's profiles of one clause, or several targets'):
    the strongest outcome (reports/verdicts.py: ``OUTCOME_ORDER``), then the strongest verdict (``ORDER``)."""
    return max(rows, key=lambda r: (outcome_rank(outcome(r)), row_rank(r)))


def label(row: Row) -> str:
    """A row's verdict in words, as JUnit's properties and the page's cells say it: ``pass``,
    ``unknown (unexercised)``, ``fail (expected)``."""
    said = row["verdict"] + (f" ({row['unknown']})" if row.get("unknown") else "")
    return said + " (expected)" if matched(row) else said


def unexpected_pass(row: Row) -> bool:
    """An expected deviation that passed: strict, it fails the run (the entry must go)."""
    return row["verdict"] == "pass" and pass_surprises(row.get("expected") or {})


def pass_surprises(entry: Expected) -> bool:
    """Whether a pass of the row this expectation entry names is a surprise that fails the run: it expected a
    failure.  Not an expected ``unknown`` (whether a run's examples reach a clause depends on its seed: a pass
    there is said), nor an entry inherited from an older version's file, nor one a partial selection cannot
    decide."""
    return (
        bool(entry) and entry.get("verdict") != "unknown" and not entry.get("inherited") and not entry.get("undecided")
    )


def counts(rows: list[Row]) -> dict[str, int]:
    """Rows per column, plus ``unexpected pass`` (also counted under ``pass``)."""
    found: dict[str, int] = dict.fromkeys(COLUMNS, 0)
    for row in rows:
        found[outcome(row)] += 1
    return {**found, "unexpected pass": sum(map(unexpected_pass, rows))}


def by_implementation(doc: Document) -> dict[str, list[Row]]:
    found: dict[str, list[Row]] = {}
    for row in doc["rows"]:
        found.setdefault(row["implementation"], []).append(row)
    return found


def names(doc: Document) -> list[str]:
    """Every implementation under test, in the order it was given (--impl), then any other the file names."""
    prov = provenance_of(doc)
    found = [i.get("name") for i in prov.get("implementations") or ()]
    found += [t.get("implementation") for t in prov.get("targets") or ()]
    return list(dict.fromkeys(n for n in found + [r["implementation"] for r in doc["rows"]] if n))


def targets(doc: Document) -> list[Target]:
    """One record per implementation under test, with ``counts`` of its rows (all its profiles) and
    ``duration_summed`` when its time is the rows' summed test time (an over-estimate), not its wall time."""
    prov, rows = provenance_of(doc), by_implementation(doc)
    records = {t.get("implementation"): t for t in prov.get("targets") or ()}
    return [target_of(name, records.get(name) or {}, rows.get(name, []), prov) for name in names(doc)]


def target_of(name: str, record: Target, rows: list[Row], prov: Provenance) -> Target:
    timed = isinstance(record.get("duration_s"), (int, float))
    return {
        "implementation": name,
        "version": version_of(name, record, rows, prov),
        "description": record.get("description") or "",
        "profile": record.get("profile") or profile_of(rows),
        "evidence": evidence_of(record),
        "not_run": record["not_run"] if "not_run" in record else not_run_of(rows),
        "duration_s": float(record["duration_s"]) if timed else summed_duration(rows),
        "duration_summed": not timed,
        "counts": counts(rows),
        "summary": record.get("summary"),
    }


def version_of(name: str, record: Target, rows: list[Row], prov: Provenance) -> str | None:
    """The record's version, else the rows', else the one ``provenance.implementations`` names."""
    if record.get("version"):
        return str(record["version"])
    found = next((r.get("implementation_version") for r in rows if r.get("implementation_version")), None)
    found = found or next((i.get("version") for i in prov.get("implementations") or () if i.get("name") == name), None)
    return str(found) if found is not None else None


def profile_of(rows: list[Row]) -> str:
    """Without a record: the one profile its judged rows have, else every profile."""
    judged = {r["profile"] for r in rows if r["verdict"] != "unsupported"} or {r["profile"] for r in rows}
    return next(iter(judged)) if len(judged) == 1 else EVERY_PROFILE


def evidence_of(record: Target) -> str:
    if record.get("evidence"):
        return str(record["evidence"])
    return "given with --profile" if record.get("requested_profile") else ""


def not_run_of(rows: list[Row]) -> str | None:
    """Without a record: a target none of whose rows saw an example, all unsupported or error for one reason."""
    if not rows:
        return "no test judged it"
    if any((r.get("examples") or 0) > 0 or r["verdict"] not in ("unsupported", "error") for r in rows):
        return None
    reasons = {r.get("reason") or r["verdict"] for r in rows}
    return reasons.pop() if len(reasons) == 1 else None


def summed_duration(rows: list[Row]) -> float:
    """Without a record: the rows' summed test time (a test citing n clauses counts n times: an over-estimate)."""
    return round(sum(r.get("duration") or 0.0 for r in rows), 1)


def own_rows(target: Target, rows: list[Row]) -> list[Row]:
    """The rows under the profile the target is judged under (all of them for an every-profile target)."""
    if target.get("profile") in (None, "", EVERY_PROFILE):
        return rows
    return [r for r in rows if r["profile"] == target["profile"]]


def conforms(doc: Document) -> bool:
    """Every failure expected, no expected deviation passing and every test file collected: the run's
    answer is yes."""
    return not collection_errors(doc) and not any(outcome(r) == UNEXPECTED or unexpected_pass(r) for r in doc["rows"])


def collection_errors(doc: Document) -> list[CollectionError]:
    """The test files pytest could not collect (``{"path", "error"}``): their tests judged nothing."""
    return list(provenance_of(doc).get("collection_errors") or ())


def counted(n: int, noun: str) -> str:
    """``1 row``, ``2 root causes``: a count and its noun, agreeing."""
    return f"{n} {noun}{'s' * (n != 1)}"


def human_seconds(seconds: float) -> str:
    """``0.4s``, ``12s``, ``4m05s``, ``2h03m``: short enough for a table column."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = int(round(seconds))
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
