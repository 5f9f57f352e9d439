"""One Spark job for a whole set of histories: the append stage, the sequential stage, collect.

The driver has the histories, so it builds the inputs whole: each record carries its topic's config and its
scenario's profile switches (no join in the plan, no broadcast job), and each topic partition in use has one
``Open`` row with the constants its log is opened with (segments.run_bucket), sorted before its operations.
The append stage is SQL text (append.py): the plan costs a few dozen py4j calls, not thousands.
"""

from __future__ import annotations

import pyarrow as pa

from . import append, contract, segments
from .api import SWITCHES
from .sql import Switches, query

SEQUENTIAL_COLUMNS = [
    "scenario",
    "topic",
    "partition",
    "batch_id",
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
    "topic_type",
    "timestampType",
    "codec",
    "rebuild",
]
TOPIC_CONFIG = ["topic_type", "before_max_ms", "after_max_ms", "difference_max_ms", "compression_type"]
APPEND_SWITCHES = [*SWITCHES, "log_append_time_rule", "sentinel"]
TOPIC_CONSTANTS = ["segment_ms", "retention_ms", "retention_max_eventtime_ms", "created_clocks"]
PROFILE_CONSTANTS = [
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


def run_pipeline(spark, histories, flat, profile_rows, buckets: int) -> dict:
    topics, profiles = contract.table(flat.topics, contract.TOPIC_COLUMNS), pa.Table.from_pylist(profile_rows)
    row_of = {(t["scenario"], t["topic"]): i for i, t in enumerate(flat.topics)}
    records = spark.createDataFrame(records_table(flat, topics, profiles, row_of))
    stage = append.evaluate("{records}", records.columns, Switches())  # each scenario's switches: columns
    produced = query(
        spark,
        f"SELECT {', '.join(SEQUENTIAL_COLUMNS)}, 'Produce' AS kind, CAST(NULL AS BIGINT) AS "
        f"target, CAST(NULL AS INT) AS version FROM {stage}",
        records=records,
    )
    events = spark.createDataFrame(contract.table(flat.events, contract.EVENT_COLUMNS))
    opens = spark.createDataFrame(opens_table(flat, topics, profiles, row_of))
    combined = produced.unionByName(events, allowMissingColumns=True).unionByName(opens, allowMissingColumns=True)
    out = (
        combined.selectExpr("*", f"scenario % {buckets} AS bucket")
        .groupBy("bucket")
        .applyInArrow(segments.run_bucket, "scenario long, batch_id int, payload string")
    )
    table = out.toArrow()
    return {
        (s, b): p
        for s, b, p in zip(table["scenario"].to_pylist(), table["batch_id"].to_pylist(), table["payload"].to_pylist())
    }


def records_table(flat, topics: pa.Table, profiles: pa.Table, row_of: dict) -> pa.Table:
    """Every produced record with its topic's config and its scenario's switches beside it."""
    records = contract.table(flat.records, contract.RECORD_COLUMNS)
    configs = topics.select(TOPIC_CONFIG).take([row_of[(r["scenario"], r["topic"])] for r in flat.records])
    return beside(records, configs, profiles.select(APPEND_SWITCHES).take(records["scenario"]))


def opens_table(flat, topics: pa.Table, profiles: pa.Table, row_of: dict) -> pa.Table:
    """One ``Open`` row per topic partition with a produce or an event: the constants of its log."""
    used = sorted({(r["scenario"], r["topic"], r["partition"]) for r in (*flat.records, *flat.events)})
    scenario, topic, partition = (list(column) for column in zip(*used))
    keys = pa.table(
        {
            "scenario": pa.array(scenario, pa.int64()),
            "topic": pa.array(topic, pa.string()),
            "partition": pa.array(partition, pa.int32()),
            "batch_id": pa.array([-1] * len(used), pa.int32()),
            "kind": pa.array(["Open"] * len(used), pa.string()),
        }
    )
    constants = topics.select(TOPIC_CONSTANTS).take([row_of[(s, t)] for s, t in zip(scenario, topic)])
    return beside(keys, constants, profiles.select(PROFILE_CONSTANTS).take(scenario))


def beside(*tables: pa.Table) -> pa.Table:
    """The tables' columns side by side (tables of one length, row for row)."""
    columns = [(name, column) for t in tables for name, column in zip(t.column_names, t.columns)]
    return pa.table(dict(columns))
