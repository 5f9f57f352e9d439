"""The suite tests itself: every mutant in the catalogue must be killed by the tests citing the
clause it breaks, run through the ordinary ``--impl module:attribute`` mechanism.

The kill table (mutant, clause, examples to first failure, seconds) is printed at the end of
the run by suites/selftest/conftest.py.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suites.selftest.mutants import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]


def run_suites_against(mutant, report: Path, seed) -> subprocess.CompletedProcess:
    # the suites that judge an implementation, as ``ktc run`` collects them: collecting selftest/ and broker/
    # too cost 4-7 s per mutant and judges nothing (benchmarks/README.md)
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "--rootdir", str(ROOT), "-q", "-x",
            "--ignore", str(ROOT / "suites" / "selftest"), "--ignore", str(ROOT / "suites" / "broker"),
            "-p", "no:cacheprovider", f"--impl=suites.selftest.mutants:{mutant.name}",
            f"--ktc-clause={mutant.clause}", f"--profile={','.join(mutant.profiles)}",
            f"--ktc-report={report}", f"--hypothesis-seed={seed}"]
    # the ci profile's 120 examples a test, whatever the session's: the kill table is the oracle's strength at ci
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HYPOTHESIS_PROFILE": "ci"})


def failing_row(report: Path, mutant) -> dict | None:
    rows = json.loads((report / "results.json").read_text())["rows"]
    return next((r for r in rows if r["clause"] == mutant.clause and r["verdict"] == "fail"), None)


def test_catalogue_has_at_least_fifteen_mutants_on_distinct_clauses():
    assert len(CATALOGUE) >= 15
    assert len({m.clause for m in CATALOGUE}) == len(CATALOGUE), "each mutant breaks a different clause"


@pytest.mark.parametrize("mutant", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_mutant_is_killed_by_its_clause(mutant, tmp_path, record_property, pytestconfig):
    started = time.monotonic()
    done = run_suites_against(mutant, tmp_path, pytestconfig.getoption("hypothesis_seed"))
    seconds = time.monotonic() - started
    row = failing_row(tmp_path, mutant) if (tmp_path / "results.json").exists() else None
    record_property("kill", json.dumps({"mutant": mutant.name, "clause": mutant.clause, "seconds": round(seconds, 1),
                                        "examples": row and row.get("first_failure_at"), "killed": row is not None}))
    assert done.returncode == 1 and row is not None, (
        f"mutant {mutant.name} survived the tests citing {mutant.clause} (exit {done.returncode})\n"
        + done.stdout[-3000:] + done.stderr[-2000:])
