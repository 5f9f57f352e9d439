"""One Spark job for a whole set of histories: join, append stage, sequential stage, collect."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import functions as F

from . import append, contract, segments

SEQUENTIAL_COLUMNS = [
    "scenario",
    "topic",
    "partition",
    "batch_id",
    "kind",
    "error_code",
    "record_errors",
    "lat",
    "warnings",
    "control",
    "base_offset",
    "stored",
    "creates",
    "batch_max",
    "clocks",
    "broker_id",
    "broker_now_ms",
    "target",
    "version",
    "topic_type",
    "timestampType",
    "codec",
    "rebuild",
]
PARTITION_CONSTANTS = [
    "segment_ms",
    "retention_ms",
    "retention_max_eventtime_ms",
    "created_clocks",
    "roll_basis",
    "retention_basis",
    "list_offsets_scope",
    "batch_max_floor",
    "event_time_retention",
    "arithmetic",
    "sentinel",
    "dual_timestamps",
    "max_timestamp_offset",
    "list_offsets_max_version",
    "list_offsets_targets",
    "unknown_negative_target",
]


def frame(spark, rows, columns):
    return spark.createDataFrame(contract.table(rows, columns))


def run_pipeline(spark, histories, flat, profile_rows, buckets: int) -> dict:
    topics = F.broadcast(frame(spark, flat.topics, contract.TOPIC_COLUMNS))
    profiles = F.broadcast(spark.createDataFrame(pa.Table.from_pylist(profile_rows)))
    records = (
        frame(spark, flat.records, contract.RECORD_COLUMNS)
        .join(topics, ["scenario", "topic"])
        .join(profiles, "scenario")
    )
    produced = (
        append.evaluate(records, lambda b: b.join(profiles.select("scenario", *append.PROFILE_SWITCHES), "scenario"))
        .withColumn("kind", F.lit("Produce"))
        .withColumn("target", F.lit(None).cast("bigint"))
        .withColumn("version", F.lit(None).cast("int"))
    )
    events = frame(spark, flat.events, contract.EVENT_COLUMNS).join(
        topics.select("scenario", "topic", "topic_type"), ["scenario", "topic"]
    )
    combined = produced.select(*SEQUENTIAL_COLUMNS).unionByName(events, allowMissingColumns=True)
    combined = combined.join(topics, ["scenario", "topic", "topic_type"]).join(profiles, "scenario")
    combined = combined.select(*SEQUENTIAL_COLUMNS, *PARTITION_CONSTANTS).withColumn(
        "bucket", F.col("scenario") % buckets
    )
    out = combined.groupBy("bucket").applyInArrow(segments.run_bucket, "scenario long, batch_id int, payload string")
    table = out.toArrow()
    return {
        (s, b): p
        for s, b, p in zip(table["scenario"].to_pylist(), table["batch_id"].to_pylist(), table["payload"].to_pylist())
    }
