"""Kafka's own produce tests, pinned (kafka_own_tests.py says how a row restates one): LogValidatorTest's
and ProduceRequestTest's single produces (accepted or rejected, what is stored), and ProduceRequestTest's
response fields over several produces."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import (
    INVALID_TIMESTAMP,
    NO_TIMESTAMP,
    NONE,
    ONE_HOUR_MS,
    Batch,
    TimestampType,
    TopicConfig,
)
from ktc.suites._support import NOW, appends, batch, one_append
from ktc.suites.pinned.kafka_own_tests import BOTH_3X, K4, K35, K36, LVT_JAVA, LVT_SCALA, PRT, ULT, Fact, cite, rows

pytestmark = pytest.mark.pinned

pytestmark = pytest.mark.pinned

# ---- inputs as Kafka's tests build them ------------------------------------------------------
WINDOW_35 = TopicConfig(difference_max_ms=1000)  # LogValidator(timestampDiffMaxMs = 1000)
WINDOW = TopicConfig(before_max_ms=1000, after_max_ms=1000)  # LogValidator(before = 1000, after = 1000)
DAY_HOUR = TopicConfig(before_max_ms=24 * ONE_HOUR_MS, after_max_ms=ONE_HOUR_MS)
LAT_35 = TopicConfig(TimestampType.LOG_APPEND_TIME, difference_max_ms=1000)
LAT = TopicConfig(TimestampType.LOG_APPEND_TIME, before_max_ms=1000, after_max_ms=1000)
FIVE_MINUTES = 5 * 60_000
FIVE_HOURS = 5 * ONE_HOUR_MS  # ProduceRequestTest's `fiveMinutesInMs` is 5 * 60 * 60 * 1000 ms: five hours
STALE = (NOW - 1001,) * 3  # createRecords(timestamp = now - 1001): three records one ms outside the window
SPREAD = (NOW - 1, NOW + 1, NOW)  # check(Non)Compressed / checkRecompression: offset 1 carries the max
OLD = (1234,) * 3  # the LogAppendTime tests' producer timestamp, 1234 ms after the epoch
STAMPED = (NOW,) * 3  # every record and the batch take the broker's clock
EACH_RECORD = (0, 1, 2)  # one record error per record, batch indexes 0..2
REJECTED = "One or more records have been rejected due to invalid timestamp"  # ProduceRequestTest's literal


# ---- 1. one produce: accepted or rejected, and what is stored ------------------------------------
@dataclass(frozen=True)
class Append(Fact):
    config: TopicConfig = TopicConfig()
    timestamps: tuple[int, ...] = ()
    codec: str = "none"
    error: int = NONE  # the produce error Kafka's test expects
    record_errors: tuple[int, ...] | None = None  # batch indexes of the per-record errors, where asserted
    message: str | None = None  # the partition error message, where asserted
    stored: tuple[int, ...] | None = None  # record timestamps as stored, where asserted
    batch_max: int | None = None  # the stored batch's MaxTimestamp, where asserted


def append(path, tag, method, profiles, clause, case="", **fields) -> Append:
    return Append(**cite(path, method, tag, case), profiles=profiles, clause=clause, **fields)


def lvt35(method, clause, **fields):
    return append(LVT_SCALA, "3.5.2", method, K35, clause, **fields)


def lvt39(method, clause, **fields):
    return append(LVT_SCALA, "3.9.0-rc3", method, K36, clause, **fields)


def lvt4(method, clause, **fields):
    magic = "2" if method.startswith("check") else ""  # the 4.x Java test parametrizes by magic: row [2]
    return append(LVT_JAVA, "10821de632ba (4.x trunk)", method, K4, clause, magic, **fields)


def stale(lvt, config, codec="none"):
    """testInvalidCreateTime*V2 / testInvalidTimestampExceptionHasBatchIndex: now - 1001 against 1000 ms."""
    clause = "KIP-937.legacy-abs-difference" if config is WINDOW_35 else "KIP-937.before-bound"
    name = "Compressed" if codec == "gzip" else "NonCompressed"
    return [
        lvt(
            f"testInvalidCreateTime{name}V2",
            clause,
            config=config,
            timestamps=STALE,
            codec=codec,
            error=INVALID_TIMESTAMP,
        )
    ]


def batch_index(lvt, config):
    return lvt(
        "testInvalidTimestampExceptionHasBatchIndex",
        "KIP-937.per-record-validation",
        config=config,
        timestamps=STALE,
        codec="gzip",
        error=INVALID_TIMESTAMP,
        record_errors=EACH_RECORD,
    )


def kept(lvt, method, config, codec="none"):
    """Accepted as sent: each record keeps its CreateTime, the batch max is now + 1."""
    return lvt(
        method,
        "KIP-32.batch-max-timestamp",
        config=config,
        timestamps=SPREAD,
        codec=codec,
        stored=SPREAD,
        batch_max=NOW + 1,
    )


def overwritten(lvt, method, config, codec="none"):
    """LogAppendTime: 1234 ms is far outside the window, yet accepted and overwritten with now."""
    return lvt(
        method,
        "KIP-937.log-append-time-skips-validation",
        config=config,
        timestamps=OLD,
        codec=codec,
        stored=STAMPED,
        batch_max=NOW,
    )


def bounded(lvt, method, ts, clause):
    """testRecordWith{Past,Future}TimestampIsRejected: before 24 h, after 1 h, five minutes beyond."""
    return lvt(
        method,
        clause,
        config=DAY_HOUR,
        timestamps=(ts,) * 3,
        codec="gzip",
        error=INVALID_TIMESTAMP,
        record_errors=EACH_RECORD,
    )


def produce_rejected(tag, profiles, case, config, ts):
    """ProduceRequestTest.testProduceWithInvalidTimestamp: a gzip batch of three records, the config at 1000."""
    clause = {
        "difference": "KIP-937.long-max-fallback",
        "before": "KIP-937.before-bound",
        "after": "KIP-937.after-bound",
    }.get(case, "KIP-937.batch-error-message")
    return append(
        PRT,
        tag,
        "testProduceWithInvalidTimestamp",
        profiles,
        clause,
        case,
        config=config,
        timestamps=(ts,) * 3,
        codec="gzip",
        error=INVALID_TIMESTAMP,
        record_errors=EACH_RECORD,
        message=REJECTED,
    )


PAST_DAY = NOW - 24 * ONE_HOUR_MS - FIVE_MINUTES
AHEAD_HOUR = NOW + ONE_HOUR_MS + FIVE_MINUTES
APPENDS = [
    *stale(lvt35, WINDOW_35),
    *stale(lvt35, WINDOW_35, "gzip"),
    batch_index(lvt35, WINDOW_35),
    kept(lvt35, "testCompressedV2", WINDOW_35, "gzip"),
    overwritten(lvt35, "testLogAppendTimeNonCompressedV2", LAT_35),
    overwritten(lvt35, "testLogAppendTimeWithoutRecompressionV2", LAT_35, "gzip"),
    produce_rejected("3.5.2", K35, "", WINDOW_35, NOW - 1001),
    *stale(lvt39, WINDOW),
    *stale(lvt39, WINDOW, "gzip"),
    batch_index(lvt39, WINDOW),
    bounded(lvt39, "testRecordWithPastTimestampIsRejected", PAST_DAY, "KIP-937.before-bound"),
    bounded(lvt39, "testRecordWithFutureTimestampIsRejected", AHEAD_HOUR, "KIP-937.after-bound"),
    kept(lvt39, "testNonCompressedV2", WINDOW),
    kept(lvt39, "testCompressedV2", WINDOW, "gzip"),
    kept(lvt39, "testRecompressionV2", TopicConfig(before_max_ms=1000, after_max_ms=1000, compression_type="gzip")),
    overwritten(lvt39, "testLogAppendTimeNonCompressedV2", LAT),
    overwritten(lvt39, "testLogAppendTimeWithoutRecompressionV2", LAT, "gzip"),
    produce_rejected("3.9.0-rc3", K36, "difference", TopicConfig(difference_max_ms=1000), NOW - FIVE_HOURS),
    produce_rejected("3.9.0-rc3", K36, "before", TopicConfig(before_max_ms=1000), NOW - FIVE_HOURS),
    produce_rejected("3.9.0-rc3", K36, "after", TopicConfig(after_max_ms=1000), NOW + FIVE_HOURS),
    append(
        ULT,
        BOTH_3X,
        "testAppendWithNoTimestamp",
        K35 + K36,
        "KIP-228.minus-one-is-no-timestamp",
        timestamps=(NO_TIMESTAMP,),
    ),
    *stale(lvt4, WINDOW),
    *stale(lvt4, WINDOW, "gzip"),
    batch_index(lvt4, WINDOW),
    bounded(lvt4, "testRecordWithPastTimestampIsRejected", PAST_DAY, "KIP-937.before-bound"),
    bounded(lvt4, "testRecordWithFutureTimestampIsRejected", AHEAD_HOUR, "KIP-937.after-bound"),
    kept(lvt4, "checkNonCompressed", WINDOW),
    kept(lvt4, "checkCompressed", WINDOW, "gzip"),
    overwritten(lvt4, "checkLogAppendTimeWithoutRecompression", LAT, "gzip"),
    produce_rejected("b1eafb67645b (4.x trunk)", K4, "before", TopicConfig(before_max_ms=1000), NOW - FIVE_HOURS),
    produce_rejected("b1eafb67645b (4.x trunk)", K4, "after", TopicConfig(after_max_ms=1000), NOW + FIVE_HOURS),
]


def append_outcome(fact: Append, produced, fetched) -> dict:
    """The reference's answer, projected on what the Kafka test asserts (unasserted fields left out)."""
    records = [r.timestamp for b in fetched.batches for r in b.records]
    seen = {
        "error": produced.error_code,
        "record_errors": tuple(e.batch_index for e in produced.record_errors if e.message is not None),
        "message": produced.error_message,
        "stored": tuple(records),
        "batch_max": fetched.batches[0].max_timestamp if fetched.batches else None,
    }
    return {k: v for k, v in seen.items() if getattr(fact, k) is not None}


