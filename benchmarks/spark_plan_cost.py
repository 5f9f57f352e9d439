"""The driver's cost of one plan: ktc's Spark path against the hand-written Spark SQL of bench_append.py.

    python benchmarks/spark_plan_cost.py [--records 50000] [--rounds 12] [--warmup 10] [--rules 12] [--explain DIR]

bench_append.py times each engine Parquet to Parquet; this script takes the same two DataFrames (built exactly
as bench_append.py builds them) apart in the driver, where their difference is: per engine, alternating in one
warm session (Spark ``local[2]``, AQE on, as bench_append.py), the medians of

- **build**: from the Parquet path to the DataFrame: PySpark's calls, parsing and analysis (``spark.sql`` and
  ``selectExpr`` analyse eagerly) and the py4j round trips that carries;
- **optimize** and **physical**: ``queryExecution().optimizedPlan()`` and ``executedPlan()`` of that DataFrame
  (what a write or collect does before its first job);

then, over the timed rounds, the analyser and optimizer rules taking the most time per plan (Catalyst's
``RuleExecutor`` metrics: a rule's time and runs over whole plans, its runs that changed the plan) and the
number of rule runs per plan.  ``--explain DIR`` writes each engine's ``explain("formatted")`` there.  No data is
processed beyond Parquet footers: this is the fixed cost per plan, the whole of the gap at 1M records in
bench_append.py (its executor CPU is the same for both engines).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow.parquet as pq

from benchmarks import append_workload as workload
from benchmarks.bench_append import Parser, Py4jCalls, spark_result

PHASES = ("build", "optimize", "physical")
RULE_LINE = re.compile(r"^(\S+)\s+(\d+) / (\d+)\s+(\d+) / (\d+)\s*$")


def arguments(argv) -> argparse.Namespace:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000, help="records in the Parquet input (default 50,000)")
    parser.add_argument("--rounds", type=int, default=12, help="timed plans per engine (default 12)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed plans per engine first (default 10)")
    parser.add_argument("--rules", type=int, default=12, help="rules listed per engine (default 12)")
    parser.add_argument("--explain", type=Path, help="write each engine's explain('formatted') in this directory")
    args = parser.parse_args(argv)
    if args.records < 1000 or args.rounds < 1 or args.warmup < 0:
        parser.error("--records must be >= 1000, --rounds >= 1 and --warmup >= 0")
    return args


def engines(spark, source: str) -> dict:
    """Each engine's DataFrame, as bench_append.py builds it (the hand-written query with ANSI off)."""

    def bare():
        spark.conf.set("spark.sql.ansi.enabled", "false")
        spark.read.parquet(source).createOrReplaceTempView("records")
        return spark.sql(workload.SPARK_BARE_SQL.format(before=workload.BEFORE_MS, after=workload.AFTER_MS))

    def ktc():
        spark.conf.set("spark.sql.ansi.enabled", "true")
        return spark_result(spark, source)

    return {"spark": ktc, "spark-sql": bare}


def one_plan(build, calls: Py4jCalls) -> tuple[dict, object]:
    """One plan's phases (seconds) and py4j round trips, and its DataFrame."""
    before, t0 = calls.count, time.perf_counter()
    df = build()
    t1 = time.perf_counter()
    execution = df._jdf.queryExecution()
    execution.optimizedPlan()
    t2 = time.perf_counter()
    execution.executedPlan()
    t3 = time.perf_counter()
    return {"build": t1 - t0, "optimize": t2 - t1, "physical": t3 - t2, "py4j": calls.count - before}, df


def rule_metrics(text: str) -> tuple[int, dict]:
    """Catalyst's ``RuleExecutor.dumpTimeSpent()``: total rule runs and, per rule, (ns, runs, effective runs)."""
    runs = int(re.search(r"Total number of runs: (\d+)", text).group(1))
    rules = {}
    for line in text.splitlines():
        if found := RULE_LINE.match(line.strip()):
            name, _, total_ns, effective, total = found.groups()
            rules[name.rsplit(".", 1)[-1]] = (int(total_ns), int(total), int(effective))
    return runs, rules


def measure(spark, source: str, args) -> tuple[dict, dict]:
    """Per engine: the phases of every timed plan, and its rule metrics over them (plans alternate, one engine's
    rules counted at a time: warm-up, then per engine its own timed block between metric resets)."""
    calls, built = Py4jCalls(), engines(spark, source)
    rule_executor = spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor
    phases, rules = collections.defaultdict(list), {}
    for _ in range(args.warmup):
        for build in built.values():
            one_plan(build, calls)
    for r in range(args.rounds):
        for name in list(built) if r % 2 == 0 else list(built)[::-1]:
            phases[name].append(one_plan(built[name], calls)[0])
    for name, build in built.items():
        rule_executor.resetMetrics()
        for _ in range(args.rounds):
            one_plan(build, calls)
        rules[name] = rule_metrics(rule_executor.dumpTimeSpent())
    if args.explain:
        args.explain.mkdir(parents=True, exist_ok=True)
        for name, build in built.items():
            plan = one_plan(build, calls)[1]._jdf.queryExecution()
            mode = spark._jvm.org.apache.spark.sql.execution.ExplainMode.fromString("formatted")
            (args.explain / f"{name}.txt").write_text(plan.explainString(mode))
    return phases, rules


def report(phases: dict, rules: dict, args) -> None:
    print(f"{'engine':<10} {'build s':>8} {'optimize s':>11} {'physical s':>11} {'total s':>8} {'py4j':>5}")
    totals = {}
    for name, found in phases.items():
        medians = {p: statistics.median(f[p] for f in found) for p in PHASES}
        totals[name] = statistics.median(sum(f[p] for p in PHASES) for f in found)
        py4j = statistics.median(f["py4j"] for f in found)
        print(
            f"{name:<10} {medians['build']:>8.3f} {medians['optimize']:>11.3f} {medians['physical']:>11.3f} "
            f"{totals[name]:>8.3f} {py4j:>5.0f}"
        )
    print(
        f"spark/spark-sql per plan: {totals['spark'] / totals['spark-sql']:.2f}x, "
        f"{totals['spark'] - totals['spark-sql']:.3f} s more (medians of {args.rounds} alternated plans)"
    )
    for name, (runs, found) in rules.items():
        total = sum(ns for ns, _, _ in found.values()) / 1e9 / args.rounds
        print(f"\n{name}: {runs / args.rounds:.0f} rule runs per plan, {total:.3f} s of rules per plan; the costliest:")
        for rule, (ns, count, effective) in sorted(found.items(), key=lambda r: -r[1][0])[: args.rules]:
            print(
                f"  {ns / 1e9 / args.rounds:7.3f} s  {count / args.rounds:5.1f} runs ({effective / args.rounds:4.1f} "
                f"changed the plan)  {rule}"
            )


def main(argv=None) -> int:
    args = arguments(argv)
    from ktc.spark import session

    load_before, workdir = os.getloadavg()[0], tempfile.mkdtemp(prefix="ktc-plan-cost-")
    source = f"{workdir}/records.parquet"
    pq.write_table(workload.generate(args.records), source)
    session.configure(
        master="local[2]",
        **{"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "4", "spark.driver.memory": "4g"},
    )
    try:
        phases, rules = measure(session.get(), source, args)
    finally:
        session.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"load avg (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after; {args.records:,} records, "
        f"{args.warmup} warm-up plans per engine"
    )
    report(phases, rules, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
