"""`./run conformance` with two numbers of pytest-xdist workers, in alternation: the wall time of each.

The baseline is the same run with the other number of workers, measured in the same minutes (A, B, A, B, ...),
so that a machine whose load drifts slows both alike.  Prints each run's wall time and exit code, then the
median and spread of each setting and the ratio of the medians.  Every run must conform (exit 0): a faster run
that judged less is no figure.

    .venv/bin/python benchmarks/bench_workers.py                       # 3 workers against 2, two rounds
    .venv/bin/python benchmarks/bench_workers.py --workers 3 --baseline 2 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def conformance(workers: int, log: Path) -> tuple[float, int]:
    """One `./run conformance --workers N`, its output to ``log``: (wall seconds, exit code)."""
    started = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(
            [str(ROOT / "run"), "conformance", "--workers", str(workers)], cwd=ROOT, stdout=out, stderr=out
        ).returncode
    return time.monotonic() - started, code


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.0f} s ({min(values):.0f}-{max(values):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3, help="the setting measured (default 3)")
    parser.add_argument("--baseline", type=int, default=2, help="the setting it is measured against (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each, alternating (default 2)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp"), help="where each run's output goes")
    args = parser.parse_args(argv)
    if args.rounds < 1 or min(args.workers, args.baseline) < 1:
        parser.error("--rounds, --workers and --baseline take whole numbers of at least 1")
    walls: dict[int, list[float]] = {args.workers: [], args.baseline: []}
    for n in range(args.rounds):
        for workers in (args.baseline, args.workers) if n % 2 else (args.workers, args.baseline):
            log = args.logs / f"bench-workers-{workers}-{n}.log"
            wall, code = conformance(workers, log)
            print(f"round {n + 1}, {workers} workers: {wall:.0f} s, exit {code} ({log})", flush=True)
            if code != 0:
                print(f"bench_workers: a run did not conform (exit {code}); see {log}", file=sys.stderr)
                return 1
            walls[workers].append(wall)
    measured, baseline = walls[args.workers], walls[args.baseline]
    ratio = statistics.median(measured) / statistics.median(baseline)
    said = f"{args.workers} workers: {spread(measured)}; {args.baseline} workers: {spread(baseline)}"
    print(f"{said}; ratio {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
