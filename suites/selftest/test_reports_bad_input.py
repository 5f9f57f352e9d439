"""A corrupt results file, another schema version and a missing counterexample file each give
one line `ktc: error: ...` and exit 2, never a traceback."""

import json

import pytest

from .reports_support import ktc, mutant_run

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


def assert_one_line_usage_error(done, needle):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("ktc: error: ") and needle in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [["report"], ["diff", "GOOD"], ["failures"], ["expectations", "update"]])
def test_a_truncated_results_file_is_a_one_line_error(tmp_path, command):
    good = (mutant_run() / "results.json").read_text()
    bad = tmp_path / "results.json"
    bad.write_text(good[: len(good) // 2])
    args = [str(mutant_run() / "results.json") if a == "GOOD" else a for a in command] + [str(bad)]
    args += ["--out", str(tmp_path / "x.toml")] if command[0] == "expectations" else []
    assert_one_line_usage_error(ktc(*args), "is not valid JSON")


def test_a_results_file_of_another_schema_version_is_a_one_line_error(tmp_path):
    doc = json.loads((mutant_run() / "results.json").read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**doc, "schema_version": 1}))
    assert_one_line_usage_error(ktc("report", old), "has schema_version 1; this ktc reads 2 or 3")
    assert_one_line_usage_error(ktc("run", "--baseline", old), "has schema_version 1")


def test_a_missing_counterexample_file_is_a_one_line_error(tmp_path):
    assert_one_line_usage_error(ktc("replay", tmp_path / "nope.json"), "does not exist")


def test_a_counterexample_file_that_is_not_one_is_a_one_line_error(tmp_path):
    path = tmp_path / "cx.json"
    path.write_text(json.dumps({"schema_version": 1, "clause": "x"}))
    assert_one_line_usage_error(ktc("replay", path), "lacks")
