"""The README's template implementation passes every clause it declares, under kafka-4."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_minimal_broker_example_passes_or_is_unsupported_on_every_clause(tmp_path):
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        "ktc.examples.minimal_broker:MinimalBroker",
        "--profile",
        "kafka-4",
        "--report",
        str(tmp_path),
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        "--",
        "-k",
        "kip937",
    ]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    rows = [
        r
        for r in json.loads((tmp_path / "latest" / "results.json").read_text())["rows"]
        if r["implementation"] == "minimal-broker"
    ]
    assert {r["verdict"] for r in rows} <= {"pass", "unsupported"}
    assert any(r["verdict"] == "pass" for r in rows)
