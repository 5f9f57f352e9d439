"""Reproducer (a): a standalone Python script (kafka-python and stdlib sockets; no ktc import) that replays
a finding's minimised history against any broker and prints the clause's quote next to what the broker did.
The script's code is ``script_template.py.txt``; what is written here is its data."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import NotRequired, TypedDict, Union

from ktc.judge.serialize import to_data
from ktc.reference.types import (
    Batch,
    CreateTopic,
    FetchResult,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    ProduceResult,
    TimestampType,
    header_max,
)
from ktc.specs.clauses import all_clauses

TEMPLATE = Path(__file__).with_name("script_template.py.txt")
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


# The script's data, as its template reads it (script_template.py.txt) ------------------------------------

class TopicData(TypedDict):
    partitions: int
    configs: dict[str, int | str]   # Kafka config names


class BatchData(TypedDict):
    timestamps: list[int]
    codec: str
    keys: list[str | None]          # hex
    values: list[str]               # hex
    attributes: int
    header_max: int


class OpData(TypedDict):
    op: str                         # the operation's type name
    summary: str
    topic: str | None
    partition: int
    batch: NotRequired[BatchData]   # a Produce
    target: NotRequired[int]        # a ListOffsets
    version: NotRequired[int | None]
    ms: NotRequired[int]            # an Advance


class ProduceAnswer(TypedDict):
    error_code: int
    record_errors: list[list[int | str | None]]  # [batch index, message]


class OffsetsAnswer(TypedDict):
    error_code: int
    offset: int
    timestamp: int


class StoredData(TypedDict):
    base_offset: int
    log_append_time: bool
    max_timestamp: int
    records: list[list[int]]        # [offset, timestamp]


class FetchAnswer(TypedDict):
    error_code: int
    batches: list[StoredData]


Answer = Union[ProduceAnswer, OffsetsAnswer, FetchAnswer]


class Mismatch(TypedDict):
    op_index: int | None            # among the ops the script sends (CreateTopic ops left out)
    what: str
    expected: str | None            # repr
    observed: str | None


class ScriptData(TypedDict):
    clause: str
    kip: str
    quote: str
    statement: str
    start_ms: int
    found_on: str
    topics: dict[str, TopicData]
    ops: list[OpData]
    mismatch: Mismatch
    found_answer: Answer | None


def attributes(batch: Batch) -> int:
    bits = CODEC_IDS[batch.codec] | (0x08 if batch.timestamp_type is TimestampType.LOG_APPEND_TIME else 0)
    return bits | (0x10 if batch.transactional else 0) | (0x20 if batch.control else 0) | \
        (0x80 if batch.timestamp_extended else 0)


def topic_data(op: CreateTopic) -> TopicData:
    from ktc.kafka.topics import kafka_configs
    return {"partitions": op.config.partitions, "configs": kafka_configs(op.config)}


def op_data(op) -> OpData:
    data: OpData = {"op": type(op).__name__, "summary": summary(op), "topic": getattr(op, "topic", None),
            "partition": getattr(op, "partition", 0)}
    if isinstance(op, Produce):
        b = op.batch
        data["batch"] = {"timestamps": [r.timestamp for r in b.records], "codec": b.codec,
                         "keys": [None if r.key is None else r.key.hex() for r in b.records],
                         "values": [r.value.hex() for r in b.records],
                         "attributes": attributes(b), "header_max": header_max(b)}
    elif isinstance(op, ListOffsets):
        data["target"], data["version"] = op.target, op.version
    elif hasattr(op, "ms"):
        data["ms"] = op.ms
    return data


def summary(op) -> str:
    fields = to_data(op)
    fields.pop("type")
    return f"{type(op).__name__} {json.dumps(fields, default=str)[:300]}"


def answer_data(result) -> Answer | None:
    """The observed answer in the script's own shape (what ``same_shape`` compares)."""
    if isinstance(result, ProduceResult):
        return {"error_code": result.error_code,
                "record_errors": [[e.batch_index, e.message] for e in result.record_errors]}
    if isinstance(result, ListOffsetsResult):
        return {"error_code": result.error_code, "offset": result.offset, "timestamp": result.timestamp}
    if isinstance(result, FetchResult):
        return {"error_code": result.error_code,
                "batches": [stored(b) for b in result.batches]}
    return None


def stored(b) -> StoredData:
    return {"base_offset": b.base_offset, "log_append_time": b.timestamp_type is TimestampType.LOG_APPEND_TIME,
            "max_timestamp": b.max_timestamp, "records": [[r.offset, r.timestamp] for r in b.records]}


def data(finding, observed, found_on: str) -> ScriptData:
    verdict = finding.verdicts[0]
    clause, m = all_clauses()[verdict.clause], verdict.mismatch
    history = finding.history
    index = m.op_index if m is not None else None
    return {"clause": clause.id, "kip": clause.kip, "quote": " ".join(clause.quote.split()),
            "statement": clause.statement, "start_ms": history.start_ms, "found_on": found_on,
            "topics": {op.topic: topic_data(op) for op in history.ops if isinstance(op, CreateTopic)},
            "ops": [op_data(op) for op in history.ops if not isinstance(op, CreateTopic)],
            "mismatch": {"op_index": shifted(history, index), "what": m.what if m else "not judged",
                         "expected": repr(m.expected) if m else None, "observed": repr(m.observed) if m else None},
            "found_answer": answer_data(observed[index]) if index is not None and index < len(observed or ()) else None}


def shifted(history, index):
    """The op index once CreateTopic ops (done first, by the admin client) are left out of the list."""
    if index is None:
        return None
    return index - sum(isinstance(op, CreateTopic) for op in history.ops[:index])


def write(path: Path, finding, observed, found_on: str) -> Path:
    doc = data(finding, observed, found_on)
    quote = doc["quote"][:200].replace('"""', "'''").replace("\\", "/")
    text = TEMPLATE.read_text().replace("__DATA__", repr(json.dumps(doc, indent=1)))
    said = textwrap.fill(f"Finding: {doc['clause']} ({doc['kip']}): \"{quote}\"", 116)
    text = text.replace("CLAUSE_LINE", said)
    text = text.replace("THIS_FILE", path.name)
    path.write_text(text)
    return path
