"""Benchmark: a Spark session's start and first queries, with this machine's class archive and without, in alternation.

What every Spark session a run starts pays (``ktc run``'s Spark target, each ``ktc audit``, a standalone cluster's
driver): a child process starts a session (ktc/spark/session.py) and judges a few histories with the Spark
implementation, the query plans a test's call makes; measured are the child's wall time to the end of that work and
its driver JVM's CPU (read from ``/proc`` before the session stops).  The baseline is the same child with
``KTC_SPARK_CLASS_ARCHIVE=off`` (ktc/spark/class_archive.py), in the same minutes (A, B, A, B, ...).  Prints each
round, then per setting the median and spread of both figures, and the ratios of the medians.

    .venv/bin/python benchmarks/bench_spark_start.py                 # five rounds of each
    .venv/bin/python benchmarks/bench_spark_start.py --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHILD = """
import json, os, sys, time
started = time.monotonic()
from pyspark import SparkContext
from ktc.implementations.spark import SparkImplementation, class_archive
implementation = SparkImplementation()
implementation.prepare()
implementation.run(class_archive.workload()[: int(sys.argv[1])])
fields = open(f"/proc/{SparkContext._gateway.proc.pid}/stat").read().rsplit(")", 1)[1].split()
print(json.dumps({"wall": time.monotonic() - started,
                  "jvm": (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")}))
"""


def one(archive: bool, histories: int) -> tuple[float, float]:
    """(seconds to the end of the work, driver JVM CPU seconds) of one child."""
    env = {key: value for key, value in os.environ.items() if key != "KTC_SPARK_CLASS_ARCHIVE"}
    if not archive:
        env["KTC_SPARK_CLASS_ARCHIVE"] = "off"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(histories)], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_spark_start: the child failed: {done.stderr.strip().splitlines()[-1:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["wall"], got["jvm"]


def spread(values: list[float], unit: str) -> str:
    return f"median {statistics.median(values):.2f} {unit} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    from ktc.implementations.spark import class_archive as maker
    from ktc.spark import class_archive

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="children of each setting (default 5)")
    parser.add_argument("--histories", type=int, default=40, help="histories judged by each child (default 40)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.histories < 1:
        parser.error("--rounds and --histories must be at least 1")
    print(maker.make())
    if not class_archive.flags():
        print("bench_spark_start: no Spark class archive here; nothing to compare", file=sys.stderr)
        return 2
    runs: dict[str, list[tuple[float, float]]] = {"archive": [], "no archive": []}
    for round_ in range(args.rounds):
        for name in runs:
            wall, cpu = one(name == "archive", args.histories)
            runs[name].append((wall, cpu))
            print(f"  round {round_ + 1} {name:<10} {wall:5.2f} s, driver JVM {cpu:5.2f} CPU-s", flush=True)
    medians = {}
    for name, got in runs.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        medians[name] = (statistics.median(walls), statistics.median(cpus))
        print(f"{name:<10} start and work {spread(walls, 's')}, driver JVM {spread(cpus, 'CPU-s')}")
    (wall_a, cpu_a), (wall_b, cpu_b) = medians["archive"], medians["no archive"]
    print(f"Spark, archive against none: start and work {wall_a / wall_b:.2f}x, driver JVM CPU {cpu_a / cpu_b:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
