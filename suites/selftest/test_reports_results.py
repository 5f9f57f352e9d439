"""results.json schema 3: seed, duration, signatures, provenance config, clause texts, timelines and
replay commands joined in before it is written; and deduplication."""

import pytest

from ktc.reports import counterexamples, dedupe
from ktc.reports.files import SCHEMA_VERSION
from ktc.reports.results import merge_rows

from .reports_support import MUTANT, ktc, mutant_run, results

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


def cx(what: str, op_type: str = "Produce", op_index: int = 1) -> dict:
    ops = [{"type": "CreateTopic"}] + [{"type": op_type}] * 3
    return {"history": {"ops": ops}, "mismatch": {"op_index": op_index, "what": what}}


def test_rows_carry_seed_duration_and_a_signature_for_failures():
    doc = results(mutant_run())
    assert doc["schema_version"] == SCHEMA_VERSION == 3
    rows = doc["rows"]
    assert all(isinstance(r["seed"], int) and r["duration"] >= 0 for r in rows)
    failed = [r for r in rows if r["verdict"] == "fail"]
    assert failed and all(len(r["signature"]) == 12 and sum(r["signatures"].values()) >= 1 for r in failed)
    assert all(r["signature"] is None for r in rows if r["verdict"] == "pass")


def test_clause_texts_timelines_and_replay_commands_are_in_the_file():
    doc = results(mutant_run())
    assert {r["clause"] for r in doc["rows"]} == set(doc["clauses"])
    clause = doc["clauses"]["KIP-937.int64-wraparound"]
    assert clause["kip"] == "KIP-937" and clause["quote"] and clause["statement"] and clause["kip_title"]
    failed = [r for r in doc["rows"] if r["verdict"] == "fail"]
    assert all(r["timeline"]["produces"] for r in failed)
    assert all(
        r["replay"].startswith("ktc replay counterexamples/KIP-937.int64-wraparound--exact_arithmetic--")
        and r["replay"].endswith(f"--impl {MUTANT}")
        for r in failed
    )
    assert not any("replay" in r for r in doc["rows"] if r["verdict"] == "pass")


def test_provenance_records_the_run_configuration_and_how_to_load_the_implementation():
    prov = results(mutant_run())["provenance"]
    assert prov["config"]["ktc_run"]["profile"] == "kafka-4"
    assert "--junitxml" in prov["config"]["pytest_args"]
    assert prov["implementations"][0]["spec"] == MUTANT
    assert prov["hypothesis"]["max_examples"] > 0


def test_two_shrinks_of_one_bug_share_a_signature():
    a = cx("record 0 (ts=-9223372036854775808, now=1760000000000) rejected", op_index=1)
    b = cx("record 3 (ts=-9223372036854775807, now=1700000000000) rejected", op_index=2)
    assert dedupe.signature(a) == dedupe.signature(b)


def test_different_mismatch_kinds_or_operations_keep_different_signatures():
    base = cx("record 0 (ts=5, now=1) rejected")
    assert dedupe.signature(base) != dedupe.signature(cx("base_offset"))
    assert dedupe.signature(base) != dedupe.signature(cx("record 0 (ts=5, now=1) rejected", op_type="Fetch"))


def test_merging_sums_durations_and_counts_raw_failures_per_signature():
    part = {"clause": "C", "implementation": "i", "profile": "p", "examples": 1, "tests": ["t1"]}
    rows = merge_rows(
        [
            {**part, "verdict": "pass", "duration": 0.5},
            {**part, "verdict": "fail", "duration": 0.25, "signature": "aaa", "signatures": {"aaa": 2}},
            {**part, "verdict": "fail", "duration": 0.25, "signature": "bbb", "signatures": {"bbb": 1}},
        ]
    )
    assert rows[0]["duration"] == 1.0 and rows[0]["signature"] == "aaa"
    assert rows[0]["signatures"] == {"aaa": 2, "bbb": 1}
    assert [(g["signature"], g["raw"]) for g in dedupe.groups(rows)] == [("aaa", 2), ("bbb", 1)]


def test_a_failing_row_replays_the_test_whose_reason_it_shows_not_the_first_in_sorted_order():
    part = {"clause": "C", "implementation": "i", "profile": "p", "examples": 1, "verdict": "fail"}
    rows = merge_rows(
        [
            {**part, "verdict": "pass", "tests": ["t[a-pass]"]},
            {**part, "tests": ["t[none]"], "reason": "offset 0 (none)"},
            {**part, "tests": ["t[gzip]"], "reason": "offset 4 (gzip)"},
        ]
    )
    assert rows[0]["tests"] == ["t[a-pass]", "t[gzip]", "t[none]"] and rows[0]["reason"] == "offset 0 (none)"
    assert rows[0]["decided_by"] == "t[none]"
    assert counterexamples.replay_line(rows[0], {}).startswith("pytest 't[none]' --impl i")
    assert "decided_by" not in merge_rows([{**part, "verdict": "pass", "tests": ["t"]}])[0]


def test_failures_command_prints_each_distinct_failure_once_with_its_raw_count():
    done = ktc("failures", mutant_run() / "results.json")
    assert done.returncode == 0
    lines = [line for line in done.stdout.splitlines() if "KIP-937.int64-wraparound" in line]
    assert len(lines) == 1 and int(lines[0].split("x")[0]) >= 2, done.stdout
