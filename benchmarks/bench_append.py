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

from append_engines import (  # noqa: E402  (beside this script: its engines)
    AFTER_MS,
    BEFORE_MS,
    ENGINES,
    OUTPUT_COLUMNS,
    PARTITIONS,
    PROFILE,
    REPEAT_UP_TO,
    WARMUP_RECORDS,
    duckdb_pipeline,
    generate,
    run_reference,
    spark_bare_pipeline,
    spark_result,
)


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
