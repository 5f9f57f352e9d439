"""Benchmark: the KIP-937 append path in ktc's Spark implementation against hand-written Spark SQL (and DuckDB).

    python benchmarks/bench_append.py [--sizes 1000000,10000000] [--repeat 5] [--warmup 15] [--skip-reference]

The rules and the hand-written queries are in append_workload.py. Each engine runs Parquet to Parquet: **spark**
(ktc.implementations.spark api.evaluate, its plan building timed; what the hand-written query writes in as
constants, the topic's config and the batches' type and codec, given as its ``known`` values), **spark-sql** (the
same rules as one hand-written Spark SQL query: Spark's own cost) in one Spark session, **duckdb** (the reference
for scale) and the reference model (smallest size only). Per size, ``--repeat`` rounds; in each round spark and
spark-sql run back to back, their order reversed every other round, so drift and load bursts hit both. Printed per
engine and size: the median, min-max and interquartile range, the driver's py4j calls per run (every Java call
PySpark makes; the plan's fixed cost), executor CPU from Spark's event log; then spark/spark-sql as the ratio of the
medians, with the range of the per-round ratios. Before the timed rounds, ``--warmup`` rounds of both Spark engines
on 50,000 records: the JVM's JIT compiles Spark's planner as it is used, and ktc's plan uses much more of it than
one hand-written query (its planning time falls about fivefold over the first 40 plans of a session), so the timed
rounds measure the cost per plan of a warm session, not the session's first minutes. The smallest size is compared
batch by batch (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import append_workload as workload

WARMUP_RECORDS = 50_000
TARGETS = {1_000_000: 1.2, 10_000_000: 1.1}  # spark/spark-sql, ratio of medians
ENGINES = {
    "reference": "ktc.reference.run, one History per partition (pure Python)",
    "spark": "ktc.implementations.spark api.evaluate(df, 'kafka-4', known=config).batches + running max window",
    "spark-sql": "the same rules as one hand-written Spark SQL query (ANSI off: long wraps like Java)",
    "duckdb": "DuckDB SQL of the same rules (HUGEINT emulates Java long wrap)",
}


class Run(NamedTuple):
    seconds: float
    rep: int
    calls: int  # py4j round trips the driver made


class Py4jCalls:
    """The driver's py4j round trips, counted by wrapping py4j's ``send_command`` (both connection kinds)."""

    def __init__(self):
        self.count = 0
        from py4j import clientserver, java_gateway

        for cls in (clientserver.ClientServerConnection, java_gateway.GatewayConnection):
            cls.send_command = self.counting(cls.send_command)

    def counting(self, send):
        def counted(connection, *args, **kwargs):
            self.count += 1
            return send(connection, *args, **kwargs)

        return counted


def spark_result(spark, source: str):
    """The Spark implementation's per-batch result on the Parquet input, as a DataFrame (lazy): one topic, no
    scenario or topic column, as in the hand-written query; what the hand-written query takes as constants (the
    topic's config, CreateTime batches of uncompressed records) given as ``known`` values; the running max of the
    accepted batch maxima on top."""
    from ktc.implementations.spark import api

    records = spark.read.parquet(source).selectExpr(
        "partition",
        "offset",
        "timestamp_ms",
        "CAST(batch_id AS INT) AS batch_id",
        "broker_now_ms",
        "array(broker_now_ms) AS clocks",
    )
    known = {
        "key": None,
        "value": b"",
        "timestampType": 0,
        "codec": "none",
        "control": False,
        "extended": False,
        "broker_id": 0,
        "topic_type": "CreateTime",
        "before_max_ms": workload.BEFORE_MS,
        "after_max_ms": workload.AFTER_MS,
        "compression_type": "producer",
        "difference_max_ms": None,
        "segment_ms": None,
        "retention_ms": None,
        "retention_max_eventtime_ms": None,
    }
    batches = api.evaluate(records, workload.PROFILE, known=known).batches
    return batches.selectExpr(
        "partition",
        "CAST(batch_id AS BIGINT) AS batch_id",
        "error_code <> 0 AS rejected",
        "CASE WHEN error_code = 0 THEN batch_max END AS batch_max",
        "coalesce(max(CASE WHEN error_code = 0 THEN batch_max END) OVER (PARTITION BY partition ORDER BY batch_id "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), -1L) AS running_max",
    )


def run_once(engine: str, pipeline, n: int, source: str, workdir: Path, rep: int, spark=None, calls=None) -> Run:
    """One timed run; a Spark job description names it (``engine n #rep``) in the event log."""
    target = str(workdir / f"{engine}-{n}-{rep}{'.parquet' if engine == 'duckdb' else ''}")
    if spark is not None:
        spark.sparkContext.setJobDescription(f"{engine} {n} #{rep}")
    before, t0 = calls.count if calls else 0, time.perf_counter()
    pipeline(source, target)
    seconds = time.perf_counter() - t0
    return Run(seconds, rep, (calls.count - before) if calls else 0), target


def time_engines(engines: dict, inputs, sizes, workdir, repeat, check_size, outputs, spark=None, calls=None) -> dict:
    """Per size, ``repeat`` rounds of every engine, the order reversed every other round: (engine, n) -> [Run]."""
    runs = collections.defaultdict(list)
    for n in sizes:
        for rep in range(repeat):
            for engine in list(engines) if rep % 2 == 0 else list(engines)[::-1]:
                run, target = run_once(engine, engines[engine], n, inputs[n], workdir, rep, spark, calls)
                runs[(engine, n)].append(run)
                if n == check_size and rep == 0:
                    outputs[engine] = workload.load_output(target)
    return runs


def event_log_figures(log_dir: Path) -> dict:
    """Per job description: bytes spilled (memory, disk) and executor CPU s, from the event log's task ends."""
    stage_owner, figures = {}, collections.defaultdict(collections.Counter)
    for path in sorted(p for p in log_dir.rglob("*") if p.is_file() and not p.name.startswith((".", "appstatus"))):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["Event"] == "SparkListenerJobStart":
                owner = (event.get("Properties") or {}).get("spark.job.description")
                stage_owner.update((stage, owner) for stage in event["Stage IDs"])
            elif event["Event"] == "SparkListenerTaskEnd":
                metrics, counter = event.get("Task Metrics") or {}, figures[stage_owner.get(event["Stage ID"])]
                counter["memory"] += metrics.get("Memory Bytes Spilled", 0)
                counter["disk"] += metrics.get("Disk Bytes Spilled", 0)
                counter["cpu"] += metrics.get("Executor CPU Time", 0) / 1e9
    return figures


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"wants a whole number >= 1, got {text!r}")
    return int(text)


def sizes_arg(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants comma-separated record counts, got {text!r}") from None
    if not values or any(v < 1000 for v in values):
        raise argparse.ArgumentTypeError(f"--sizes wants record counts >= 1000, got {text!r}")
    return sorted(set(values))


def parse(argv) -> argparse.Namespace:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[1_000_000, 10_000_000], help="record counts")
    parser.add_argument("--repeat", type=positive_int, default=5, help="timed rounds per size (default 5)")
    parser.add_argument("--warmup", type=positive_int, default=15, help="untimed rounds first (default 15)")
    parser.add_argument("--skip-reference", action="store_true", help="do not time the reference model")
    return parser.parse_args(argv)


def write_inputs(sizes: list[int], workdir: Path, notes: list) -> dict:
    inputs = {}
    for n in [WARMUP_RECORDS] + sizes:
        t0, inputs[n] = time.perf_counter(), str(workdir / f"records-{n}.parquet")
        pq.write_table(workload.generate(n), inputs[n])
        if n != WARMUP_RECORDS:
            notes.append(f"generate + write {n:,} records: {time.perf_counter() - t0:.1f} s")
    return inputs


def time_spark(inputs, args, workdir: Path, outputs, notes) -> tuple[dict, dict, dict]:
    from ktc.spark import session

    log_dir = workdir / "spark-events"
    log_dir.mkdir()
    session.configure(
        master="local[2]",
        **{  # AQE back on (ktc's session turns it off for small inputs)
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.autoBroadcastJoinThreshold": "10485760",
            "spark.eventLog.dir": str(log_dir),
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "4",
            "spark.eventLog.enabled": "true",
            "spark.driver.memory": "4g",
            "spark.eventLog.compress": "false",
            "spark.sql.codegen.wholeStage": "true",
            "spark.sql.codegen.factoryMode": "FALLBACK",
        },
    )
    t0 = time.perf_counter()
    spark, jvm_start, calls = session.get(), time.perf_counter() - t0, Py4jCalls()
    t0 = time.perf_counter()  # the warm-up
    engines = {
        "spark": lambda i, t: spark_result(spark, i).write.mode("overwrite").parquet(t),
        "spark-sql": lambda i, t: workload.spark_bare_pipeline(spark, i, t),
    }
    try:
        time_engines(engines, inputs, [WARMUP_RECORDS], workdir, args.warmup, None, {}, spark, calls)
        notes.append(
            f"Spark JVM start {jvm_start:.1f} s, warm-up ({args.warmup} rounds of {WARMUP_RECORDS:,} records) "
            f"{time.perf_counter() - t0:.1f} s (both excluded)"
        )
        runs = time_engines(engines, inputs, args.sizes, workdir, args.repeat, args.sizes[0], outputs, spark, calls)
        info = {
            "java": spark.sparkContext._jvm.System.getProperty("java.version"),
            "partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        }
    finally:
        session.stop()
    return runs, event_log_figures(log_dir), info


def duckdb_module():
    """DuckDB when the optional ``bench`` extra is installed, else None (its column is left out)."""
    try:
        import duckdb
    except ImportError:
        return None
    return duckdb


def time_duckdb(duckdb, inputs, args, workdir: Path, outputs) -> dict:
    with duckdb.connect(config={"threads": 2}) as con:
        engines = {"duckdb": lambda i, t: workload.duckdb_pipeline(con, i, t)}
        time_engines(engines, inputs, [WARMUP_RECORDS], workdir, 1, None, {})
        return time_engines(engines, inputs, args.sizes, workdir, args.repeat, args.sizes[0], outputs)


def spread(values: list[float]) -> tuple[float, float, float, float, float]:
    """median, min, max and the interquartile range (the quartiles of Python's 'inclusive' method)."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return statistics.median(values), min(values), max(values), q1, q3


def report(runs, spilled, info, args, outputs, notes, load_before) -> None:
    import pyspark

    duckdb = duckdb_module()

    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}, "
        f"{memory_gb()} GB; load avg (1 min) {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print(
        f"versions: Python {platform.python_version()}, PySpark {pyspark.__version__} (Java {info['java']}, "
        f"local[2], shuffle partitions {info['partitions']}, AQE on), "
        + (f"DuckDB {duckdb.__version__} (threads=2), " if duckdb else "")
        + f"pyarrow {pa.__version__}"
    )
    batches, rejected = len(outputs["spark-sql"]), sum(r for _, r, _, _ in outputs["spark-sql"].values())
    print(
        f"input: {workload.PARTITIONS} partitions, batches of 1..40 records, CreateTime, before "
        f"{workload.BEFORE_MS} ms, after {workload.AFTER_MS} ms, profile {workload.PROFILE}; at {args.sizes[0]:,} "
        f"records: {batches:,} batches, {rejected:,} rejected"
    )
    print("\n".join(notes) + f"\n\n{args.repeat} rounds per size; spark and spark-sql alternate within each round")
    print(
        f"{'engine':<10} {'records':>12} {'median':>8} {'min-max':>13} {'IQR':>13} {'records/s':>11} "
        f"{'py4j':>6} {'CPU s':>6}  what"
    )
    cpu = lambda engine, n, rep: spilled.get(f"{engine} {n} #{rep}", collections.Counter())["cpu"]
    for (engine, n), found in sorted(runs.items(), key=lambda r: (r[0][1], list(ENGINES).index(r[0][0]))):
        median, low, high, q1, q3 = spread([r.seconds for r in found])
        calls = statistics.median(r.calls for r in found) if engine.startswith("spark") else ""
        work = f"{statistics.median(cpu(engine, n, r.rep) for r in found):6.1f}" if calls != "" else ""
        print(
            f"{engine:<10} {n:>12,} {median:>7.2f}s {low:>6.2f}-{high:<6.2f} {q1:>6.2f}-{q3:<6.2f} "
            f"{n / median:>11,.0f} {calls:>6} {work:>6}  {ENGINES[engine]}"
        )
    print_ratios(runs, spilled, args.sizes)


def memory_gb() -> int:
    return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)


def print_ratios(runs, spilled, sizes) -> None:
    disk = sum(
        spilled.get(f"spark {n} #{r.rep}", collections.Counter())["disk"] for n in sizes for r in runs[("spark", n)]
    )
    print(f"\nspark: {disk:,} bytes spilled to disk over every timed run (Spark's event log)")
    for n in sizes:
        spark, sql = ([r.seconds for r in runs[(e, n)]] for e in ("spark", "spark-sql"))
        ratio = statistics.median(spark) / statistics.median(sql)
        rounds = [s / q for s, q in zip(spark, sql)]
        duck = statistics.median(r.seconds for r in runs[("duckdb", n)]) if ("duckdb", n) in runs else None
        target = TARGETS.get(n)
        verdict = "" if target is None else f"; target <= {target}x: {'met' if ratio <= target else 'NOT met'}"
        print(
            f"at {n:>11,}: spark/spark-sql {ratio:.2f}x (ratio of medians; per round {min(rounds):.2f}x-"
            f"{max(rounds):.2f}x){verdict}" + (f"; spark/duckdb {statistics.median(spark) / duck:.1f}x" if duck else "")
        )


def main(argv=None) -> int:
    args = parse(argv)
    wall, load_before = time.perf_counter(), os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="ktc-bench-"))
    runs, notes, outputs = {}, [], {}  # timed runs, printed notes, per-batch results at the smallest size
    try:
        inputs = write_inputs(args.sizes, workdir, notes)
        if not args.skip_reference:
            table, t0 = pq.read_table(inputs[args.sizes[0]]), time.perf_counter()
            outputs["reference"] = workload.run_reference(table)
            runs[("reference", args.sizes[0])] = [Run(time.perf_counter() - t0, 0, 0)]
        spark_runs, spilled, info = time_spark(inputs, args, workdir, outputs, notes)
        runs.update(spark_runs)
        duckdb = duckdb_module()
        if duckdb is None:
            notes.append(
                "duckdb: not installed (the optional bench extra: pip install -e '.[bench]'); its column left out"
            )
        else:
            runs.update(time_duckdb(duckdb, inputs, args, workdir, outputs))
        difference = workload.first_difference(outputs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(runs, spilled, info, args, outputs, notes, load_before)
    print(
        f"agreement at {args.sizes[0]:,} ({' = '.join(outputs)}): "
        + ("OK" if difference is None else f"DIFFERENT: {difference}")
    )
    print(f"wall time: {time.perf_counter() - wall:.0f} s")
    return 0 if difference is None else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("bench_append: interrupted", file=sys.stderr)
        sys.exit(130)
