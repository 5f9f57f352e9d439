"""JUnit XML from `ktc run` keeps the clause ids of every test case, also under pytest-xdist."""

import xml.etree.ElementTree as ET

import pytest

from ktc.plugin.state import ROWS_KEY

from .reports_support import mutant_run, results

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


def test_every_junit_testcase_that_ran_carries_its_clause_ids_as_properties_under_two_xdist_workers():
    run = mutant_run()
    assert results(run)["provenance"]["config"]["ktc_run"]["workers"] == "2"
    cases = [c for c in ET.parse(run / "junit.xml").getroot().iter("testcase") if c.find("skipped") is None]
    clauses = {c.get("name"): [p.get("value") for p in c.iter("property") if p.get("name") == "clause"] for c in cases}
    assert len(clauses) >= 20
    assert all("KIP-937.int64-wraparound" in ids for ids in clauses.values()), clauses


def test_junit_xml_does_not_leak_the_internal_verdict_rows():
    text = (mutant_run() / "junit.xml").read_text()
    assert ROWS_KEY not in text and "<failure" in text
