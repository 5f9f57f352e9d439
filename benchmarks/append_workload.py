"""The workload of benchmarks/bench_append.py: its records, the reference model's answer, the hand-written queries.

The same rules (KIP-937 per-record validation under CreateTime in Java long arithmetic, -1 exempt;
whole-batch rejection; the batch max of accepted batches; per partition the running max of accepted
batch maxima), written once per engine: ``run_reference`` (ktc.reference.run), ``SPARK_BARE_SQL``
(hand-written Spark SQL, ANSI off so that long arithmetic wraps like Java) and ``DUCKDB_SQL``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20240937
PARTITIONS = 16
START_MS = 1_700_000_000_000
BEFORE_MS, AFTER_MS, PROFILE = 86_400_000, 3_600_000, "kafka-4"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
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
    """The hand-written Spark SQL, Parquet to Parquet, ANSI off so that long arithmetic wraps like Java."""
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
