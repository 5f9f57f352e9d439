"""Reproducer (a): a standalone Python script (kafka-python and stdlib sockets; no ktc import) that replays
a finding's minimised history against any broker and prints the clause's quote next to what the broker did.
The script's code is ``script_template.py.txt``; what is written here is its data: per operation, the answer
the finding records (the target's, ``found``) and the KIP's (the model's, ``expected``).  The script says
REPRODUCED only when a broker answers every operation as ``found`` does, so a broker that refuses what the
finding's broker accepted is not counted as reproducing it."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict, Union

from ktc import reference
from ktc.judge.serialize import to_data
from ktc.reference.types import (
    Batch,
    CreateTopic,
    FetchResult,
    History,
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
FAR_MS = 10 * 365 * 86_400_000  # the script's own: a timestamp this far from the start is sent as is


@dataclass(frozen=True)
class Model:
    """What the KIP answers (``run(history)`` -> one result per op) and how the script names it."""

    run: Callable[[History], Sequence[object]]
    description: str


def default_model(history) -> Model:
    return Model(reference.run, f"ktc's model, profile {history.profile}")


# The script's data, as its template reads it (script_template.py.txt) ------------------------------------


class TopicData(TypedDict):
    partitions: int
    configs: dict[str, int | str]  # Kafka config names


class BatchData(TypedDict):
    timestamps: list[int]
    codec: str
    keys: list[str | None]  # hex
    values: list[str]  # hex
    attributes: int
    header_max: int


class OpData(TypedDict):
    op: str  # the operation's type name
    summary: str
    topic: str | None
    partition: int
    batch: NotRequired[BatchData]  # a Produce
    target: NotRequired[int]  # a ListOffsets
    version: NotRequired[int | None]
    isolation_level: NotRequired[int]  # a ListOffsets: 0 READ_UNCOMMITTED, 1 READ_COMMITTED
    ms: NotRequired[int]  # an Advance
    found: NotRequired[Answer | None]  # what the finding recorded, in the history's frame
    expected: NotRequired[Answer | None]  # what the model answers


class ProduceAnswer(TypedDict):
    error_code: int
    record_errors: list[list[int | str | None]]  # [batch index, message]


class OffsetsAnswer(TypedDict):
    error_code: int
    offset: int
    timestamp: int | None  # None: a time the broker stamped from its own clock


class StoredData(TypedDict):
    base_offset: int
    log_append_time: bool
    max_timestamp: int | None
    records: list[list[int | None]]  # [offset, timestamp]


class FetchAnswer(TypedDict):
    error_code: int
    batches: list[StoredData]


Answer = Union[ProduceAnswer, OffsetsAnswer, FetchAnswer]


class Mismatch(TypedDict):
    op_index: int | None  # among the ops the script sends (CreateTopic ops left out)
    what: str
    expected: str | None  # repr
    observed: str | None
    clock: str  # which clock the timestamps are at


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
    model: str  # the model the script's expected answers come from


def attributes(batch: Batch) -> int:
    bits = CODEC_IDS[batch.codec] | (0x08 if batch.timestamp_type is TimestampType.LOG_APPEND_TIME else 0)
    return (
        bits
        | (0x10 if batch.transactional else 0)
        | (0x20 if batch.control else 0)
        | (0x80 if batch.timestamp_extended else 0)
    )


def topic_data(op: CreateTopic) -> TopicData:
    from ktc.kafka.topics import kafka_configs

    return {"partitions": op.config.partitions, "configs": kafka_configs(op.config)}


def op_data(op) -> OpData:
    data: OpData = {
        "op": type(op).__name__,
        "summary": summary(op),
        "topic": getattr(op, "topic", None),
        "partition": getattr(op, "partition", 0),
    }
    if isinstance(op, Produce):
        b = op.batch
        data["batch"] = {
            "timestamps": [r.timestamp for r in b.records],
            "codec": b.codec,
            "keys": [None if r.key is None else r.key.hex() for r in b.records],
            "values": [r.value.hex() for r in b.records],
            "attributes": attributes(b),
            "header_max": header_max(b),
        }
    elif isinstance(op, ListOffsets):
        data["target"], data["version"], data["isolation_level"] = op.target, op.version, int(op.read_committed)
    elif hasattr(op, "ms"):
        data["ms"] = op.ms
    return data


def summary(op) -> str:
    fields = to_data(op)
    fields.pop("type")
    if isinstance(op, ListOffsets):  # what goes on the wire: READ_UNCOMMITTED (0) or READ_COMMITTED (1)
        fields["isolation_level"] = int(fields.pop("read_committed"))
    return f"{type(op).__name__} {json.dumps(fields, default=str)[:300]}"


def answer_data(result, clock=lambda ts: ts) -> Answer | None:
    """An answer in the script's own shape (what its ``agrees`` compares); ``clock`` maps each timestamp into the
    history's frame, None for one the broker stamped from its own clock."""
    if isinstance(result, ProduceResult):
        return {
            "error_code": result.error_code,
            "record_errors": [[e.batch_index, e.message] for e in result.record_errors],
        }
    if isinstance(result, ListOffsetsResult):
        return {"error_code": result.error_code, "offset": result.offset, "timestamp": clock(result.timestamp)}
    if isinstance(result, FetchResult):
        return {"error_code": result.error_code, "batches": [stored(b, clock) for b in result.batches]}
    return None


