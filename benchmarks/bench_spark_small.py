"""What a conformance test costs on Spark: one ``SparkImplementation.run`` of a test's worth of histories.

A test hands Spark about a hundred small histories (Hypothesis's ``ci`` profile: 120 examples) in one job,
so its cost is Spark's fixed cost per query, not throughput.  This bench times that call under the
session's settings (``ktc/spark/session.py``) against a baseline of other runtime SQL
settings, interleaved in one session (baseline, candidate, baseline, ...) so load bursts hit both, and
prints the medians, the ratio and the Spark jobs per call.

    .venv/bin/python benchmarks/bench_spark_small.py                      # 120 histories, 9 rounds, ~2 min
    .venv/bin/python benchmarks/bench_spark_small.py --histories 40 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The baseline, as the throughput bench (bench_append.py) runs Spark: AQE on, 4 shuffle partitions,
# Spark's automatic broadcast joins
BASELINE = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.autoBroadcastJoinThreshold": "10485760",
}


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=120, help="histories per call (default 120)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved calls per setting (default 9)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.histories < 1 or args.rounds < 2:
        parser.error("--histories must be >= 1 and --rounds >= 2")
    return args


def drawn(count: int, seed: int) -> list:
    """``count`` whole histories (kafka-4) drawn by Hypothesis under a fixed seed."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed

    from ktc.strategies import histories

    out = []

    @fixed_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(histories(profile="kafka-4"))
    def collect(history):
        out.append(history)

    collect()
    return out[:count]


def timed_call(spark, impl, histories, settings: dict, group: str) -> tuple[float, int]:
    for key, value in settings.items():
        spark.conf.set(key, value)
    spark.sparkContext.setJobGroup(group, group)
    start = time.perf_counter()
    impl.run(histories)
    elapsed = time.perf_counter() - start
    return elapsed, len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def main(argv=None) -> int:
    args = arguments(argv)
    from ktc.implementations.spark import SparkImplementation
    from ktc.spark import session

    histories = drawn(args.histories, args.seed)
    impl, spark = SparkImplementation(), session.get()
    current = {key: spark.conf.get(key) for key in BASELINE}
    timed_call(spark, impl, histories, current, "warm-up")  # the first call compiles and loads classes
    times, jobs = {"baseline": [], "session": []}, {}
    for round_ in range(args.rounds):
        for name, settings in (("baseline", BASELINE), ("session", current)):
            elapsed, jobs[name] = timed_call(spark, impl, histories, settings, f"{name}-{round_}")
            times[name].append(elapsed)
    report(times, jobs, current, len(histories))
    return 0


def report(times: dict, jobs: dict, current: dict, histories: int) -> None:
    print(f"{histories} histories per call, {len(times['baseline'])} interleaved calls per setting")
    for name, settings in (("baseline", BASELINE), ("session", current)):
        median = statistics.median(times[name])
        fastest = min(times[name])
        print(f"  {name:8} median {median:5.2f} s  min {fastest:5.2f} s  jobs/call {jobs[name]:2d}  {settings}")
    ratio = statistics.median(times["session"]) / statistics.median(times["baseline"])
    print(f"session/baseline: {ratio:.2f}x (median wall per call)")


if __name__ == "__main__":
    sys.exit(main())
