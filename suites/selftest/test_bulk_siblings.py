"""A bulk implementation judges a test under every profile, and every cell of a table, in one run
(ktc/plugin/bulk.py), and one with ``bulk_session`` every test of the session in one run; that changes
nothing but the number of runs: the same rows, example for example, as judging each alone; a failure
under one profile, or in one test, stays that profile's and that test's.

Judged on doubles answering with the reference (suites/selftest/doubles.py), no JVM.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = ("suites/kip937/test_validation.py", "suites/pinned/test_overflow_table.py")  # properties; a table's cells
SELECTION = (
    "-k",
    "test_generated_batches_are_validated_per_record or test_batch_with_one_future_timestamp or "
    "test_overflow_table_cell_holds",
)
SEED = "20261126"
pytestmark = pytest.mark.xdist_group("bulk-siblings")  # one worker makes the three runs once


@functools.cache
def judged(double: str, *options: str) -> tuple[dict, list, int]:
    """Rows by (clause, profile), the double's run() calls, and ktc's exit code."""
    scratch = Path(tempfile.mkdtemp(prefix="ktc-bulk-siblings-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)  # cached across tests: no tmp_path outlives one
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *FILES,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-q",
        "--impl",
        f"ktc.suites.selftest.doubles:{double}",
        "--profile",
        "all",
        "--ktc-report",
        str(scratch / "latest"),
        f"--hypothesis-seed={SEED}",
        *options,
        *SELECTION,
    ]
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev", "KTC_DOUBLE_RUN_LOG": str(scratch / "runs.jsonl")}
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    rows = json.loads((scratch / "latest" / "results.json").read_text())["rows"]
    runs = [json.loads(line) for line in (scratch / "runs.jsonl").read_text().splitlines()]
    return {(r["clause"], r["profile"]): r for r in rows}, runs, done.returncode


def test_judging_a_tests_profiles_together_gives_the_rows_of_judging_each_alone():
    bulk, _runs, code = judged("EveryProfileInBulk")
    alone, _runs, _code = judged("EveryProfileInBulk", "--ktc-bulk-each-profile")
    seen = lambda rows: {key: (row["verdict"], row["examples"]) for key, row in rows.items()}
    assert code == 0 and len({profile for _c, profile in bulk}) > 1
    assert seen(bulk) == seen(alone)


def test_a_bulk_implementation_is_run_once_per_test_for_all_its_profiles():
    rows, runs, _code = judged("EveryProfileInBulk")
    tests = {test.split("[")[0] for row in rows.values() for test in row["tests"]}  # test functions
    assert len(runs) <= len(tests), runs
    assert max(len(profiles) for _n, profiles in runs) > 1, runs


def test_a_failure_under_one_profile_fails_only_that_profiles_rows():
    rows, _runs, code = judged("WrongUnderKipInBulk")
    failed = {profile for (_clause, profile), row in rows.items() if row["verdict"] == "fail"}
    passed = {profile for (_clause, profile), row in rows.items() if row["verdict"] == "pass"}
    assert code == 1 and failed == {"kip"}, failed
    assert passed >= {"kafka-3.5", "kafka-4"}


def test_judging_every_test_of_a_session_together_gives_the_rows_of_judging_each_alone():
    together, runs, code = judged("EveryTestInBulk")
    alone, _runs, _code = judged("EveryTestInBulk", "--ktc-bulk-each-profile")
    seen = lambda rows: {key: (row["verdict"], row["examples"]) for key, row in rows.items()}
    assert code == 0 and len(runs) == 1, runs
    assert seen(together) == seen(alone)


def test_in_a_session_run_a_failure_stays_with_its_test_and_profile():
    rows, runs, code = judged("WrongUnderKipInSessionBulk")
    failed = {profile for (_clause, profile), row in rows.items() if row["verdict"] == "fail"}
    assert code == 1 and failed == {"kip"}, failed
    assert len(runs[0][1]) > 1 and all(profiles == ["kip"] for _n, profiles in runs[1:]), runs  # then shrinking
    assert seen_pass(rows) >= {"kafka-3.5", "kafka-4"}


def seen_pass(rows: dict) -> set[str]:
    return {profile for (_clause, profile), row in rows.items() if row["verdict"] == "pass"}
