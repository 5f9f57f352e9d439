"""Benchmark: the KIP-937 append path in the reference model, the Spark implementation and DuckDB.

    python benchmarks/bench_append.py [--sizes 1000000,10000000] [--repeat 3] [--skip-reference]

The same rules (KIP-937 per-record validation under CreateTime in Java long arithmetic, -1 exempt;
whole-batch rejection; the batch max of accepted batches; per partition the running max of accepted
batch maxima) in the reference model (smallest size only), the Spark implementation (api.evaluate),
one hand-written Spark SQL query and one DuckDB query, each from the same Parquet to Parquet.
Engines run interleaved, --repeat times per size up to 10M (once above), best kept; Spark's event log gives each
kept run's spill and executor CPU.  The smallest size is compared batch by batch (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import collections
import json
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
BEFORE_MS, AFTER_MS, PROFILE = 86_400_000, 3_600_000, "kafka-4"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
WARMUP_RECORDS, REPEAT_UP_TO = 50_000, 10_000_000
ENGINES = {
    "reference": "ktc.reference.run, one History per partition (pure Python)",
    "spark": "ktc.implementations.spark api.evaluate(df, 'kafka-4').batches + running max window",
    "spark-sql": "for scale: the DuckDB query as Spark SQL (ANSI off: long wraps like Java)",
    "duckdb": "DuckDB SQL of the same rules (HUGEINT emulates Java long wrap)",
}
OUTPUT_COLUMNS = ["partition", "batch_id", "rejected", "batch_max", "running_max"]


def generate(n: int, seed: int = SEED) -> pa.Table:
    """n records in batches of 1..40 over PARTITIONS partitions, deterministic for (n, seed)."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.geometric(0.12, size=n // 4 + 64), 1, 40)
    while sizes.sum() < n:  # never taken for n >= ~1000, kept for safety
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
    late = kind < 0.015  # before now - 1 day
    early = (kind >= 0.015) & (kind < 0.03)  # beyond now + 1 hour
    none = (kind >= 0.03) & (kind < 0.05)  # -1, NO_TIMESTAMP
    ts[late] = now[late] - BEFORE_MS - 1 - rng.integers(0, 30 * 86_400_000, size=int(late.sum()))
    ts[early] = now[early] + AFTER_MS + 1 + rng.integers(0, 7 * 86_400_000, size=int(early.sum()))
    ts[none] = -1
    bounds = (now - BEFORE_MS, now - BEFORE_MS - 1, now + AFTER_MS, now + AFTER_MS + 1)
    for shift, bound in enumerate(bounds):  # ~0.05% each exactly on / just past a bound
        at = (kind >= 0.05 + shift * 0.0005) & (kind < 0.05 + (shift + 1) * 0.0005)
        ts[at] = bound[at]
    extremes = [INT64_MIN, INT64_MAX, INT64_MIN + 1, 0, -2, -86_400_001]  # Java wrap-around and negatives
    for i, value in enumerate(extremes):
        ts[(i + 1) * (n // (len(extremes) + 1))] = value
    columns = {
        "partition": batch_partition[batch_id],
        "batch_id": batch_id,
        "offset": offset,
        "timestamp_ms": ts,
        "broker_now_ms": now,
    }
    return pa.table({name: pa.array(values) for name, values in columns.items()})


def run_reference(table: pa.Table) -> dict:
    """Per-batch (rejected, batch_max, running_max) from reference.run, one History per partition."""
    from ktc import reference
    from ktc.reference import types as rt

    config = rt.TopicConfig(before_max_ms=BEFORE_MS, after_max_ms=AFTER_MS)
    part, bid, now = (table[c].to_numpy() for c in ("partition", "batch_id", "broker_now_ms"))
    ts = table["timestamp_ms"].to_numpy().tolist()
    starts = np.flatnonzero(np.r_[True, bid[1:] != bid[:-1]])
    ops, ids, clock = {p: [rt.CreateTopic("t", config)] for p in range(PARTITIONS)}, {}, {}
    for s, e in zip(starts.tolist(), np.r_[starts[1:], len(bid)].tolist()):
        p, t = int(part[s]), int(now[s])
        if t != clock.get(p, START_MS):
            ops[p].append(rt.Advance(t - clock.get(p, START_MS)))
            clock[p] = t
        ops[p].append(rt.Produce("t", rt.Batch(tuple(rt.Record(x) for x in ts[s:e]))))
        ids.setdefault(p, []).append(int(bid[s]))
    out = {}
    for p in range(PARTITIONS):
        trace = reference.run(rt.History(PROFILE, tuple(ops[p]) + (rt.Fetch("t"),)))
        stored = {b.base_offset: b.max_timestamp for b in trace[-1].batches}
        produced = [r for r in trace[:-1] if isinstance(r, rt.ProduceResult)]
        assert trace[0].error_code == 0 and len(produced) == len(ids.get(p, []))
        running = -1
        for batch_id, result in zip(ids.get(p, []), produced):
            batch_max = None if result.error_code else stored[result.base_offset]
            running = running if batch_max is None else max(running, batch_max)
            out[batch_id] = (p, result.error_code != 0, batch_max, running)
    return out


def spark_result(spark, source: str):
    """The Spark implementation's per-batch result on the Parquet input, as a DataFrame (lazy)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from ktc.implementations.spark import api

    null_long = F.lit(None).cast("bigint")
    records = spark.read.parquet(source).select(  # one topic: no scenario or topic column, as in the SQL
        F.col("partition"),
        F.col("offset"),
        F.lit(None).cast("binary").alias("key"),
        F.lit(b"").cast("binary").alias("value"),
        F.lit(0).alias("timestampType"),
        F.col("timestamp_ms"),
        F.col("batch_id").cast("int").alias("batch_id"),
        F.lit("none").alias("codec"),
        F.lit(False).alias("control"),
        F.lit(False).alias("extended"),
        F.lit(0).alias("broker_id"),
        F.col("broker_now_ms"),
        F.array("broker_now_ms").alias("clocks"),
        F.lit("CreateTime").alias("topic_type"),
        F.lit(BEFORE_MS).cast("bigint").alias("before_max_ms"),
        F.lit(AFTER_MS).cast("bigint").alias("after_max_ms"),
        F.lit("producer").alias("compression_type"),
        *(
            null_long.alias(c)
            for c in ("difference_max_ms", "segment_ms", "retention_ms", "retention_max_eventtime_ms")
        ),
    )
    batches = api.evaluate(records, PROFILE).batches
    order = (
        Window.partitionBy("partition").orderBy("batch_id").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    accepted = F.col("error_code") == 0
    return batches.select(
        "partition",
        F.col("batch_id").cast("bigint").alias("batch_id"),
        (~accepted).alias("rejected"),
        F.when(accepted, F.col("batch_max")).alias("batch_max"),
        F.coalesce(F.max(F.when(accepted, F.col("batch_max"))).over(order), F.lit(-1).cast("bigint")).alias(
            "running_max"
        ),
    )


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


DUCKDB_SQL = """
CREATE OR REPLACE MACRO jlong(x) AS                     -- the Java long with the low 64 bits of x
    CASE WHEN x > 9223372036854775807 THEN x - 18446744073709551616::HUGEINT
         WHEN x < -9223372036854775808 THEN x + 18446744073709551616::HUGEINT ELSE x END;
COPY (
    WITH records AS (
        SELECT partition, batch_id, timestamp_ms AS ts, jlong(broker_now_ms::HUGEINT - timestamp_ms) AS diff
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


def run_once(engine: str, pipeline, n: int, source: str, workdir: Path, rep: int, spark=None) -> tuple[float, str]:
    """One timed run; a Spark job description names it (``engine n #rep``) in the event log."""
    target = str(workdir / f"{engine}-{n}-{rep}{'.parquet' if engine == 'duckdb' else ''}")
    if spark is not None:
        spark.sparkContext.setJobDescription(f"{engine} {n} #{rep}")
    t0 = time.perf_counter()
    pipeline(source, target)
    return time.perf_counter() - t0, target


def time_engines(engines: dict, inputs, sizes, workdir, repeat, check_size, outputs, spark=None) -> dict:
    """Per size, the engines interleaved ``repeat`` times (once above REPEAT_UP_TO): (engine, n) -> (best s, rep)."""
    best = {}
    for n in sizes:
        for rep in range(repeat if n <= REPEAT_UP_TO else 1):
            for engine, pipeline in engines.items():
                seconds, target = run_once(engine, pipeline, n, inputs[n], workdir, rep, spark)
                if (engine, n) not in best or seconds < best[(engine, n)][0]:
                    best[(engine, n)] = (seconds, rep)
                if n == check_size and rep == 0:
                    outputs[engine] = load_output(target)
    return best


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
                return (
                    f"batch_id {batch_id}: {base_name} (partition, rejected, batch_max, running_max) = "
                    f"{base[batch_id]}, {name} = {other[batch_id]}"
                )
    finals = [(name, {results[name][b][0]: results[name][b][3] for b in sorted(results[name])}) for name in names]
    for name, last in finals[1:]:
        if last != finals[0][1]:
            return f"final running max per partition: {finals[0][0]} {finals[0][1]} vs {name} {last}"
    return None


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"bench_append: error: {message}", file=sys.stderr)
        sys.exit(2)


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--repeat wants a whole number >= 1, got {text!r}")
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
    parser.add_argument("--repeat", type=positive_int, default=3, help="timed runs per engine and size up to 10M")
    parser.add_argument("--skip-reference", action="store_true", help="do not time the reference model")
    return parser.parse_args(argv)


def write_inputs(sizes: list[int], workdir: Path, notes: list) -> dict:
    inputs = {}
    for n in [WARMUP_RECORDS] + sizes:
        t0, inputs[n] = time.perf_counter(), str(workdir / f"records-{n}.parquet")
        pq.write_table(generate(n), inputs[n])
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
        },
    )
    t0 = time.perf_counter()
    spark, jvm_start = session.get(), time.perf_counter() - t0
    t0 = time.perf_counter()  # the warm-up
    engines = {
        "spark": lambda i, t: spark_result(spark, i).write.mode("overwrite").parquet(t),
        "spark-sql": lambda i, t: spark_bare_pipeline(spark, i, t),
    }
    try:
        time_engines(engines, inputs, [WARMUP_RECORDS], workdir, 1, None, {}, spark)
        notes.append(
            f"Spark JVM start {jvm_start:.1f} s, warm-up ({WARMUP_RECORDS:,} records) "
            f"{time.perf_counter() - t0:.1f} s (both excluded)"
        )
        best = time_engines(engines, inputs, args.sizes, workdir, args.repeat, args.sizes[0], outputs, spark)
        info = {
            "java": spark.sparkContext._jvm.System.getProperty("java.version"),
            "partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        }
    finally:
        session.stop()
    return best, event_log_figures(log_dir), info


def time_duckdb(inputs, args, workdir: Path, outputs) -> dict:
    import duckdb

    with duckdb.connect(config={"threads": 2}) as con:
        engines = {"duckdb": lambda i, t: duckdb_pipeline(con, i, t)}
        time_engines(engines, inputs, [WARMUP_RECORDS], workdir, 1, None, {})
        return time_engines(engines, inputs, args.sizes, workdir, args.repeat, args.sizes[0], outputs)


def report(rows, best, spilled, info, args, outputs, notes, load_before) -> None:
    import duckdb
    import pyspark

    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}; "
        f"load avg (1 min) {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print(
        f"versions: Python {platform.python_version()}, PySpark {pyspark.__version__} (Java {info['java']}, "
        f"local[2], shuffle partitions {info['partitions']}), DuckDB {duckdb.__version__} (threads=2), "
        f"pyarrow {pa.__version__}, numpy {np.__version__}"
    )
    batches, rejected = len(outputs["duckdb"]), sum(r for _, r, _, _ in outputs["duckdb"].values())
    print(
        f"input: {PARTITIONS} partitions, batches of 1..40 records, CreateTime, before {BEFORE_MS} ms, "
        f"after {AFTER_MS} ms, profile {PROFILE}; at {args.sizes[0]:,} records: {batches:,} batches, "
        f"{rejected:,} rejected"
    )
    print(
        "\n".join(notes) + f"\n\nbest of {args.repeat} interleaved runs per engine and size up to "
        f"{REPEAT_UP_TO:,}, one run above"
    )
    print(f"{'engine':<10} {'records':>12} {'seconds':>9} {'records/s':>12}  what")
    rows = rows + [(engine, n, seconds) for (engine, n), (seconds, _) in best.items()]
    for engine, n, seconds in sorted(rows, key=lambda r: (r[1], list(ENGINES).index(r[0]))):
        print(f"{engine:<10} {n:>12,} {seconds:>9.2f} {n / seconds:>12,.0f}  {ENGINES[engine]}")
    print_ratios(best, spilled, args.sizes)


