"""A third party's broker, judged for real: ``kfake-again`` (suites/third_party.py), one file and its
expectations outside ktc, registered through a distribution's ``ktc.plugins`` entry point, run by ``ktc run
--impl kfake-again`` on kfake as built by ``./run setup``.  Its failures are explained by its own expectations
file, found beside its declaration; without that file the same run fails on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ktc.suites import third_party

pytestmark = pytest.mark.xdist_group("broker-third-party")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
SELECTION = ("--", "suites/kip937/test_validation.py", "-k", "after_bound")


@pytest.fixture(scope="module")
def built():
    from ktc.implementations.kafka.processes.kfake import KfakeError, build

    try:
        build()
    except KfakeError as error:
        pytest.fail(f"kfake cannot be built here: {error}")


def ktc_run(folder: Path, report: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """``ktc run --impl kfake-again`` with the third party's folder on the path (and no other change)."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev", "PYTHONPATH": str(folder)}
    env.pop("KTC_RUN_ID", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ktc",
            "run",
            "--impl",
            third_party.NAME,
            "--workers",
            "0",
            "--report",
            str(report),
            *SELECTION,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    results = report / "latest" / "results.json"
    rows = json.loads(results.read_text())["rows"] if results.exists() else []
    return proc, rows


def test_a_third_party_broker_runs_on_kfake_judged_by_its_own_expectations(built, tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    expectations = third_party.install(folder)
    proc, rows = ktc_run(folder, tmp_path / "report")
    print(proc.stdout[-1500:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    ours = [r for r in rows if r["implementation"] == third_party.NAME]
    expected = [r for r in ours if r["clause"] == "KIP-937.after-bound" and r["verdict"] == "fail"]
    assert expected and all(r["expected"]["file"] == expectations.name for r in expected), ours
    assert {r["implementation"] for r in rows} == {third_party.NAME}


def test_without_its_expectations_the_same_run_fails_on_the_same_rows(built, tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    third_party.install(folder, expectations=False)
    proc, rows = ktc_run(folder, tmp_path / "report")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    failed = [r for r in rows if r["clause"] == "KIP-937.after-bound" and r["verdict"] == "fail"]
    assert failed and not any(r.get("expected") for r in failed), rows
