"""The Spark implementation's input contract, and histories flattened into it.

Records (one row per produced record) are shaped like Spark's Kafka source with
``timestamp_ms: long`` in place of ``timestamp``, plus the produce grouping and topic configs:

  scenario, topic, partition, offset (the producer's relative offset = index in its batch),
  key, value, timestampType (batch attribute: 0 CreateTime, 1 LogAppendTime), timestamp_ms,
  batch_id (op index), header_max, codec, control, extended, broker_id (leader),
  broker_now_ms (leader clock at arrival), clocks (every broker's clock at arrival)

Events (Fetch, ListOffsets, RetentionPass, DescribeLog) carry the same clock columns.  Topic
configs and profile switches are joined per scenario.  ``check_records`` validates a
user-supplied DataFrame against this contract before any job runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from ktc.reference.types import CreateTopic, History, Produce, TimestampType, TopicConfig, clock_states, header_max
from ktc.specs.profiles import get as get_profile

RECORD_COLUMNS = {
    "scenario": pa.int64(),
    "topic": pa.string(),
    "partition": pa.int32(),
    "offset": pa.int64(),
    "key": pa.binary(),
    "value": pa.binary(),
    "timestampType": pa.int32(),
    "timestamp_ms": pa.int64(),
    "batch_id": pa.int32(),
    "header_max": pa.int64(),
    "codec": pa.string(),
    "control": pa.bool_(),
    "extended": pa.bool_(),
    "broker_id": pa.int32(),
    "broker_now_ms": pa.int64(),
    "clocks": pa.list_(pa.int64()),
}
EVENT_COLUMNS = {
    "scenario": pa.int64(),
    "batch_id": pa.int32(),
    "kind": pa.string(),
    "topic": pa.string(),
    "partition": pa.int32(),
    "target": pa.int64(),
    "version": pa.int32(),
    "broker_id": pa.int32(),
    "clocks": pa.list_(pa.int64()),
}
TOPIC_COLUMNS = {
    "scenario": pa.int64(),
    "topic": pa.string(),
    "topic_type": pa.string(),
    "before_max_ms": pa.int64(),
    "after_max_ms": pa.int64(),
    "difference_max_ms": pa.int64(),
    "segment_ms": pa.int64(),
    "retention_ms": pa.int64(),
    "retention_max_eventtime_ms": pa.int64(),
    "compression_type": pa.string(),
    "created_clocks": pa.list_(pa.int64()),
}
EVENT_KINDS = {"Fetch", "ListOffsets", "RetentionPass", "DescribeLog"}


class ContractError(ValueError):
    """Input that does not follow the contract: names the column or value."""


@dataclass
class Flat:
    records: list = field(default_factory=list)
    events: list = field(default_factory=list)
    topics: list = field(default_factory=list)
    direct: dict = field(default_factory=dict)  # (scenario, op) -> result decided without Spark
    created: dict = field(default_factory=dict)  # (scenario, topic) -> TopicConfig


def flatten(histories: list[History], topic_error) -> Flat:
    flat = Flat()
    for scenario, history in enumerate(histories):
        _flatten_one(flat, scenario, history, topic_error)
    return flat


def _flatten_one(flat: Flat, scenario: int, history: History, topic_error) -> None:
    get_profile(history.profile)  # an unknown profile fails here, before any job
    for op_index, (op, state) in enumerate(zip(history.ops, clock_states(history))):
        if isinstance(op, CreateTopic):
            _create(flat, scenario, op_index, op, history, topic_error, state.clocks())
        elif isinstance(op, Produce) or type(op).__name__ in EVENT_KINDS:
            _route(flat, scenario, op_index, op, state.leader(op.topic, op.partition), state.clocks())


def _create(flat, scenario, op_index, op: CreateTopic, history, topic_error, clocks) -> None:
    code = 36 if (scenario, op.topic) in flat.created else topic_error(op.config, get_profile(history.profile))
    flat.direct[(scenario, op_index)] = ("CreateTopic", code)
    if code == 0:
        flat.created[(scenario, op.topic)] = op.config
        flat.topics.append({**_topic_row(scenario, op.topic, op.config), "created_clocks": clocks})


def _topic_row(scenario: int, topic: str, c: TopicConfig) -> dict:
    return {
        "scenario": scenario,
        "topic": topic,
        "topic_type": c.timestamp_type.value,
        "before_max_ms": c.before_max_ms,
        "after_max_ms": c.after_max_ms,
        "difference_max_ms": c.difference_max_ms,
        "segment_ms": c.segment_ms,
        "retention_ms": c.retention_ms,
        "retention_max_eventtime_ms": c.retention_max_eventtime_ms,
        "compression_type": c.compression_type,
    }


def _route(flat: Flat, scenario: int, op_index: int, op, leader: int, clocks: list[int]) -> None:
    config = flat.created.get((scenario, op.topic))
    if config is None or not 0 <= op.partition < config.partitions:
        flat.direct[(scenario, op_index)] = ("missing", type(op).__name__)
    elif isinstance(op, Produce):
        flat.records += _record_rows(scenario, op_index, op, leader, clocks)
    else:
        flat.events.append(
            {
                "scenario": scenario,
                "batch_id": op_index,
                "kind": type(op).__name__,
                "topic": op.topic,
                "partition": op.partition,
                "target": getattr(op, "target", None),
                "version": getattr(op, "version", None),
                "broker_id": leader,
                "clocks": clocks,
            }
        )


def _record_rows(scenario, op_index, op: Produce, leader, clocks) -> list[dict]:
    b = op.batch
    attribute = 1 if b.timestamp_type is TimestampType.LOG_APPEND_TIME else 0
    common = {
        "scenario": scenario,
        "topic": op.topic,
        "partition": op.partition,
        "timestampType": attribute,
        "batch_id": op_index,
        "header_max": header_max(b),
        "codec": b.codec,
        "control": b.control,
        "extended": b.timestamp_extended,
        "broker_id": leader,
        "broker_now_ms": clocks[leader],
        "clocks": clocks,
    }
    return [
        {**common, "offset": i, "key": r.key, "value": r.value, "timestamp_ms": r.timestamp}
        for i, r in enumerate(b.records)
    ]


def table(rows: list[dict], columns: dict) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=pa.schema(columns))


NULL_TIMESTAMPS = "column 'timestamp_ms' has null values; Kafka timestamps are never null (use -1)"


def check_records(df, extra: dict | None = None, optional: tuple = ()) -> None:
    """Fail before the evaluation when a DataFrame misses a column or mistypes one (no job runs).

    A column named in ``optional`` may be absent; when present it must have its type.  Null
    timestamps are refused by the evaluation's own job (api.prepared), not by a
    separate scan here.
    """
    extra = extra or {}
    fields = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for name, arrow_type in {**RECORD_COLUMNS, **extra}.items():
        if name not in fields and name in optional:
            continue
        if name not in fields:
            raise ContractError(f"input records are missing column {name!r}")
        expected = _spark_type(arrow_type)
        if fields[name] != expected:
            raise ContractError(f"column {name!r} has type {fields[name]}, expected {expected}")


KEYS = ("scenario", "topic", "partition", "batch_id", "offset", "timestamp_ms", "header_max")
NULLABLE = (
    "key",
    "value",
    "before_max_ms",
    "after_max_ms",
    "difference_max_ms",
    "segment_ms",
    "retention_ms",
    "retention_max_eventtime_ms",
)
PYTHON_TYPES = {"bigint": int, "int": int, "string": str, "binary": bytes, "boolean": bool, "array<bigint>": list}
LIMITS = {"bigint": 2**63, "int": 2**31}


def check_known(known: dict, df, columns: dict) -> dict[str, str]:
    """Columns a caller knows to hold one value on every row (given as Python values, not in the DataFrame):
    each must be a column of ``columns`` other than the keys and the timestamp, absent from ``df``, and a
    value of its type.  Their Spark types, by name."""
    kinds = {}
    for name, value in known.items():
        if name not in columns or name in KEYS:
            raise ContractError(f"known column {name!r} is not a column a caller may fix; one of {knowable(columns)}")
        if name in df.columns:
            raise ContractError(f"column {name!r} is both in the input and known; give it one way")
        kinds[name] = kind = _spark_type(columns[name])
        if not _fits(value, kind, name in NULLABLE):
            raise ContractError(f"known column {name!r} = {value!r} is not of type {kind}")
    return kinds


def knowable(columns: dict) -> str:
    return ", ".join(sorted(name for name in columns if name not in KEYS))


def _fits(value, kind: str, nullable: bool) -> bool:
    if value is None:
        return nullable
    if isinstance(value, bool) != (kind == "boolean") or not isinstance(value, PYTHON_TYPES[kind]):
        return False
    if kind == "array<bigint>":
        return all(_fits(v, "bigint", False) for v in value)
    return kind not in LIMITS or -LIMITS[kind] <= value < LIMITS[kind]


def _spark_type(arrow_type) -> str:
    return {
        pa.int64(): "bigint",
        pa.int32(): "int",
        pa.string(): "string",
        pa.binary(): "binary",
        pa.bool_(): "boolean",
        pa.list_(pa.int64()): "array<bigint>",
    }[arrow_type]
