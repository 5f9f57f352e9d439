"""A history in a bug report's words: each operation as a numbered step (timestamps near the broker's clock said
as ``now + 86400000 ms``, the clock at that step), and the answers at the step that departs first."""

from __future__ import annotations

import json

from ktc.kafka.topics import kafka_configs
from ktc.reference.types import (
    Advance,
    CreateTopic,
    ElectLeader,
    Fetch,
    ListOffsets,
    Produce,
    RetentionPass,
    TimestampType,
    clock_states,
    header_max,
)

FAR_MS = 10 * 365 * 86_400_000  # farther than this from the clock: said as is
ERRORS = {0: "NONE", -1: "UNKNOWN_SERVER_ERROR", 2: "CORRUPT_MESSAGE", 32: "INVALID_TIMESTAMP", 40: "INVALID_CONFIG",
          87: "INVALID_RECORD"}  # fmt: skip
TARGETS = {-1: "LATEST (-1)", -2: "EARLIEST (-2)", -3: "MAX_TIMESTAMP (-3)", -4: "EARLIEST_LOCAL (-4)"}


def at(ts: int, now: int) -> str:
    if abs(ts - now) > FAR_MS:
        return str(ts)
    delta = ts - now
    return "now" if delta == 0 else f"now {'+' if delta > 0 else '-'} {abs(delta)} ms"


def what(op) -> str:
    """The operation, in a few words."""
    if isinstance(op, Produce):
        return f"a Produce to {op.topic}-{op.partition}"
    if isinstance(op, ListOffsets):
        return f"ListOffsets {TARGETS.get(op.target, op.target)} on {op.topic}-{op.partition}"
    if isinstance(op, Fetch):
        return f"a Fetch of {op.topic}-{op.partition}"
    return type(op).__name__


def step(op, now: int) -> str:
    if isinstance(op, CreateTopic):
        configs = ", ".join(f"`{k}={v}`" for k, v in kafka_configs(op.config).items()) or "every one at its default"
        return f"Create topic `{op.topic}` ({op.config.partitions} partition(s)), configs: {configs}."
    if isinstance(op, Produce):
        return produce_step(op, now)
    if isinstance(op, ListOffsets):
        target = TARGETS.get(op.target) or f"timestamp {at(op.target, now)}"
        level = "READ_COMMITTED (1)" if op.read_committed else "READ_UNCOMMITTED (0)"
        return f"ListOffsets {op.topic}-{op.partition}, target {target}, isolation level {level}."
    if isinstance(op, Fetch):
        return f"Fetch {op.topic}-{op.partition} from offset 0 (every batch as stored)."
    if isinstance(op, Advance):
        return f"Wait {op.ms} ms."
    if isinstance(op, RetentionPass):
        return "Let the retention check run."
    if isinstance(op, ElectLeader):
        return f"Move the leadership of {op.topic}-{op.partition} to broker {op.broker}."
    return f"{type(op).__name__}."


def produce_step(op: Produce, now: int) -> str:
    b = op.batch
    kind = "LogAppendTime" if b.timestamp_type is TimestampType.LOG_APPEND_TIME else "CreateTime"
    stamps = ", ".join(at(r.timestamp, now) for r in b.records)
    honest = b.max_timestamp is None or b.max_timestamp == header_max(type(b)(b.records))
    header = "" if honest else f", header MaxTimestamp {at(header_max(b), now)} (not the records' max)"
    return (
        f"Produce to {op.topic}-{op.partition} (acks=-1) one v2 batch, codec {b.codec}, timestamp type {kind}"
        f"{header}, of {len(b.records)} record(s) with timestamps [{stamps}]."
    )


def numbered(history) -> list[str]:
    clocks = clock_states(history)
    return [
        f"{n}. {step(op, clocks[i].leader_now(getattr(op, 'topic', ''), getattr(op, 'partition', 0)))}"
        for n, (i, op) in enumerate(enumerate(history.ops), start=1)
    ]


def step_number(history, op_index: int) -> int:
    return op_index + 1


def answer_lines(history, script: dict, divergence: dict, key: str) -> list[str]:
    """The answer at the step that departs first: the KIP's (``expected``) or the broker's (``found``); the
    reproducer's steps leave the CreateTopic ones out."""
    index = divergence["op_index"]
    shifted = index - sum(isinstance(op, CreateTopic) for op in history.ops[:index])
    ops = script["ops"]
    field = f"`{divergence['field']}` = {divergence['expected' if key == 'expected' else 'observed']!r}"
    answer = ops[shifted].get(key) if 0 <= shifted < len(ops) else None
    return [f"At step {index + 1}, {field}. The whole answer:", "", f"    {json.dumps(answer)[:600]}"]


def value(field: str, v) -> str:
    """A value of an answer as a report says it: an error code with its name."""
    if field.endswith("error_code") and v in ERRORS:
        return f"{ERRORS[v]} ({v})"
    return repr(v)
