"""Spark's share of a conformance run: each test judged under all its profiles in one run (the default)
against one run per test and profile (``--ktc-bulk-each-profile``).

Both ways run the same suites on Spark alone, one pytest process each (its own Spark JVM, start included),
alternating (each-profile, together, each-profile, ...) so a burst of load hits both; prints each run's wall
time, the medians and their ratio.  The rows are the same either way (suites/selftest/test_bulk_siblings.py).

    .venv/bin/python benchmarks/bench_bulk_profiles.py                  # kip937 + kip32, 2 rounds, ~6 min
    .venv/bin/python benchmarks/bench_bulk_profiles.py --rounds 1 suites/kip937/test_validation.py
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = ["suites/kip937", "suites/kip32"]
WAYS = {"each profile (before)": ["--ktc-bulk-each-profile"], "profiles together": []}


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs of each way (default 2)")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("suites", nargs="*", default=SUITES, help=f"test paths (default: {' '.join(SUITES)})")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    return args


def timed_run(suites: list[str], extra: list[str], seed: int) -> tuple[float, str]:
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--impl",
        "spark",
        f"--hypothesis-seed={seed}",
        *extra,
        *suites,
    ]
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=ci_env())
    if done.returncode != 0:
        sys.exit(f"bench_bulk_profiles: pytest exited {done.returncode}:\n{done.stdout[-2000:]}")
    return time.monotonic() - start, done.stdout.strip().splitlines()[-1]


def ci_env() -> dict:
    import os

    return {**os.environ, "HYPOTHESIS_PROFILE": "ci"}


def main(argv=None) -> int:
    args = arguments(argv)
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for round_ in range(args.rounds):
        for way, extra in WAYS.items():
            seconds, summary = timed_run(args.suites, extra, args.seed)
            times[way].append(seconds)
            print(f"round {round_ + 1}  {way:<22} {seconds:7.1f} s   {summary}", flush=True)
    before, after = (statistics.median(times[way]) for way in WAYS)
    print(
        f"median: each profile {before:.1f} s, profiles together {after:.1f} s; ratio {after / before:.2f}x "
        f"({', '.join(args.suites)}, Hypothesis ci profile, seed {args.seed})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
