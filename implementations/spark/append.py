"""The append path as declarative DataFrame operations (no Python UDFs).

Per record: which timestamp the broker reads, whether it is exempt, whether it is out of range
(Java long emulated in decimal), the exact error text.  Per batch: the ProduceResponse v8 shape
(error_code, error_message, record_errors), then, over the batches of a partition in arrival
order, the base offset (running sum of accepted sizes), the LogAppendTime (the clock, or its
running max where the profile keeps it monotonic) and the stored timestamps and batch max.
"""

from __future__ import annotations

import functools

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from . import int64

MAX = 9223372036854775807
BATCH_REJECTED = "One or more records have been rejected due to invalid timestamp"
PARTITION_KEY = ["scenario", "topic", "partition"]


def partition_key(df: DataFrame) -> list[str]:
    """The columns of PARTITION_KEY the input has: ``partition`` always; an input without ``scenario``
    or ``topic`` holds one of each, and is not grouped on a column it does not have."""
    return [c for c in PARTITION_KEY if c in df.columns or c == "partition"]


def limits() -> dict[str, Column]:
    """Effective before/after: profile defaults, abs-difference, and the Long.MAX fallback."""
    difference = F.coalesce("difference_max_ms", F.lit(MAX))
    before = F.coalesce("before_max_ms", "default_before_max_ms")
    after = F.coalesce("after_max_ms", "default_after_max_ms")
    fallback = lambda v: F.when(F.col("long_max_fallback") & (v == F.lit(MAX)), difference).otherwise(v)
    legacy = F.col("validation") == "abs-difference"
    return {
        "eff_before": F.when(legacy, difference).otherwise(fallback(before)),
        "eff_after": F.when(legacy, difference).otherwise(fallback(after)),
    }


def no_ts(ts: Column) -> Column:
    return (ts == F.col("sentinel")) | ((F.col("sentinel") != -1) & (ts == -1) & ~F.col("extended"))


def with_record_verdicts(df: DataFrame) -> DataFrame:
    """Three projections: what the broker reads, whether it is checked and in range, then the verdict columns."""
    typed_lat = (F.col("timestampType") == 1) & (F.col("lat_batch_check") != "never")
    seen = F.when(typed_lat, F.col("header_max")).otherwise(F.col("timestamp_ms"))
    df = df.withColumns({"seen_ms": seen, "rebuild": rebuild(), **limits()})
    df = df.withColumns(
        {"checked": (F.col("topic_type") == "CreateTime") & ~no_ts(F.col("seen_ms")), "out_of_range": out_of_range()}
    )
    return df.withColumns(verdict_columns())


def verdict_columns() -> dict[str, Column]:
    wrong_type = (
        (F.col("timestampType") == 1)
        & (F.col("lat_batch_check") != "never")
        & (~F.col("checked") | (~F.col("out_of_range") & (F.col("lat_batch_check") == "after-range-check")))
    )
    ranged = F.col("checked") & F.col("out_of_range")
    kept = F.when(F.col("rebuild"), F.col("seen_ms")).otherwise(F.col("timestamp_ms"))
    ahead = int64.sub_long("timestamp_ms", "broker_now_ms", F.lit(False))
    future = (
        (F.col("topic_type") == "CreateTime")
        & F.col("future_warning")
        & ~F.col("control")
        & ~no_ts(F.col("timestamp_ms"))
        & F.when(ahead.isNull(), F.col("timestamp_ms") > 0).otherwise(ahead > 3_600_000)
    )
    return {
        "record_error": F.when(ranged, range_message()).when(wrong_type, type_message()),
        "errs": has_text(ranged, wrong_type),
        "create_time": F.when(no_ts(kept), F.col("sentinel")).otherwise(kept),
        "read_time": F.when(no_ts(F.col("seen_ms")), F.col("sentinel")).otherwise(F.col("seen_ms")),
        "warning": F.when(future, F.concat(F.lit("future-timestamp:"), F.col("offset"))),
        "warns": F.when(future, F.col("offset").isNotNull()).otherwise(False),
    }


def has_text(ranged: Column, wrong_type: Column) -> Column:
    """``record_error IS NOT NULL`` without building the text: which inputs each message needs non-null."""
    named = F.col("offset").isNotNull() & F.col("seen_ms").isNotNull()
    bounds = F.col("broker_now_ms").isNotNull() & F.col("eff_before").isNotNull() & F.col("eff_after").isNotNull()
    return F.when(ranged, named & bounds).when(wrong_type, named).otherwise(False)


