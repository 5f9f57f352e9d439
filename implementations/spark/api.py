"""The public DataFrame API: evaluate Kafka-source-shaped records under a profile.

    from ktc.implementations.spark import api
    from ktc.spark import session
    out = api.evaluate(records_df, profile="kafka-4")
    out.batches   # ProduceResponse v8 per batch: error_code, error_message, record_errors, base_offset, lat
    out.records   # one verdict row per input record: verdict, rule_id, error_code, reason, now_ms, ts_ms, lower, upper

``records_df`` carries contract.RECORD_COLUMNS plus the topic config columns of
contract.TOPIC_COLUMNS (minus ``scenario``/``topic``).  ``scenario`` and ``topic`` may be absent: the
input is then one topic of one scenario, grouped by ``partition`` (and ``batch_id``) alone, and the
outputs have no such columns either.  ``header_max`` may be absent, as in Spark's
Kafka source: the batch header's MaxTimestamp is then the producer's own, ``max(-1, timestamps)``
of the batch, computed (one window) only over the records of LogAppendTime batches
(``timestampType = 1``), the only ones whose verdict reads it.  Bad input (a missing or mistyped column,
an unknown profile) raises ContractError naming it, before any job runs; a null timestamp fails the job
that reads it with the same kind of message (no separate scan of the input first).
"""

from __future__ import annotations

import functools

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ktc.specs.profiles import ProfileError
from ktc.specs.profiles import get as get_profile

from . import append, contract, int64
from .contract import ContractError

CONFIG_COLUMNS = {k: v for k, v in contract.TOPIC_COLUMNS.items() if k not in ("scenario", "topic", "created_clocks")}


class Outputs:
    """``batches`` and ``records``; the records' plan is built on first use, not for a caller of batches only."""

    def __init__(self, batches: DataFrame, verdicts: DataFrame):
        self.batches, self._verdicts = batches, verdicts

    @functools.cached_property
    def records(self) -> DataFrame:
        return record_rows(self._verdicts, self.batches)


def with_profile(df: DataFrame, profile: str, no_timestamp: int = -1) -> DataFrame:
    try:
        p = get_profile(profile)
    except ProfileError as error:
        raise ContractError(str(error)) from None
    switches = {
        k: getattr(p, k)
        for k in (
            "arithmetic",
            "validation",
            "long_max_fallback",
            "default_before_max_ms",
            "default_after_max_ms",
            "lat_batch_check",
            "future_warning",
            "negative_timestamps",
            "batch_max_floor",
            "dual_timestamps",
        )
    }
    switches["log_append_time_rule"] = p.log_append_time
    switches["sentinel"] = no_timestamp if p.sentinel == "parameter" else -1
    return df.withColumns({name: F.lit(value) for name, value in switches.items()})


def evaluate(records: DataFrame, profile: str, no_timestamp: int = -1) -> Outputs:
    contract.check_records(records, extra=CONFIG_COLUMNS, optional=("header_max", "scenario", "topic"))
    switches = lambda df: with_profile(df, profile, no_timestamp)
    records = contract.refusing_null_timestamps(records)
    verdicts = append.with_record_verdicts(switches(with_header_max(records)))
    batches = append.batches(verdicts, with_records=False, switches=switches)
    return Outputs(batches, verdicts)


def with_header_max(records: DataFrame) -> DataFrame:
    """The producer's header MaxTimestamp where the input has none; other batches never read it."""
    if "header_max" in records.columns:
        return records
    stamped = F.col("timestampType").eqNullSafe(1)
    batch = Window.partitionBy(*append.partition_key(records), "batch_id")
    own = F.greatest(F.max("timestamp_ms").over(batch), F.lit(-1).cast("bigint"))
    return (
        records.filter(~stamped)
        .withColumn("header_max", F.lit(None).cast("bigint"))
        .unionByName(records.filter(stamped).withColumn("header_max", own))
    )


def record_rows(verdicts: DataFrame, batches: DataFrame) -> DataFrame:
    keys = append.partition_key(verdicts) + ["batch_id"]
    outcome = batches.select(*keys, F.col("error_code").alias("batch_error"), "lat")
    joined = verdicts.join(outcome, keys)
    wrapping = F.col("arithmetic") == "wrapping"
    return joined.select(
        *keys,
        "offset",
        verdict().alias("verdict"),
        rule_id().alias("rule_id"),
        F.col("batch_error").alias("error_code"),
        F.col("record_error").alias("reason"),
        F.col("broker_now_ms").alias("now_ms"),
        F.col("timestamp_ms").alias("ts_ms"),
        int64.sub("broker_now_ms", "eff_before", wrapping).cast("string").alias("lower"),
        int64.add("broker_now_ms", "eff_after", wrapping).cast("string").alias("upper"),
    )


def verdict() -> Column:
    return (
        F.when(F.col("batch_error") != 0, F.lit("rejected"))
        .when(F.col("lat").isNotNull(), F.lit("overwritten"))
        .otherwise(F.lit("appended"))
    )


def rule_id() -> Column:
    own = F.col("record_error").isNotNull()
    past = F.col("seen_ms") <= F.col("broker_now_ms")
    return (
        F.when(F.col("control"), F.lit("KIP-937.orthogonal-control-batch"))
        .when(own & (F.col("validation") == "abs-difference"), F.lit("KIP-937.legacy-abs-difference"))
        .when(own & F.col("record_error").startswith("Invalid timestamp type"), F.lit("KIP-937.per-record-validation"))
        .when(own & past, F.lit("KIP-937.before-bound"))
        .when(own, F.lit("KIP-937.after-bound"))
        .when(F.col("batch_error") == 32, F.lit("KIP-937.whole-batch-rejection"))
        .when(F.col("batch_error") == -1, F.lit("KIP-228.rebuild-fails-on-negative"))
        .when(F.col("lat").isNotNull(), F.lit("KIP-32.log-append-time-assigned"))
        .when(~F.col("checked"), F.lit("KIP-228.minus-one-is-no-timestamp"))
        .otherwise(F.lit("KIP-32.create-time-kept"))
    )