def print_ratios(best, spilled, sizes) -> None:
    run = lambda engine, n: spilled.get(f"{engine} {n} #{best[(engine, n)][1]}", collections.Counter())
    print(
        "\nSpark spill and executor CPU of each kept run, from Spark's event log (task metrics "
        "'Memory/Disk Bytes Spilled', 'Executor CPU Time' summed over the run's jobs):"
    )
    for n, engine in ((n, engine) for n in sizes for engine in ("spark", "spark-sql")):
        f = run(engine, n)
        print(
            f"  {engine:<10} {n:>12,}: memory spilled {f['memory']:>14,} B, disk spilled {f['disk']:>14,} B, "
            f"executor CPU {f['cpu']:7.1f} s"
        )
    print()
    for n in sizes:
        s, q, d = (best[(e, n)][0] for e in ("spark", "spark-sql", "duckdb"))
        cpu = run("spark", n)["cpu"] / max(run("spark-sql", n)["cpu"], 1e-9)
        print(
            f"at {n:>11,}: spark/spark-sql {s / q:.2f}x (target <= 1.3x at 10M), spark/duckdb {s / d:.1f}x, "
            f"spark-sql/duckdb {q / d:.1f}x; executor CPU spark/spark-sql {cpu:.2f}x"
        )


def main(argv=None) -> int:
    args = parse(argv)
    wall, load_before = time.perf_counter(), os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="ktc-bench-"))
    rows, notes, outputs = [], [], {}  # reference timing, printed notes, per-batch results at the smallest size
    try:
        inputs = write_inputs(args.sizes, workdir, notes)
        if not args.skip_reference:
            table, t0 = pq.read_table(inputs[args.sizes[0]]), time.perf_counter()
            outputs["reference"] = run_reference(table)
            rows.append(("reference", args.sizes[0], time.perf_counter() - t0))
        best, spilled, info = time_spark(inputs, args, workdir, outputs, notes)
        best.update(time_duckdb(inputs, args, workdir, outputs))
        difference = first_difference(outputs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(rows, best, spilled, info, args, outputs, notes, load_before)
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