def out_of_range() -> Column:
    """Long arithmetic where it fits; the decimal emulation only on the rows that overflow."""
    wrapping = F.col("arithmetic") == "wrapping"
    legacy = int64.abs_exceeds(int64.sub_long("seen_ms", "broker_now_ms", wrapping), "eff_before", wrapping)
    diff = int64.sub_long("broker_now_ms", "seen_ms", wrapping)
    bounded = int64.exceeds(diff, "eff_before") | int64.negated_exceeds(diff, "eff_after", wrapping)
    return F.when(F.col("validation") == "abs-difference", legacy).otherwise(bounded)


def range_message() -> Column:
    wrapping = F.col("arithmetic") == "wrapping"
    low = int64.sub("broker_now_ms", "eff_before", wrapping).cast("string")
    high = int64.add("broker_now_ms", "eff_after", wrapping).cast("string")
    return F.concat(
        F.lit("Timestamp "),
        F.col("seen_ms").cast("string"),
        F.lit(" of message with offset "),
        F.col("offset").cast("string"),
        F.lit(" is out of range. The timestamp should be within ["),
        low,
        F.lit(", "),
        high,
        F.lit("]"),
    )


def type_message() -> Column:
    # a compressed batch kept as it came is read as PartialDefaultRecords, which print a null key as -1 bytes
    partial = (F.col("codec") != "none") & ~F.col("rebuild")
    key = F.coalesce(F.length("key"), F.when(partial, F.lit(-1)).otherwise(F.lit(0)))
    kind = F.when(partial, F.lit("Partial")).otherwise(F.lit(""))
    return F.concat(
        F.lit("Invalid timestamp type in message "),
        kind,
        F.lit("DefaultRecord(offset="),
        F.col("offset").cast("string"),
        F.lit(", timestamp="),
        F.col("seen_ms").cast("string"),
        F.lit(", key="),
        key.cast("string"),
        F.lit(" bytes, value="),
        F.coalesce(F.length("value"), F.lit(0)).cast("string"),
        F.lit(" bytes). Producer should not set timestamp type to LogAppendTime."),
    )


def rebuild() -> Column:
    target = F.when(F.col("compression_type") == "uncompressed", F.lit("none")).otherwise(F.col("compression_type"))
    return (target != "producer") & (target != F.col("codec"))


BATCH_CONSTANTS = [
    "topic_type",
    "timestampType",
    "broker_now_ms",
    "clocks",
    "broker_id",
    "control",
    "codec",
    "rebuild",
    "negative_timestamps",
    "log_append_time_rule",
    "batch_max_floor",
    "sentinel",
    "dual_timestamps",
]
FIXED_WIDTH = ["timestampType", "broker_now_ms", "broker_id", "control", "rebuild"]  # max() of a constant
SHOWN = ["topic_type", "codec", "clocks"]  # string/array constants: output only, from a side aggregate
PROFILE_SWITCHES = ["negative_timestamps", "log_append_time_rule", "batch_max_floor", "sentinel", "dual_timestamps"]
LIST_TYPES = {
    "record_errors": "array<struct<offset:bigint,record_error:string>>",
    "warnings": "array<struct<offset:bigint,warning:string>>",
}
LISTS = list(LIST_TYPES)


def batches(records: DataFrame, with_records: bool = True, switches=None) -> DataFrame:
    """One row per produce request: the response fields, then offsets and LogAppendTime in order.

    The figures every response needs come from one HashAggregate grouped by the batch key alone
    (fixed-width constants as ``max``; no ``first`` of strings, no lists).  What only some
    queries read comes from side aggregates joined on after the positions, which Spark drops
    when nothing above selects them: the string/array constants (``SHOWN``), and the lists
    (record errors and warnings from only the records that have one; with ``with_records``
    every record's create time, which the segment stage and Fetch need).  ``switches(batches)``
    puts the profile's switches back on the per-batch rows (constant per scenario, they need not
    ride through the shuffle); without it they are grouped on.
    """
    batch_key = partition_key(records) + ["batch_id"]
    keys = batch_key + (PROFILE_SWITCHES if switches is None else [])
    grouped = records.groupBy(*keys).agg(*figures(), *(F.max(c).alias(c) for c in FIXED_WIDTH))
    grouped = grouped if switches is None else switches(grouped)
    code = (
        F.when(flag("control"), F.lit(87))
        .when(flag("any_error"), F.lit(32))
        .when((F.col("negative_timestamps") == "rebuild-fails") & flag("rebuild") & flag("has_negative"), F.lit(-1))
        .otherwise(F.lit(0))
    )
    positioned = with_positions(
        grouped.withColumns({"has_negative": flag("has_negative").cast("int"), "error_code": code}), batch_key[:-1]
    )
    return with_sides(positioned, sides(records, with_records, batch_key), batch_key)


