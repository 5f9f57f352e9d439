"""Where the stored records come from, each normalised to the audit's columns.

ktc      ktc's own wire client: every batch header (codec, MaxTimestamp, leader epoch, control),
         every int64 timestamp as stored -- nothing is out of range
kafka    Spark's own Kafka source (spark-sql-kafka-0-10): record columns only; it refuses a
         record whose millisecond timestamp overflows Spark's microseconds (a nanosecond
         timestamp written as milliseconds), and then ktc reads the topic itself
PATH     a Parquet (or Delta) export with the Kafka source's columns, ``timestamp`` or ``timestamp_ms``
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

REQUIRED = {"partition": "int", "offset": "bigint", "timestamp_ms": "bigint", "timestampType": "int"}
BATCH_SCHEMA = pa.schema(
    [
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp_ms", pa.int64()),
        ("timestampType", pa.int32()),
        ("batch_offset", pa.int64()),
        ("batch_max_ms", pa.int64()),
        ("leader_epoch", pa.int32()),
        ("control", pa.bool_()),
        ("codec", pa.string()),
    ]
)
ATTR_CONTROL = 0x20
KAFKA_SOURCE_NOTE = "Spark's Kafka source has no batch headers, leader epochs, codecs or control records"


class SourceError(ValueError):
    """Input the audit cannot read: one line naming the file, column or topic."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---- ktc's wire client -------------------------------------------------------------------------


def partitions_of(client, topic: str) -> list[int]:
    from ktc.kafka.client import admin

    view = client.call(admin.metadata([topic]))
    error, leaders = view.topics.get(topic, (3, {}))
    if error:
        raise SourceError(f"topic {topic!r}: Metadata answered error {error} (3: no such topic)")
    return sorted(leaders)


def batch_rows(partition: int, batch, columns: dict[str, list]) -> None:
    """Append one decoded batch's records to ``columns`` (the batch's fields repeated per record)."""
    n = len(batch.records)
    columns["offset"].extend(r.offset for r in batch.records)
    columns["timestamp_ms"].extend(r.timestamp for r in batch.records)
    shared = {
        "partition": partition,
        "timestampType": int(batch.timestamp_type.value == "LogAppendTime"),
        "batch_offset": batch.base_offset,
        "batch_max_ms": batch.max_timestamp,
        "leader_epoch": batch.leader_epoch,
        "control": bool(batch.attributes & ATTR_CONTROL),
        "codec": batch.codec,
    }
    for name, value in shared.items():
        columns[name].extend([value] * n)


def read_ktc(client, topic: str) -> tuple[pa.Table, int]:
    """Every stored record of ``topic`` through ktc's client, and the clock when the last answer came."""
    columns: dict[str, list] = {name: [] for name in BATCH_SCHEMA.names}
    for p in partitions_of(client, topic):
        outcome = client.fetch_all(topic, partition=p)
        if outcome.error_code:
            raise SourceError(f"topic {topic!r} partition {p}: Fetch answered error {outcome.error_code}")
        for batch in outcome.batches:
            batch_rows(p, batch, columns)
    return pa.table(columns, schema=BATCH_SCHEMA), now_ms()


# ---- Spark's Kafka source ------------------------------------------------------------------------


def read_spark_kafka(spark, bootstrap: str, topic: str, options: dict[str, str] | None = None) -> DataFrame:
    """The topic through Spark's Kafka source; ``options``: extra ``kafka.*`` settings (TLS, SASL)."""
    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .options(**(options or {}))
        .load()
    )
    return raw.select(
        F.col("partition").cast("int"),
        "offset",
        F.unix_millis("timestamp").alias("timestamp_ms"),
        F.col("timestampType").cast("int"),
        F.lit(False).alias("control"),
    )


def kafka_source_failure(error: Exception) -> str | None:
    """Why Spark's Kafka source could not read, as one line: a timestamp it cannot hold, or the JVM's root
    cause (measured: kfake's DescribeTopicPartitions answer makes Kafka's AdminClient throw a
    NullPointerException; without the connector's jars, KAFKA_DATA_SOURCE_NOT_ENABLED); None for an error that
    is not the JVM's (a Python bug stays loud)."""
    from pyspark.errors.exceptions.captured import CapturedException

    text = str(error)
    start = text.find("Record at topic")
    if start >= 0 and "overflows when converting" in text:
        return text[start : text.find(".", text.find("TimestampType", start)) + 1]
    causes = [line.strip() for line in text.splitlines() if line.strip().startswith("Caused by:")]
    jvm = isinstance(error, CapturedException) or "Py4JJavaError" in type(error).__name__ or "org.apache" in text
    if not causes and not jvm:
        return None
    return (causes[-1] if causes else text.strip().splitlines()[0])[:300]


# ---- files ----------------------------------------------------------------------------------------


def read_file(spark, path: str) -> DataFrame:
    if not Path(path).exists():
        raise SourceError(f"{path}: no such file or directory")
    reader = spark.read.format("delta") if (Path(path) / "_delta_log").is_dir() else spark.read
    try:
        df = reader.load(path) if reader is not spark.read else spark.read.parquet(path)
    except Exception as error:  # AnalysisException, a corrupt footer
        raise SourceError(f"{path}: not readable as Parquet/Delta ({str(error).splitlines()[0][:200]})") from None
    return normalised(df, path)


def normalised(df: DataFrame, where: str) -> DataFrame:
    """The audit's columns: ``timestamp`` becomes ``timestamp_ms``; ``control`` defaults to false."""
    if "timestamp_ms" not in df.columns and "timestamp" in df.columns:
        df = df.withColumn("timestamp_ms", F.unix_millis("timestamp"))
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise SourceError(f"{where}: missing column(s) {', '.join(missing)} (needs {', '.join(REQUIRED)})")
    for name, kind in REQUIRED.items():
        df = df.withColumn(name, F.col(name).cast(kind))
    return df if "control" in df.columns else df.withColumn("control", F.lit(False))