def stored(b, clock) -> StoredData:
    return {
        "base_offset": b.base_offset,
        "log_append_time": b.timestamp_type is TimestampType.LOG_APPEND_TIME,
        "max_timestamp": clock(b.max_timestamp),
        "records": [[r.offset, clock(r.timestamp)] for r in b.records],
    }


def sent_timestamps(history) -> list[int]:
    """Every timestamp the history's batches carry, in order: each record's, then the header's max.  (Produce
    ops are never left out of a placed history; a read that was not sent may be.)"""
    out = []
    for op in history.ops:
        if isinstance(op, Produce):
            out += [r.timestamp for r in op.batch.records] + [header_max(op.batch)]
    return out


def history_clock(history, observed):
    """The target's timestamps -> the history's: a real broker ran the history moved onto its wall clock
    (``judged_as``: the history as sent); a timestamp a batch carried maps back to the history's, one far from
    the clock is kept, and any other near one is the broker's own clock (None: the script does not compare it)."""
    ends = getattr(observed, "judged_as", ())
    ran = ends[0][0] if ends else history
    table = dict(zip(sent_timestamps(ran), sent_timestamps(history)))
    return lambda ts: table[ts] if ts in table else (ts if abs(ts - ran.start_ms) > FAR_MS else None)


def data(finding, observed, found_on: str, model: Model | None = None) -> ScriptData:
    verdict = finding.verdicts[0]
    clause, m = all_clauses()[verdict.clause], verdict.mismatch
    history = finding.history
    model = model or default_model(history)
    index = m.op_index if m is not None else None
    return {
        "clause": clause.id,
        "kip": clause.kip,
        "quote": " ".join(clause.quote.split()),
        "statement": clause.statement,
        "start_ms": history.start_ms,
        "found_on": found_on,
        "model": model.description,
        "topics": {op.topic: topic_data(op) for op in history.ops if isinstance(op, CreateTopic)},
        "ops": steps(history, observed, model),
        "mismatch": {
            "op_index": shifted(history, index),
            "what": m.what if m else "not judged",
            "expected": repr(m.expected) if m else None,
            "observed": repr(m.observed) if m else None,
            "clock": "timestamps at the wall clock of ktc's run"
            if getattr(observed, "judged_as", ())
            else "timestamps at the history's clock",
        },
    }


def steps(history, observed, model: Model) -> list[OpData]:
    """Each operation but CreateTopic (the admin client's, done first), with the answer the finding records
    and the KIP's, both in the history's frame."""
    expected, clock = model.run(history), history_clock(history, observed)
    found = list(observed) if observed is not None else []
    out = []
    for i, op in enumerate(history.ops):
        if isinstance(op, CreateTopic):
            continue
        seen = answer_data(found[i], clock) if i < len(found) else None
        step = op_data(op)
        step["found"], step["expected"] = seen, answer_data(expected[i])
        out.append(step)
    return out


def shifted(history, index):
    """The op index once CreateTopic ops (done first, by the admin client) are left out of the list."""
    if index is None:
        return None
    return index - sum(isinstance(op, CreateTopic) for op in history.ops[:index])


def write(path: Path, finding, observed, found_on: str, model: Model | None = None) -> Path:
    doc = data(finding, observed, found_on, model)
    quote = doc["quote"][:200].replace('"""', "'''").replace("\\", "/")
    text = TEMPLATE.read_text().replace("__DATA__", repr(json.dumps(doc, indent=1)))
    said = textwrap.fill(f'Finding: {doc["clause"]} ({doc["kip"]}): "{quote}"', 116)
    text = text.replace("CLAUSE_LINE", said)
    text = text.replace("THIS_FILE", path.name)
    path.write_text(text)
    return path
