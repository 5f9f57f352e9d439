"""Shared by the test_reports_* self-tests: one small real run against a mutant, made once per
process, and a helper to call the ktc command.

The run is real (``ktc run`` under pytest-xdist) so that the rows, JUnit XML, counterexample
files and HTML the tests inspect are the ones users get, not hand-written fixtures.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANT = "ktc.suites.selftest.mutants:exact_arithmetic"
QUICK = ["--profile", "kafka-4", "--hypothesis-profile", "dev", "--", "-k", "overflow"]


def ktc(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ktc", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def scratch() -> Path:
    path = Path(tempfile.mkdtemp(prefix="ktc-reports-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


@functools.cache
def mutant_run() -> Path:
    """A report directory from ``ktc run`` against a mutant that breaks KIP-937.int64-wraparound
    (the pinned overflow table only; ~2 s), under two xdist workers."""
    out = scratch() / "mutant"
    done = ktc("run", "--impl", MUTANT, "--report", out, "--workers", "2", *QUICK)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    return out / "latest"


@functools.cache
def reference_run() -> Path:
    out = scratch() / "reference"
    done = ktc("run", "--impl", "reference", "--report", out, "--workers", "0", *QUICK)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out / "latest"


def results(directory: Path) -> dict:
    return json.loads((directory / "results.json").read_text())
