"""Benchmark: the KIP-937 append path in the reference model, the Spark implementation and DuckDB.

    python benchmarks/bench_append.py [--sizes 1000000,10000000] [--skip-reference]

One run generates the inputs (numpy, fixed seed) once per size and writes them to Parquet in a
temporary directory, then times, per size:

  (a) the reference model (``reference.run`` over one History per partition; smallest size only),
  (b) the Spark implementation (``implementations.spark.api.evaluate(df, "kafka-4").batches``),
  (c) one DuckDB SQL query of the same rules,

for the rules: KIP-937 per-record validation under CreateTime (reject when ``now - ts > before`` or
``ts - now > after`` in Java long arithmetic; -1 exempt), whole-batch rejection, the batch max
timestamp ``max(-1, ts)`` of accepted batches, and per partition the running max of the accepted
batch maxima in arrival order.  Spark and DuckDB both read the same Parquet and write their per-batch
result (partition, batch_id, rejected, batch_max, running_max) to Parquet, so each timing covers
read -> rules -> materialised output.  Spark's JVM start and one warm-up run on a small input are
timed separately and excluded.  On the smallest size the three results are compared batch by batch
(and the final running max per partition); any difference prints the first one and exits 1.

This is a script, not a test: run it on a quiet machine, the figures depend on load.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SEED = 20240937
PARTITIONS = 16
START_MS = 1_700_000_000_000
BEFORE_MS = 86_400_000
AFTER_MS = 3_600_000
PROFILE = "kafka-4"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
WARMUP_RECORDS = 50_000
ENGINES = {
    "reference": "reference.run, one History per partition (pure Python)",
    "spark": "implementations.spark api.evaluate(df, 'kafka-4').batches + running max window",
    "spark-sql": "for scale: the DuckDB query as Spark SQL (ANSI off: long wraps like Java)",
    "duckdb": "DuckDB SQL of the same rules (HUGEINT emulates Java long wrap)",
}
OUTPUT_COLUMNS = ["partition", "batch_id", "rejected", "batch_max", "running_max"]


# ---- input -----------------------------------------------------------------------------------

def generate(n: int, seed: int = SEED) -> pa.Table:
    """n records in batches of 1..40 over PARTITIONS partitions, deterministic for (n, seed)."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.geometric(0.12, size=n // 4 + 64), 1, 40)
    while sizes.sum() < n:                                   # never taken for n >= ~1000, kept for safety
        sizes = np.concatenate([sizes, np.clip(rng.geometric(0.12, size=n), 1, 40)])
    ends = np.cumsum(sizes)
    count = int(np.searchsorted(ends, n) + 1)
    sizes = sizes[:count].copy()
    sizes[-1] -= int(ends[count - 1] - n)
    batch_partition = rng.integers(0, PARTITIONS, size=count, dtype=np.int32)
    batch_now = START_MS + np.cumsum(rng.integers(0, 40, size=count, dtype=np.int64))
    batch_id = np.repeat(np.arange(count, dtype=np.int64), sizes)
    starts = np.cumsum(sizes) - sizes
    offset = np.arange(n, dtype=np.int64) - np.repeat(starts, sizes)
    now = batch_now[batch_id]
    # mostly now +- minutes (sd 5 min, tail clipped to +-50 min so only the planted values break a bound)
    ts = now + np.clip(rng.normal(0, 300_000, size=n), -3_000_000, 3_000_000).astype(np.int64)
    kind = rng.random(n)
    late = kind < 0.015                                      # before now - 1 day
    early = (kind >= 0.015) & (kind < 0.03)                  # beyond now + 1 hour
    none = (kind >= 0.03) & (kind < 0.05)                    # -1, NO_TIMESTAMP
    ts[late] = now[late] - BEFORE_MS - 1 - rng.integers(0, 30 * 86_400_000, size=int(late.sum()))
    ts[early] = now[early] + AFTER_MS + 1 + rng.integers(0, 7 * 86_400_000, size=int(early.sum()))
    ts[none] = -1
    bounds = (now - BEFORE_MS, now - BEFORE_MS - 1, now + AFTER_MS, now + AFTER_MS + 1)
    for shift, bound in enumerate(bounds):                   # ~0.05% each exactly on / just past a bound
        at = (kind >= 0.05 + shift * 0.0005) & (kind < 0.05 + (shift + 1) * 0.0005)
        ts[at] = bound[at]
    extremes = [INT64_MIN, INT64_MAX, INT64_MIN + 1, 0, -2, -86_400_001]   # Java wrap-around and negatives
    for i, value in enumerate(extremes):
        ts[(i + 1) * (n // (len(extremes) + 1))] = value
    return pa.table({
        "partition": pa.array(batch_partition[batch_id], pa.int32()),
        "batch_id": pa.array(batch_id, pa.int64()),
        "offset": pa.array(offset, pa.int64()),
        "timestamp_ms": pa.array(ts, pa.int64()),
        "broker_now_ms": pa.array(now, pa.int64()),
    })


# ---- (a) the reference model -----------------------------------------------------------------

def run_reference(table: pa.Table) -> dict:
    """Per-batch (rejected, batch_max, running_max) from reference.run, one History per partition."""
    import reference
    from reference.types import Advance, Batch, CreateTopic, Fetch, History, Produce, ProduceResult, Record, TopicConfig
    config = TopicConfig(before_max_ms=BEFORE_MS, after_max_ms=AFTER_MS)
    part = table["partition"].to_numpy()
    bid = table["batch_id"].to_numpy()
    ts = table["timestamp_ms"].to_numpy().tolist()
    now = table["broker_now_ms"].to_numpy()
    starts = np.flatnonzero(np.r_[True, bid[1:] != bid[:-1]])
    ends = np.r_[starts[1:], len(bid)]
    ops = {p: [CreateTopic("t", config)] for p in range(PARTITIONS)}
    ids = {p: [] for p in range(PARTITIONS)}
    clock = {p: START_MS for p in range(PARTITIONS)}
    for s, e in zip(starts.tolist(), ends.tolist()):
        p, t = int(part[s]), int(now[s])
        if t != clock[p]:
            ops[p].append(Advance(t - clock[p]))
            clock[p] = t
        ops[p].append(Produce("t", Batch(tuple(Record(x) for x in ts[s:e]))))
        ids[p].append(int(bid[s]))
    out = {}
    for p in range(PARTITIONS):
        trace = reference.run(History(PROFILE, tuple(ops[p]) + (Fetch("t"),)))
        stored = {b.base_offset: b.max_timestamp for b in trace[-1].batches}
        produced = [r for r in trace[:-1] if isinstance(r, ProduceResult)]
        assert trace[0].error_code == 0 and len(produced) == len(ids[p])
        running = -1
        for batch_id, result in zip(ids[p], produced):
            rejected = result.error_code != 0
            batch_max = None if rejected else stored[result.base_offset]
            if not rejected:
                running = max(running, batch_max)
            out[batch_id] = (p, rejected, batch_max, running)
    return out


# ---- (b) the Spark implementation ------------------------------------------------------------

def spark_pipeline(spark, source: str, target: str) -> None:
    spark_result(spark, source).write.mode("overwrite").parquet(target)


def spark_result(spark, source: str):
    """The Spark implementation's per-batch result on the Parquet input, as a DataFrame (lazy)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from implementations.spark import api
    raw = spark.read.parquet(source)
    null_long = F.lit(None).cast("bigint")
    records = raw.select(
        F.lit(0).cast("bigint").alias("scenario"), F.lit("t").alias("topic"), F.col("partition"),
        F.col("offset"), F.lit(None).cast("binary").alias("key"), F.lit(b"").cast("binary").alias("value"),
        F.lit(0).alias("timestampType"), F.col("timestamp_ms"), F.col("batch_id").cast("int").alias("batch_id"),
        F.lit("none").alias("codec"), F.lit(False).alias("control"), F.lit(False).alias("extended"),
        F.lit(0).alias("broker_id"), F.col("broker_now_ms"), F.array("broker_now_ms").alias("clocks"),
        F.lit("CreateTime").alias("topic_type"), F.lit(BEFORE_MS).cast("bigint").alias("before_max_ms"),
        F.lit(AFTER_MS).cast("bigint").alias("after_max_ms"), null_long.alias("difference_max_ms"),
        null_long.alias("segment_ms"), null_long.alias("retention_ms"),
        null_long.alias("retention_max_eventtime_ms"), F.lit("producer").alias("compression_type"))
    batches = api.evaluate(records, PROFILE).batches
    order = Window.partitionBy("scenario", "topic", "partition").orderBy("batch_id").rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    accepted = F.col("error_code") == 0
    return batches.select(
        "partition", F.col("batch_id").cast("bigint").alias("batch_id"), (~accepted).alias("rejected"),
        F.when(accepted, F.col("batch_max")).alias("batch_max"),
        F.coalesce(F.max(F.when(accepted, F.col("batch_max"))).over(order), F.lit(-1).cast("bigint"))
         .alias("running_max"))


SPARK_BARE_SQL = """
    WITH batches AS (
        SELECT partition, batch_id,
               bool_or(timestamp_ms <> -1 AND (broker_now_ms - timestamp_ms > {before}
                                               OR -(broker_now_ms - timestamp_ms) > {after})) AS rejected,
               greatest(max(timestamp_ms), -1L) AS top
        FROM records GROUP BY partition, batch_id
    )
    SELECT partition, batch_id, rejected, CASE WHEN NOT rejected THEN top END AS batch_max,
           coalesce(max(CASE WHEN NOT rejected THEN top END) OVER (
               PARTITION BY partition ORDER BY batch_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), -1L)
               AS running_max
    FROM batches
"""


def spark_bare_pipeline(spark, source: str, target: str) -> None:
    """For scale only: the DuckDB query as Spark SQL, ANSI off so that long arithmetic wraps like Java."""
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        spark.read.parquet(source).createOrReplaceTempView("records")
        spark.sql(SPARK_BARE_SQL.format(before=BEFORE_MS, after=AFTER_MS)).write.mode("overwrite").parquet(target)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)


# ---- (c) DuckDB --------------------------------------------------------------------------------

DUCKDB_SQL = """
CREATE OR REPLACE MACRO jlong(x) AS                     -- the Java long with the low 64 bits of x
    CASE WHEN x > 9223372036854775807 THEN x - 18446744073709551616::HUGEINT
         WHEN x < -9223372036854775808 THEN x + 18446744073709551616::HUGEINT ELSE x END;
COPY (
    WITH records AS (
        SELECT partition, batch_id, timestamp_ms AS ts,
               jlong(broker_now_ms::HUGEINT - timestamp_ms) AS diff
        FROM read_parquet('{source}')
    ), batches AS (
        SELECT partition, batch_id,
               bool_or(ts <> -1 AND (diff > {before} OR jlong(-diff) > {after})) AS rejected,
               greatest(max(ts), -1) AS top
        FROM records GROUP BY partition, batch_id
    )
    SELECT partition, batch_id, rejected, CASE WHEN NOT rejected THEN top END AS batch_max,
           coalesce(max(CASE WHEN NOT rejected THEN top END) OVER (
               PARTITION BY partition ORDER BY batch_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), -1)
               AS running_max
    FROM batches
) TO '{target}' (FORMAT parquet);
"""


def duckdb_pipeline(con, source: str, target: str) -> None:
    con.execute(DUCKDB_SQL.format(source=source, target=target, before=BEFORE_MS, after=AFTER_MS))


# ---- comparison --------------------------------------------------------------------------------

def timed(engine, pipeline, inputs, sizes, workdir, check_size, rows, outputs, suffix="") -> None:
    """Run one engine on every size, append (engine, size, seconds), keep the checked size's output."""
    for n in sizes:
        target = str(workdir / f"{engine}-{n}{suffix}")
        t0 = time.perf_counter()
        pipeline(inputs[n], target)
        rows.append((engine, n, time.perf_counter() - t0))
        if n == check_size:
            outputs[engine] = load_output(target)


def load_output(path: str) -> dict:
    t = pq.read_table(path, columns=OUTPUT_COLUMNS).to_pydict()
    return {b: (p, r, m, run) for p, b, r, m, run in zip(*(t[c] for c in OUTPUT_COLUMNS))}


def first_difference(results: dict) -> str | None:
    names = list(results)
    base_name, base = names[0], results[names[0]]
    for name in names[1:]:
        other = results[name]
        if base.keys() != other.keys():
            missing = sorted(base.keys() ^ other.keys())[:5]
            return f"{base_name} and {name} cover different batches, e.g. batch_id {missing}"
        for batch_id in sorted(base):
            if base[batch_id] != other[batch_id]:
                return (f"batch_id {batch_id}: {base_name} (partition, rejected, batch_max, running_max) = "
                        f"{base[batch_id]}, {name} = {other[batch_id]}")
    finals = []
    for name in names:
        last = {}
        for batch_id in sorted(results[name]):
            partition, _, _, running = results[name][batch_id]
            last[partition] = running
        finals.append((name, last))
    for name, last in finals[1:]:
        if last != finals[0][1]:
            return f"final running max per partition: {finals[0][0]} {finals[0][1]} vs {name} {last}"
    return None


# ---- driver -------------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"bench_append: error: {message}", file=sys.stderr)
        sys.exit(2)


def sizes_arg(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants comma-separated record counts, got {text!r}") from None
    if not values or any(v < 1000 for v in values):
        raise argparse.ArgumentTypeError(f"--sizes wants record counts >= 1000, got {text!r}")
    return sorted(set(values))


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>12,.0f}"


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[1_000_000, 10_000_000],
                        help="comma-separated record counts (default 1000000,10000000)")
    parser.add_argument("--skip-reference", action="store_true", help="do not time the reference model")
    args = parser.parse_args(argv)

    import duckdb
    import pyspark

    from implementations.spark import session

    wall = time.perf_counter()
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="ktc-bench-"))
    rows = []          # (engine, size, seconds)
    notes = []
    try:
        inputs = {}
        for n in [WARMUP_RECORDS] + args.sizes:
            t0 = time.perf_counter()
            path = workdir / f"records-{n}.parquet"
            pq.write_table(generate(n), path)
            inputs[n] = str(path)
            if n != WARMUP_RECORDS:
                notes.append(f"generate + write {n:,} records: {time.perf_counter() - t0:.1f} s")
        check_size = args.sizes[0]
        outputs: dict[str, dict] = {}

        if not args.skip_reference:
            table = pq.read_table(inputs[check_size])
            t0 = time.perf_counter()
            outputs["reference"] = run_reference(table)
            rows.append(("reference", check_size, time.perf_counter() - t0))
            del table

        session.configure(master="local[2]", **{
            "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "4", "spark.driver.memory": "4g"})
        t0 = time.perf_counter()
        spark = session.get()
        jvm_start = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            spark_pipeline(spark, inputs[WARMUP_RECORDS], str(workdir / "spark-warmup"))
            notes.append(f"Spark JVM start {jvm_start:.1f} s, warm-up ({WARMUP_RECORDS:,} records) "
                         f"{time.perf_counter() - t0:.1f} s (both excluded)")
            timed("spark", lambda i, t: spark_pipeline(spark, i, t), inputs, args.sizes, workdir, check_size,
                  rows, outputs)
            spark_bare_pipeline(spark, inputs[WARMUP_RECORDS], str(workdir / "spark-sql-warmup"))
            timed("spark-sql", lambda i, t: spark_bare_pipeline(spark, i, t), inputs, args.sizes, workdir,
                  check_size, rows, outputs)
            java = spark.sparkContext._jvm.System.getProperty("java.version")
            spark_conf = spark.conf.get("spark.sql.shuffle.partitions")
        finally:
            session.stop()

        con = duckdb.connect()
        con.execute("SET threads = 2")
        duckdb_pipeline(con, inputs[WARMUP_RECORDS], str(workdir / "duckdb-warmup.parquet"))
        timed("duckdb", lambda i, t: duckdb_pipeline(con, i, t), inputs, args.sizes, workdir,
              check_size, rows, outputs, suffix=".parquet")
        con.close()

        difference = first_difference(outputs)
        batches = len(outputs["duckdb"])
        rejected = sum(r for _, r, _, _ in outputs["duckdb"].values())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    load_after = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}; "
          f"load avg (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"versions: Python {platform.python_version()}, PySpark {pyspark.__version__} (Java {java}, local[2], "
          f"shuffle partitions {spark_conf}), DuckDB {duckdb.__version__} (threads=2), "
          f"pyarrow {pa.__version__}, numpy {np.__version__}")
    print(f"input: {PARTITIONS} partitions, batches of 1..40 records, CreateTime, before {BEFORE_MS} ms, "
          f"after {AFTER_MS} ms, profile {PROFILE}; at {check_size:,} records: {batches:,} batches, "
          f"{rejected:,} rejected")
    for note in notes:
        print(note)
    print()
    print(f"{'engine':<10} {'records':>12} {'seconds':>9} {'records/s':>12}  what")
    order = list(ENGINES)
    for engine, n, seconds in sorted(rows, key=lambda r: (r[1], order.index(r[0]))):
        print(f"{engine:<10} {n:>12,} {seconds:>9.2f} {rate(n, seconds)}  {ENGINES[engine]}")
    print()
    timing = {(e, n): s for e, n, s in rows}
    for n in args.sizes:
        print(f"Spark/DuckDB time ratio at {n:,}: {timing[('spark', n)] / timing[('duckdb', n)]:.1f}x "
              f"(target <= 3x at 10M); spark-sql/DuckDB {timing[('spark-sql', n)] / timing[('duckdb', n)]:.1f}x")
    engines = " = ".join(outputs)
    print(f"agreement at {check_size:,} ({engines}): "
          + ("OK" if difference is None else f"DIFFERENT: {difference}"))
    print(f"wall time: {time.perf_counter() - wall:.0f} s")
    return 0 if difference is None else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("bench_append: interrupted", file=sys.stderr)
        sys.exit(130)
