"""Expectations, baseline gating and `ktc diff`: CI fails only on what is new."""

import json
import tomllib

import pytest

from .reports_support import MUTANT, QUICK, ktc, mutant_run, reference_run, scratch

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


def run_gated(*gate_args):
    out = scratch() / "gated"
    return ktc("run", "--impl", MUTANT, "--report", out, "--workers", "0", *gate_args, *QUICK)


def updated_expectations(tmp_path, old_text=None):
    out = tmp_path / "exact.toml"
    if old_text is not None:
        out.write_text(old_text)
    done = ktc("expectations", "update", mutant_run() / "results.json", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_expectations_update_writes_one_entry_per_failing_row_with_a_todo_reason(tmp_path):
    data = tomllib.loads(updated_expectations(tmp_path).read_text())
    assert data["implementation"] == "exact_arithmetic" and data["version"] == "mutant"
    assert [(e["clause"], e["profile"], e["verdict"], e["reason"]) for e in data["expect"]] == [
        ("KIP-937.int64-wraparound", "kafka-4", "fail", "TODO: explain")
    ]


def test_expectations_update_keeps_the_reasons_and_sources_of_the_old_file(tmp_path):
    old = (
        'schema_version = 1\nimplementation = "exact_arithmetic"\n\n[[expect]]\nclause = "KIP-937.int64-wraparound"\n'
        'profile = "kafka-4"\nverdict = "fail"\nreason = "exact longs"\nsource = "https://bugs.example/1"\n'
    )
    entry = tomllib.loads(updated_expectations(tmp_path, old).read_text())["expect"][0]
    assert (entry["reason"], entry["source"]) == ("exact longs", "https://bugs.example/1")


def test_a_run_whose_failures_are_all_expected_exits_0(tmp_path):
    done = run_gated("--expectations", updated_expectations(tmp_path))
    assert done.returncode == 0, done.stdout[-1500:]
    assert "0 new failures, 0 unexpected passes, 1 expected failures" in done.stdout


def test_an_expected_failure_that_passes_fails_the_run_as_an_unexpected_pass(tmp_path):
    path = updated_expectations(tmp_path)
    path.write_text(
        path.read_text() + '\n[[expect]]\nclause = "KIP-937.after-bound"\nprofile = "kafka-4"\n'
        'verdict = "fail"\nreason = "thought broken"\nsource = ""\n'
    )
    done = run_gated("--expectations", path)
    assert done.returncode == 1
    assert "UNEXPECTED PASS  KIP-937.after-bound on exact_arithmetic/kafka-4" in done.stdout


def test_a_baseline_that_already_failed_the_same_rows_lets_the_run_pass():
    done = run_gated("--baseline", mutant_run() / "results.json")
    assert done.returncode == 0, done.stdout[-1500:]


def test_a_failure_absent_from_the_baseline_fails_the_run_and_is_printed():
    done = run_gated("--baseline", reference_run() / "results.json")
    assert done.returncode == 1
    assert "NEW FAILURE      KIP-937.int64-wraparound on exact_arithmetic/kafka-4" in done.stdout


def test_diff_lists_regressions_before_fixes_and_exits_1_on_a_regression(tmp_path):
    old = json.loads((mutant_run() / "results.json").read_text())
    new = json.loads(json.dumps(old))
    flipped = {"KIP-937.after-bound": "fail", "KIP-937.int64-wraparound": "pass"}
    for row in new["rows"]:
        row["verdict"] = flipped.get(row["clause"], row["verdict"])
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    done = ktc("diff", tmp_path / "old.json", tmp_path / "new.json")
    assert done.returncode == 1
    out = done.stdout
    assert (
        out.index("regressions (1)")
        < out.index("KIP-937.after-bound")
        < out.index("fixes (1)")
        < out.index("KIP-937.int64-wraparound")
    )
    assert ktc("diff", tmp_path / "new.json", tmp_path / "new.json").returncode == 0


def expecting(verdict: str) -> dict:
    return {("KIP-937.log-append-time-overwrites", "kfake", "kafka-4"): {"verdict": verdict, "reason": "r"}}


def test_the_gate_takes_a_pass_of_an_expected_unknown_for_no_surprise_and_a_pass_of_an_expected_fail_for_one():
    from ktc.reports.diff import gate

    row = {
        "clause": "KIP-937.log-append-time-overwrites",
        "implementation": "kfake",
        "profile": "kafka-4",
        "verdict": "pass",
    }
    assert gate([row], None, expecting("unknown"))["unexpected_passes"] == []
    assert len(gate([row], None, expecting("fail"))["unexpected_passes"]) == 1


def test_an_expected_failure_not_judged_on_this_run_is_neither_new_nor_an_unexpected_pass():
    from ktc.reports.diff import gate

    def row(verdict):
        return {"clause": "KIP-32.retention-segment-level", "implementation": "kafka", "profile": "kafka-4",
                "verdict": verdict}  # fmt: skip

    expected = {("KIP-32.retention-segment-level", "kafka", "kafka-4"): {"verdict": "fail", "reason": "no pass"}}
    assert gate([row("unsupported")], None, expected) == {
        "new_failures": [],
        "unexpected_passes": [],
        "expected_failures": [],
    }
    assert len(gate([row("error")], None, expected)["new_failures"]) == 1