FLAGS = {"any_error": 1, "has_negative": 2, "control": 4, "rebuild": 8, "lat_topic": 16}


def figures() -> list[Column]:
    """Fixed-width aggregates only; the batch's yes/no facts as the bits of one ``bit_or``."""
    lat_topic = F.col("topic_type") == "LogAppendTime"
    facts = {
        "any_error": F.col("errs"),
        "has_negative": (F.col("seen_ms") < 0) & (F.col("seen_ms") != -1),
        "control": F.col("control"),
        "rebuild": F.col("rebuild"),
        "lat_topic": lat_topic,
    }
    bits = [F.when(fact, F.lit(FLAGS[name])).otherwise(F.lit(0)) for name, fact in facts.items()]
    real = F.when(F.col("read_time") != F.col("sentinel"), F.col("read_time"))  # the header is written from reads
    return [
        F.count("*").alias("size"),
        F.bit_or(functools.reduce(Column.bitwiseOR, bits)).alias("flags"),
        F.max(real).alias("max_create"),
        F.max(F.when(lat_topic, F.col("broker_now_ms"))).alias("lat_now"),
    ]


def flag(name: str) -> Column:
    return F.col("flags").bitwiseAND(FLAGS[name]) != 0


def sides(records: DataFrame, with_records: bool, batch_key: list[str]) -> list[DataFrame]:
    """Per batch: the shown constants and the lists, in one aggregate over every record when every
    record's create time is wanted anyway, else the lists from only the records that have an entry."""
    only = lambda flag, value: F.array_sort(F.collect_list(F.when(F.col(flag), value)))
    lists = [
        only("errs", F.struct("offset", "record_error")).alias("record_errors"),
        only("warns", F.struct("offset", "warning")).alias("warnings"),
    ]
    shown = [F.first(c).alias(c) for c in SHOWN]
    if with_records:
        creates = F.array_sort(F.collect_list(F.struct("offset", "create_time"))).alias("creates")
        return [records.groupBy(*batch_key).agg(*shown, *lists, creates)]
    return [
        records.groupBy(*batch_key).agg(*shown),
        records.filter(F.col("errs") | F.col("warns")).groupBy(*batch_key).agg(*lists),
    ]


def with_sides(b: DataFrame, sides: list[DataFrame], batch_key: list[str]) -> DataFrame:
    """The side aggregates joined on; a batch without list entries gets empty lists, as ``collect_list`` gives."""
    for side in sides:
        b = b.join(side, batch_key, "left")
    b = b.withColumns({name: F.coalesce(F.col(name), F.array().cast(LIST_TYPES[name])) for name in LISTS})
    creates = ["creates"] if "creates" in b.columns else []
    if creates:
        b = b.withColumn("stored", F.transform("creates", lambda c: F.coalesce(F.col("lat"), c["create_time"])))
    return b.select(
        *batch_key,
        "size",
        "record_errors",
        "has_negative",
        "max_create",
        "warnings",
        *creates,
        *BATCH_CONSTANTS,
        "error_code",
        "base_offset",
        "lat",
        "batch_max",
        *(["stored"] if creates else []),
    )


def with_positions(b: DataFrame, key: list[str]) -> DataFrame:
    order = Window.partitionBy(*key).orderBy("batch_id")
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    upto = order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    accepted = F.col("error_code") == 0
    lat_topic = flag("lat_topic")
    running = F.max(F.when(accepted & lat_topic, F.col("lat_now"))).over(upto)
    lat = F.when(
        accepted & lat_topic,
        F.when(F.col("log_append_time_rule") == "max-last-appended", running).otherwise(F.col("lat_now")),
    )
    b = b.withColumns(
        {"base_offset": F.coalesce(F.sum(F.when(accepted, F.col("size"))).over(before), F.lit(0)), "lat": lat}
    )
    return b.withColumn("batch_max", batch_max())


def batch_max() -> Column:
    """LogAppendTime, else the max CreateTime the broker read (Kafka floors it at -1; kip: the sentinel)."""
    floored = F.greatest(F.lit(-1).cast("bigint"), F.coalesce(F.col("max_create"), F.lit(-1).cast("bigint")))
    unfloored = F.coalesce(F.col("max_create"), F.col("sentinel"))
    by_profile = F.when(F.col("batch_max_floor") == "minus-one", floored).otherwise(unfloored)
    return F.coalesce(F.col("lat"), by_profile)


def evaluate(records: DataFrame, switches=None) -> DataFrame:
    """records (joined with topic configs and profile switches) -> one row per batch."""
    return batches(with_record_verdicts(records), switches=switches)