def kafka_expects(fact: Append) -> dict:
    wanted = ("error", "record_errors", "message", "stored", "batch_max")
    return {k: getattr(fact, k) for k in wanted if getattr(fact, k) is not None}


@pytest.mark.clause(
    "KIP-937.per-record-validation",
    "KIP-937.whole-batch-rejection",
    "KIP-937.error-code-32",
    "KIP-937.batch-error-message",
    "KIP-937.before-bound",
    "KIP-937.after-bound",
    "KIP-937.legacy-abs-difference",
    "KIP-937.long-max-fallback",
    "KIP-937.log-append-time-skips-validation",
    "KIP-937.log-append-time-overwrites",
    "KIP-32.create-time-kept",
    "KIP-32.batch-max-timestamp",
    "KIP-228.minus-one-is-no-timestamp",
)
@pytest.mark.parametrize("fact", rows(APPENDS))
def test_produce_outcome_is_what_kafkas_test_expects(impl, profile, fact):
    history = one_append(profile, fact.config, *fact.timestamps, codec=fact.codec)
    produced, fetched = run(history)[1:3]
    assert append_outcome(fact, produced, fetched) == kafka_expects(fact), fact.source
    assert_conforms(impl, history)


# ---- 2. several produces: the ProduceResponse fields -----------------------------------------------
@dataclass(frozen=True)
class Responses(Fact):
    batches: tuple[Batch, ...] = ()
    base_offsets: tuple[int, ...] = ()  # each accepted, log_append_time -1, no record errors


def simple_produce(tag, profiles):
    """testSimpleProduceRequest: one uncompressed record, then two gzip records, all stamped now."""
    return Responses(
        **cite(PRT, "testSimpleProduceRequest", tag),
        profiles=profiles,
        clause="KIP-32.produce-response-log-append-time",
        batches=(batch(NOW), batch(NOW, NOW, codec="gzip")),
        base_offsets=(0, 1),
    )


RESPONSES = [
    simple_produce("3.5.2", K35),
    simple_produce("3.9.0-rc3", K36),
    simple_produce("b1eafb67645b (4.x trunk)", K4),
]


@pytest.mark.clause("KIP-32.produce-response-log-append-time", "KIP-32.offsets-contiguous")
@pytest.mark.parametrize("fact", rows(RESPONSES))
def test_produce_responses_are_what_kafkas_test_expects(impl, profile, fact):
    history = appends(profile, TopicConfig(), fact.batches)
    responses = run(history)[1 : 1 + len(fact.batches)]
    seen = [(r.error_code, r.base_offset, r.log_append_time, r.record_errors) for r in responses]
    assert seen == [(NONE, offset, -1, ()) for offset in fact.base_offsets], fact.source
    assert_conforms(impl, history)
