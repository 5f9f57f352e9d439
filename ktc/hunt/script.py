"""Reproducer (a): a standalone Python script (kafka-python and stdlib sockets; no ktc import) that replays
a finding's minimised history against any broker and prints the clause's quote next to what the broker did.
The script's code is ``script_template.py.txt``; what is written here is its data."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

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


def attributes(batch: Batch) -> int:
    bits = CODEC_IDS[batch.codec] | (0x08 if batch.timestamp_type is TimestampType.LOG_APPEND_TIME else 0)
    return bits | (0x10 if batch.transactional else 0) | (0x20 if batch.control else 0) | \
        (0x80 if batch.timestamp_extended else 0)


def topic_data(op: CreateTopic) -> dict:
    from ktc.kafka.topics import kafka_configs
    return {"partitions": op.config.partitions, "configs": kafka_configs(op.config)}


def op_data(op) -> dict:
    data = {"op": type(op).__name__, "summary": summary(op), "topic": getattr(op, "topic", None),
            "partition": getattr(op, "partition", 0)}
    if isinstance(op, Produce):
        b = op.batch
        data["batch"] = {"timestamps": [r.timestamp for r in b.records], "codec": b.codec,
                         "keys": [None if r.key is None else r.key.hex() for r in b.records],
                         "values": [r.value.hex() for r in b.records],
                         "attributes": attributes(b), "header_max": header_max(b)}
    elif isinstance(op, ListOffsets):
        data.update(target=op.target, version=op.version)
    elif hasattr(op, "ms"):
        data["ms"] = op.ms
    return data


def summary(op) -> str:
    fields = to_data(op)
    fields.pop("type")
    return f"{type(op).__name__} {json.dumps(fields, default=str)[:300]}"


def answer_data(result) -> dict | None:
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


def stored(b) -> dict:
    return {"base_offset": b.base_offset, "log_append_time": b.timestamp_type is TimestampType.LOG_APPEND_TIME,
            "max_timestamp": b.max_timestamp, "records": [[r.offset, r.timestamp] for r in b.records]}


def data(finding, observed, found_on: str) -> dict:
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
