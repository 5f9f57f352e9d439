"""Benchmark: ``ktc audit`` throughput in records/s, against reading the same data and nothing else.

    python benchmarks/bench_audit.py [--sizes 1000000,10000000] [--broker-records 200000] [--seed 7]

Per size, numpy writes a CreateTime topic export to Parquet (16 partitions, batches of 1..40
records, ~1 % planted future timestamps past a one-hour after bound, ~0.5 % LogAppendTime-typed
records, some going backwards); then, in one Spark session (local[2]):

  read      spark.read.parquet(...).agg(max of every column)     the baseline: reading every column
  audit     ktc.audit.audit(df, facts) -- every check, counts, samples, the violations frame

With ``--broker-records N`` (0 to skip) a local Kafka broker ktc starts gets N records produced by
ktc's client, and the topic is audited through ``--source ktc`` and ``--source kafka`` (Spark's own
Kafka source) with the read included, against a plain Kafka-source count.  Prints records/s and the
audit/read ratio for each, and checks the planted counts (exit 1 when one differs).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

READ_MS, HOUR = 1_800_000_000_000, 3_600_000
CONFIGS = {"message.timestamp.type": "CreateTime", "message.timestamp.after.max.ms": str(HOUR)}


def generate(n: int, seed: int) -> tuple[pa.Table, dict[str, int]]:
    """An export of n records with planted future timestamps and backwards LogAppendTime; planted counts."""
    rng = np.random.default_rng(seed)
    partition = np.sort(rng.integers(0, 16, size=n, dtype=np.int32))
    offset = np.arange(n, dtype=np.int64) - np.searchsorted(partition, partition)
    ts = READ_MS - rng.integers(0, 48 * HOUR, size=n)
    future = rng.random(n) < 0.01
    ts[future] = READ_MS + HOUR + 1 + rng.integers(0, 24 * HOUR, size=int(future.sum()))
    lat = (~future) & (rng.random(n) < 0.005)
    ts[lat] = READ_MS - 100 * HOUR + offset[lat]  # rising along each partition ...
    back = lat & (rng.random(n) < 0.2) & (offset > 1000)
    ts[back] -= 10 * HOUR  # ... except these
    table = pa.table(
        {"partition": partition, "offset": offset, "timestamp_ms": ts, "timestampType": lat.astype(np.int32)}
    )
    return table, {"create-time-within-after-bound": int(future.sum()), "timestamp-type-matches-config": int(lat.sum())}


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def file_round(spark, path: str, n: int, planted: dict) -> list[str]:
    from pyspark.sql import functions as F

    from ktc.audit import audit
    from ktc.audit.facts import facts_from_configs

    df = spark.read.parquet(path)
    _, read_s = timed(lambda: df.agg(*[F.max(c) for c in df.columns]).collect())
    facts = facts_from_configs("bench", CONFIGS, "kafka-4", read_ms=READ_MS)
    result, audit_s = timed(lambda: audit(spark.read.parquet(path), facts, samples=0))
    counts = {r.check: r.violating for r in result.rows}
    wrong = [f"{c}: audit {counts[c]}, planted {v}" for c, v in planted.items() if counts[c] != v]
    print(
        f"file    {n:>12,} read {read_s:7.2f} s {n / read_s:>12,.0f}/s   audit {audit_s:7.2f} s "
        f"{n / audit_s:>12,.0f}/s   audit/read {audit_s / read_s:5.1f}x   planted {'OK' if not wrong else wrong}"
    )
    return wrong


def produce_topic(client, topic: str, n: int, seed: int) -> int:
    """n records in batches of 1000 over 4 partitions, ~1 % two hours ahead; returns how many are ahead."""
    from ktc.kafka.client import admin, wire
    from ktc.reference.types import Batch, Record

    rng, now, ahead = np.random.default_rng(seed), wire.now_ms(), 0
    assert client.create_topic(topic, {"message.timestamp.after.max.ms": 2**63 - 1}, partitions=4)[0] == 0
    for start in range(0, n, 1000):
        stamps = now - rng.integers(0, HOUR, size=min(1000, n - start))
        future = rng.random(len(stamps)) < 0.01
        stamps[future] = now + 2 * HOUR
        ahead += int(future.sum())
        out = client.produce(topic, Batch(tuple(Record(int(t)) for t in stamps)), partition=(start // 1000) % 4)
        assert out.error_code == 0, out
    assert client.call(admin.alter_topic_config(topic, "message.timestamp.after.max.ms", HOUR))[0] == 0
    return ahead


def broker_round(spark, n: int, seed: int) -> list[str]:
    """Audit n records on a local broker through ktc's client and Spark's Kafka source, reads included."""
    from ktc.audit import audit, sources
    from ktc.audit.facts import facts_from_configs
    from ktc.kafka.client import wire
    from ktc.kafka.processes.broker import LocalBroker

    with LocalBroker() as broker, wire.Client(broker.bootstrap, timeout_s=120) as client:
        ahead = produce_topic(client, "bench-audit", n, seed)
        facts = facts_from_configs("bench-audit", CONFIGS, "kafka-4")
        _, base_s = timed(lambda: sources.read_spark_kafka(spark, broker.bootstrap, "bench-audit").count())
        via_spark, spark_s = timed(
            lambda: audit(sources.read_spark_kafka(spark, broker.bootstrap, "bench-audit"), facts, live=True, samples=0)
        )
        (table, read_ms), read_s = timed(lambda: sources.read_ktc(client, "bench-audit"))
        via_ktc, ktc_s = timed(lambda: audit(spark.createDataFrame(table), replace(facts, read_ms=read_ms), samples=0))
    print(f"broker  {n:>12,} Kafka-source count {base_s:6.2f} s {n / base_s:>10,.0f}/s")
    print(
        f"        audit, Spark's Kafka source {spark_s:6.2f} s {n / spark_s:>10,.0f}/s  "
        f"({spark_s / base_s:.1f}x the count)"
    )
    print(
        f"        audit, ktc's client         {read_s + ktc_s:6.2f} s {n / (read_s + ktc_s):>10,.0f}/s  (read "
        f"{read_s:.2f} s + audit {ktc_s:.2f} s; {(read_s + ktc_s) / base_s:.1f}x the count)"
    )
    found = [{r.check: r.violating for r in a.rows}["create-time-within-after-bound"] for a in (via_spark, via_ktc)]
    return [] if found == [ahead, ahead] else [f"broker: after-bound found {found}, planted {ahead}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--broker-records", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        sizes = [int(v) for v in args.sizes.split(",") if v]
    except ValueError:
        print(f"bench_audit: error: --sizes wants comma-separated record counts, got {args.sizes!r}", file=sys.stderr)
        return 2
    import pyspark

    from ktc.audit import connector
    from ktc.spark import session

    coordinate, why = connector.coordinate(pyspark.__version__)
    session.configure(master="local[2]", **{"spark.jars.packages": coordinate, "spark.driver.memory": "4g"})
    spark = session.get()
    print(f"Spark {pyspark.__version__} local[2]; {why}; seed {args.seed}")
    workdir = Path(tempfile.mkdtemp(prefix="ktc-bench-audit-"))
    wrong = []
    try:
        for n in sizes:
            table, planted = generate(n, args.seed)
            path = str(workdir / f"export-{n}.parquet")
            pq.write_table(table, path)
            wrong += file_round(spark, path, n, planted)
        if args.broker_records:
            wrong += broker_round(spark, args.broker_records, args.seed)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
