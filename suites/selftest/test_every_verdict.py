"""Every verdict kind of reports/verdicts.py, from a plug-in (suites/selftest/verdict_kinds.py) through a real
``ktc run``, found in results.json, summary.txt, JUnit XML and the HTML page, merged in the one order in each."""

from __future__ import annotations

import functools
import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ktc.reports import junit, results
from ktc.reports.outcomes import COLUMNS, label, outcome, targets
from ktc.reports.verdicts import ORDER, Outcome, Unknown, Validity, rank
from ktc.suites.selftest.verdict_kinds import EXPECTATIONS, KINDS, MERGES

from .reports_support import ktc, scratch

pytestmark = pytest.mark.xdist_group("every-verdict")  # one worker makes the run once
DOUBLE = "ktc.suites.selftest.verdict_kinds:EveryVerdict"


@functools.cache
def run() -> tuple[Path, str]:
    """The report directory of one ``ktc run`` of the double, and what the run printed."""
    out = scratch()
    (out / "exp.toml").write_text(EXPECTATIONS)
    done = ktc(
        "run",
        "--impl",
        DOUBLE,
        "--profile",
        "kafka-4",
        "--workers",
        "0",
        "--report",
        out / "report",
        "--expectations",
        out / "exp.toml",
        "--",
        "suites/selftest/verdict_kinds.py",
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # its fails and errors are unexpected
    return out / "report" / "latest", done.stdout


def rows() -> dict[str, dict]:
    return {r["clause"]: r for r in json.loads((run()[0] / "results.json").read_text())["rows"]}


def wanted() -> dict[str, tuple[str, str | None, bool]]:
    """Clause -> (verdict, unknown kind, expected?) as the double's tests are written to make it."""
    return {**KINDS, **{clause: (*merged, False) for clause, (_parts, merged) in MERGES.items()}}


def test_the_double_draws_every_kind_the_vocabulary_has():
    drawn = {(verdict, kind) for verdict, kind, _expected in KINDS.values()}
    assert drawn == {(v, None) for v in Validity if v != Validity.UNKNOWN} | {(Validity.UNKNOWN, k) for k in Unknown}
    assert any(expected for *_kind, expected in KINDS.values())  # and an expected failure (a known deviation)
    neighbours = [tuple(rank(*part) for part in parts) for parts, _merged in MERGES.values()]
    assert sorted(neighbours) == [(n, n + 1) for n in range(len(ORDER) - 1)]  # every step of the one order


def test_results_json_has_every_kind_and_each_merge_keeps_the_stronger():
    found = rows()
    for clause, (verdict, kind, expected) in wanted().items():
        row = found[clause]
        assert (row["verdict"], row.get("unknown")) == (verdict, kind), row
        assert (outcome(row) == Outcome.EXPECTED) == expected, row


def test_junit_carries_each_tests_verdicts_and_merged_they_are_the_results_rows():
    cases = list(ET.parse(run()[0] / "junit.xml").iter("testcase"))
    carried = [row for case in cases for row in junit.rows_of(case)]
    merged = {r["clause"]: r for r in results.merge_rows(carried)}
    assert {c: (r["verdict"], r.get("unknown")) for c, r in merged.items()} == {
        c: (r["verdict"], r.get("unknown")) for c, r in rows().items()
    }
    for clause, (parts, _merged) in MERGES.items():
        assert sorted((r["verdict"], r.get("unknown")) for r in carried if r["clause"] == clause) == sorted(parts)
    xfailed = next(c for c in cases if c.get("name") == "test_fails_as_expected[every-verdict]")
    assert xfailed.find("skipped").get("type") == "pytest.xfail"  # pytest's own outcome; the row keeps its verdict
    assert [label(r) for r in junit.rows_of(xfailed)] == ["fail (expected)"]


def test_summary_txt_says_every_rows_verdict_and_an_unknown_rows_kind():
    text = (run()[0] / "summary.txt").read_text()
    for clause, (verdict, kind, expected) in wanted().items():
        if verdict == Validity.UNSUPPORTED:
            assert re.search(r"^  unsupported +1 clauses +\(unsupported: ", text, re.M), text
            continue
        line = next(x for x in text.splitlines() if re.match(rf"  \S+ +{re.escape(clause)} ", x))
        assert line.split()[0] == verdict + "*" * expected, line
        assert kind is None or f"({kind}: " in line, line


def test_the_html_cell_of_each_clause_shows_its_merged_row():
    page = (run()[0] / "index.html").read_text()
    for clause, row in rows().items():
        cell = re.search(rf'<td class="cell ([^"]*)"[^>]*title="([^"]*): {re.escape(clause)} on every-verdict"', page)
        assert cell, clause
        assert cell.group(1) == f"v-{row['verdict']}" + " expected" * (outcome(row) == Outcome.EXPECTED), cell.group(0)
        assert html.unescape(cell.group(2)) == label(row)


def test_the_html_headline_counts_what_the_terminal_table_counts():
    directory, printed = run()
    doc = json.loads((directory / "results.json").read_text())
    lines = printed.splitlines()
    line = lines[next(n for n, x in enumerate(lines) if x.startswith("target ")) + 1]  # the one target's row
    terminal = [int(n) for n in line.split()[-len(COLUMNS) - 1 : -1]]
    assert terminal == [targets(doc)[0]["counts"][c] for c in COLUMNS], line
    headline = re.search(r'<p class="headline">(.*?)</p>', (directory / "index.html").read_text()).group(1)
    chips = dict(re.findall(r'<span class="chip [^"]*">([^<:]+): (\d+)</span>', headline))
    assert {c: int(chips[c]) for c in COLUMNS} == dict(zip(COLUMNS, terminal)), headline
    assert "does not conform: 4 unexpected failures" in headline
