"""A consumer, judged on what it hands the application for batches a real broker serves (written by ktc's own
client, read back as stored): a CreateTime record reads its own timestamp (first timestamp + delta) with type
CreateTime, in every codec and for -1 and other negatives; every record of a LogAppendTime batch reads the
batch's LogAppendTime, although its deltas (kept from the producer's varied timestamps) disagree with it; and
KIP-228's consumer table, row by row, under the KIP texts."""

from __future__ import annotations

import pytest

from ktc.judge.declined import unexercised, unsupported
from ktc.reference import clients as model
from ktc.reference.clients import LOG_APPEND_TIME
from ktc.reference.types import INT64_MIN, Batch, Record
from ktc.suites.clients.observe import CODECS, T0, served

pytestmark = pytest.mark.pinned
VARIED = (T0 + 5_000, T0 + 1_000, T0 + 9_000, T0 + 3_000)  # deltas that disagree with the max
NEGATIVE = (-2, -1, -1_000, T0)
TABLE = [(-1, False), (-1, True), (INT64_MIN, True)]  # KIP-228's consumer table: (stored, isTimestampExtended)


def batches(timestamps: tuple[int, ...], codecs=CODECS) -> list[Batch]:
    return [Batch(tuple(Record(ts, None, b"v") for ts in timestamps), codec=codec) for codec in codecs]


def mismatches(seen, library: str, codec: str) -> list[str]:
    """Every record of ``codec``'s batches the library handed otherwise than the model says, in words."""
    read, out = seen.read(), []
    for batch in (b for b in seen.stored if b.codec == codec):
        kind = batch.timestamp_type.value
        for record in batch.records:
            want, types = model.consumer_expects(kind, batch.max_timestamp, record.create_time)
            got = read.get(record.offset)
            if got is None:
                out.append(f"offset {record.offset} ({batch.codec}) was not handed to the application")
            elif int(got["timestamp"]) != want or got["timestamp_type"] not in types:
                out.append(
                    f"offset {record.offset} of a {kind} batch ({batch.codec}, first timestamp {batch.base_timestamp}, "
                    f"MaxTimestamp {batch.max_timestamp}) read {got['timestamp']} {got['timestamp_type']}; "
                    f"the model: {want} {kind}"
                )
    return out


def served_codec(impl, configs: dict, timestamps: tuple[int, ...], label: str, codec: str):
    """One observation of every codec (one topic, one consume); when the library cannot read it, one of
    ``codec`` alone, so a codec the library lacks declines its own part with the library's reason, not the rest."""
    extra = batches(NEGATIVE, ("none",)) if label == "ct" else []
    seen = served(impl, configs, batches(timestamps) + extra, label)
    if seen.answer["ok"]:
        return seen
    alone = served(
        impl, configs, batches(timestamps, (codec,)) + (extra if codec == "none" else []), f"{label}-{codec}"
    )
    said = alone.answer.get("error") or {}
    if codec != "none" and said.get("kind") == "local" and codec in said.get("message", "").lower():
        raise unsupported(f"{impl.name} does not consume {codec} batches here: {said.get('message', '')[:150]}")
    assert alone.answer["ok"], f"{impl.name} could not consume ({codec}): {said.get('message', '')[:200]}"
    return alone


@pytest.mark.clause("KIP-32.client-consumer-create-time")
@pytest.mark.parametrize("codec", CODECS)
def test_a_consumer_reads_each_create_time_record_as_it_was_stored(impl, profile, codec):
    seen = served_codec(impl, {}, VARIED, "ct", codec)
    wrong = mismatches(seen, impl.name, codec)
    assert not wrong, f"{impl.name}: {wrong[0]} ({len(wrong)} records)"


@pytest.mark.clause("KIP-32.client-consumer-log-append-time")
@pytest.mark.parametrize("codec", CODECS)
def test_a_consumer_reads_every_record_of_a_log_append_time_batch_as_its_log_append_time(impl, profile, codec):
    seen = served_codec(impl, {"message.timestamp.type": LOG_APPEND_TIME}, VARIED, "lat", codec)
    wrong = mismatches(seen, impl.name, codec)
    assert not wrong, f"{impl.name}: {wrong[0]} ({len(wrong)} records)"


@pytest.mark.clause("KIP-228.consumer-table")
@pytest.mark.parametrize("stored, extended", TABLE, ids=["minus-one-plain", "minus-one-extended", "min-extended"])
def test_a_consumer_reads_kip228s_consumer_table(impl, profile, stored, extended):
    rows = [Batch((Record(ts, None, b"v"),), timestamp_extended=ext) for ts, ext in TABLE]
    seen = served(impl, {}, rows, "kip228")
    if len(seen.stored) != len(TABLE):
        raise unexercised(f"the broker stored {len(seen.stored)} of KIP-228's {len(TABLE)} rows")
    assert seen.answer["ok"], f"{impl.name} could not consume KIP-228's rows: {seen.answer['error']['message'][:200]}"
    batch = seen.stored[TABLE.index((stored, extended))]
    got = seen.read().get(batch.records[0].offset)
    assert got is not None, f"{impl.name} did not hand the application the record stored as {stored}"
    reading = model.consumer_reading(int(got["timestamp"]), got["timestamp_type"])
    table = sorted(map(str, model.kip228.interpret(stored, extended, True)))
    assert model.consumer_table_allows(stored, extended, reading), (
        f"{impl.name} read {stored} (isTimestampExtended={int(extended)}) as {reading[0]} {got['timestamp']} "
        f"{got['timestamp_type']}; KIP-228's new consumer: {table}"
    )
