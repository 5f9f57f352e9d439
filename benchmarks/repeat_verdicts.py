"""Run the same ``ktc run`` N times with one fixed seed and compare the verdict of every row.

    python benchmarks/repeat_verdicts.py --runs 5 --seed 1234 -- --impl kafka-3.9 --impl kafka-4

Each run writes its own report directory; the script prints, per run, the wall time and the
verdict counts, then every (clause, implementation, profile) whose verdict differs between runs,
and exits 1 if any does.  Real brokers are judged over clock intervals, so this is how the broker
tier's "identical verdicts" claim is measured (a script, not a test).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(index: int, seed: int, ktc_args: list[str], out: Path) -> dict:
    report = out / f"run-{index}"
    argv = [sys.executable, "-m", "ktc", "run", "--report", str(report), *ktc_args, "--", f"--hypothesis-seed={seed}"]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - started
    latest = report / "latest" / "results.json"
    rows = json.loads(latest.read_text())["rows"] if latest.exists() else []
    verdicts = {(r["clause"], r["implementation"], r["profile"]): r["verdict"] for r in rows}
    print(f"run {index}: exit {done.returncode}, {seconds:.0f} s, {dict(Counter(verdicts.values()))}", flush=True)
    return verdicts


def differences(runs: list[dict]) -> list[tuple]:
    keys = sorted(set().union(*runs))
    return [(k, [r.get(k, "-") for r in runs]) for k in keys if len({r.get(k, "-") for r in runs}) > 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("ktc_args", nargs="*", help="ktc run options, after --")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="ktc-repeat-"))
    runs = [one_run(i + 1, args.seed, args.ktc_args, out) for i in range(args.runs)]
    diff = differences(runs)
    print(f"{len(runs)} runs, seed {args.seed}, {len(runs[0])} rows each; {len(diff)} rows differ (reports in {out})")
    for key, verdicts in diff:
        print(f"  {' / '.join(key)}: {' '.join(verdicts)}")
    return 1 if diff or not runs[0] else 0


if __name__ == "__main__":
    sys.exit(main())
