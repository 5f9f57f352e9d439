"""Counterexample files are written for failing rows and `ktc replay` re-runs them."""

import json

import pytest

from ktc.reports.counterexamples import file_name

from .reports_support import ktc, mutant_run, results

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


def counterexample_file():
    failed = [r for r in results(mutant_run())["rows"] if r["verdict"] == "fail"]
    assert failed
    return mutant_run() / "counterexamples" / file_name(failed[0])


def test_a_failing_row_is_written_as_a_portable_counterexample_file():
    data = json.loads(counterexample_file().read_text())
    assert data["schema_version"] == 1 and data["clause"] == "KIP-937.int64-wraparound"
    assert data["profile"] == "kafka-4" and isinstance(data["seed"], int)
    assert data["history"]["type"] == "History" and "what" in data["mismatch"]
    assert sorted(p.name for p in (mutant_run() / "counterexamples").iterdir()) == [counterexample_file().name]


def test_replay_against_the_recorded_implementation_says_still_failing_and_exits_1():
    done = ktc("replay", counterexample_file())
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("STILL FAILING: KIP-937.int64-wraparound on exact_arithmetic: op #")


def test_replay_against_a_correct_implementation_says_fixed_and_exits_0():
    done = ktc("replay", counterexample_file(), "--impl", "reference")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("FIXED: KIP-937.int64-wraparound on reference")
