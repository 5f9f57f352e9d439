"""Kafka's own timestamp expectations, pinned: each row restates one test of Apache Kafka as data.

Every row keeps its source (``file::testMethod @ tag or commit``, like test262 keeps each test's
source) and runs only under the profile of the Kafka version it was read from: 3.5.2 -> kafka-3.5,
3.9.0-rc3 -> kafka-3.6, the 4.x trunk commits -> kafka-4.  A row read unchanged at two tags runs
under both.  Each test checks the reference's own answer against the expectation Kafka's test
asserts, then judges the implementation with ``assert_conforms``.  A row the reference disagrees
with stays, marked ``xfail(strict=True)`` with the reason (a model bug or a documented deviation).

Restating, not copying: only what a Kafka test asserts is expected here.  Mappings used throughout:
LogValidator's ``time`` (or MockTime) is the broker clock ``NOW``; its RecordValidationException
with InvalidTimestampException is the produce error INVALID_TIMESTAMP with one record error per
record; Kafka's "no offset" (``None``/``Optional.empty``) is ListOffsets' -1/-1; the validator's
limits are the topic's configs (3.5: ``difference.max.ms``; 3.6+: ``before``/``after.max.ms``);
ktc models v2 batches only, so a test's down/up-conversion (its ``toMagic``) is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import (
    INVALID_TIMESTAMP,
    NO_TIMESTAMP,
    NONE,
    ONE_HOUR_MS,
    Advance,
    Batch,
    CreateTopic,
    DescribeLog,
    History,
    ListOffsets,
    Produce,
    RetentionPass,
    TimestampType,
    TopicConfig,
)
from ktc.suites._support import NOW, appends, batch, one_append

pytestmark = pytest.mark.pinned

LVT_SCALA = "core/src/test/scala/unit/kafka/log/LogValidatorTest.scala"
LVT_JAVA = "storage/src/test/java/org/apache/kafka/storage/internals/log/LogValidatorTest.java"
PRT = "core/src/test/scala/unit/kafka/server/ProduceRequestTest.scala"
LORT = "core/src/test/scala/unit/kafka/server/ListOffsetsRequestTest.scala"
ULT = "core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala"
LST = "core/src/test/scala/unit/kafka/log/LogSegmentTest.scala"
BOTH_3X = "3.5.2 and 3.9.0-rc3 (same assertions)"
K35, K36, K4 = ("kafka-3.5",), ("kafka-3.6",), ("kafka-4",)

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


@dataclass(frozen=True)
class Fact:
    id: str
    source: str
    profiles: tuple[str, ...]
    clause: str
    deviation: str | None = None  # set: the reference disagrees, xfail(strict) with this reason


def rows(facts) -> list:
    """One pytest.param per fact: pinned to its profiles, citing its clause, strict xfail if it deviates."""

    def marks(f):
        pinned = [pytest.mark.profiles(*f.profiles), pytest.mark.clause(f.clause)]
        return pinned + ([pytest.mark.xfail(strict=True, reason=f.deviation)] if f.deviation else [])

    return [pytest.param(f, id=f.id, marks=marks(f)) for f in facts]


def slug(method: str) -> str:
    """testInvalidCreateTimeCompressedV2 -> invalid-create-time-compressed-v2."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", re.sub(r"^(test|check)", "", method))
    return words.lower()


def cite(path: str, method: str, tag: str, case: str = "") -> dict:
    name = path.rsplit("/", 1)[-1].split(".")[0]
    short = {
        "LogValidatorTest": "lvt",
        "ProduceRequestTest": "prt",
        "ListOffsetsRequestTest": "lort",
        "UnifiedLogTest": "ult",
        "LogSegmentTest": "lst",
    }[name]
    version = {"3.5.2": "3.5", "3.9.0-rc3": "3.9"}.get(tag.split(" ")[0], "4.x")
    version = "3.x" if tag == BOTH_3X else version
    return {
        "id": "-".join(filter(None, [short, version, slug(method), case])),
        "source": f"{path}::{method}{f'[{case}]' if case else ''} @ {tag}",
    }


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


# ---- 3. ListOffsets: produces and lookups in Kafka's order -----------------------------------------
EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3


@dataclass(frozen=True)
class Ask:
    target: int
    offset: int | None
    timestamp: int | None = None  # only where Kafka's test asserts it


@dataclass(frozen=True)
class Lookup(Fact):
    steps: tuple[Batch | Ask, ...] = ()


def singles(*timestamps: int) -> tuple[Batch, ...]:
    return tuple(batch(ts) for ts in timestamps)


T1 = NOW
# The LogSegmentTest segment starts at offset 40: a first batch of 40 records without timestamps stands in
# for offsets 0-39 so Kafka's offsets stay verbatim (records without a timestamp never match a target).
SEGMENT_40 = (batch(*[NO_TIMESTAMP] * 40), *singles(*range(400, 500, 10)))
LOOKUPS = [
    Lookup(
        **cite(LORT, "testResponseIncludesLeaderEpoch", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-max-timestamp",  # 9 producer records at send time, then one at now + 10
        steps=(batch(*[NOW] * 9), batch(NOW + 10), Ask(0, 0), Ask(EARLIEST, 0), Ask(LATEST, 10), Ask(MAX_TIMESTAMP, 9)),
    ),
    Lookup(
        **cite(ULT, "testFetchOffsetByTimestampIncludesLeaderEpoch", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-first-offset-at-or-after",
        steps=(
            Ask(0, -1, -1),
            *singles(T1, T1 + 1),
            Ask(T1, 0, T1),
            Ask(T1 + 1, 1, T1 + 1),
            Ask(EARLIEST, 0, -1),
            Ask(LATEST, 2, -1),
        ),
    ),
    Lookup(
        **cite(ULT, "testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-max-timestamp",
        steps=(Ask(0, -1, -1), *singles(T1, T1 + 1, T1), Ask(MAX_TIMESTAMP, 1, T1 + 1)),
    ),
    Lookup(
        **cite(LST, "testFindOffsetByTimestamp", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-not-found",
        steps=(
            *SEGMENT_40,
            Ask(MAX_TIMESTAMP, None, 490),
            Ask(420, 42),
            Ask(421, 43),
            Ask(430, 43),
            Ask(431, 44),
            Ask(491, -1),
            Ask(401, 41),
            Ask(399, 40),
        ),
    ),
]


def lookup_history(profile: str, fact: Lookup) -> History:
    ops = [ListOffsets("t", s.target) if isinstance(s, Ask) else Produce("t", s) for s in fact.steps]
    return History(profile, (CreateTopic("t", TopicConfig()), *ops), start_ms=NOW)


@pytest.mark.clause(
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-not-found",
    "KIP-33.list-offsets-first-segment-only",
    "KIP-33.list-offsets-latest",
    "KIP-33.list-offsets-earliest",
    "KIP-33.list-offsets-max-timestamp",
)
@pytest.mark.parametrize("fact", rows(LOOKUPS))
def test_list_offsets_answers_are_what_kafkas_test_expects(impl, profile, fact):
    history = lookup_history(profile, fact)
    answers = [r for op, r in zip(history.ops, run(history)) if isinstance(op, ListOffsets)]
    asks = [s for s in fact.steps if isinstance(s, Ask)]
    seen = [
        (
            a.target,
            r.error_code,
            r.offset if a.offset is not None else None,
            r.timestamp if a.timestamp is not None else None,
        )
        for a, r in zip(asks, answers)
    ]
    assert seen == [(a.target, NONE, a.offset, a.timestamp) for a in asks], fact.source
    assert_conforms(impl, history)


# ---- 4. time-based rolling -------------------------------------------------------------------------
@dataclass(frozen=True)
class Rolls(Fact):
    config: TopicConfig = TopicConfig()
    steps: tuple[tuple[int, int, int], ...] = ()  # (ms the mock clock sleeps first, record timestamp, segments after)


SEGMENT_MS = 60 * 60  # createLogConfig(segmentMs = 1 * 60 * 60L): 3600 ms
W = SEGMENT_MS + 1  # each mockTime.sleep(segmentMs + 1)
ROLLS = [
    Rolls(
        **cite(ULT, "testTimeBasedLogRollDuringAppend", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-32.roll-by-first-timestamp",
        config=TopicConfig(segment_ms=SEGMENT_MS),
        # Without timestamps the wall clock rolls; once a segment starts with a timestamp, timestamps do.  The
        # test's last step (an empty record set does not roll) has no counterpart: a ktc batch has records.
        steps=(
            (W, NO_TIMESTAMP, 1),
            (0, NO_TIMESTAMP, 2),
            (W, NO_TIMESTAMP, 3),
            (W, NO_TIMESTAMP, 4),
            (0, NOW + 4 * W, 4),
            (W, NOW + 4 * W, 5),
            (W, NOW + 4 * W, 5),
            (0, NOW + 5 * W, 6),
        ),
    )
]


def roll_history(profile: str, fact: Rolls) -> History:
    ops = [CreateTopic("t", fact.config)]
    for sleep, ts, _ in fact.steps:
        ops += [Advance(sleep)] * bool(sleep) + [Produce("t", batch(ts))]
    return History(profile, (*ops, DescribeLog("t")), start_ms=NOW)


@pytest.mark.clause("KIP-32.roll-by-first-timestamp")
@pytest.mark.parametrize("fact", rows(ROLLS))
def test_time_based_rolls_are_what_kafkas_test_expects(impl, profile, fact):
    history = roll_history(profile, fact)
    trace = run(history)
    rolled = [r.rolled for op, r in zip(history.ops, trace) if isinstance(op, Produce)]
    counts = [1 + sum(rolled[: i + 1]) for i in range(len(rolled))]
    assert counts == [n for _, _, n in fact.steps], fact.source
    assert len(trace[-1].segments) == fact.steps[-1][2]
    assert_conforms(impl, history)


# ---- 5. time-based retention -----------------------------------------------------------------------
@dataclass(frozen=True)
class Retention(Fact):
    config: TopicConfig = TopicConfig()
    timestamp: int = NOW  # fifteen single-record appends with this timestamp
    deletes: bool = False  # whether deleteOldSegments removes anything
    remaining: int | None = None  # segments left, where the count does not depend on size-based rolling


RETENTION = [
    Retention(
        **cite(ULT, "shouldDeleteTimeBasedSegmentsReadyToBeDeleted", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-32.retention-segment-level",
        config=TopicConfig(retention_ms=10_000),
        timestamp=10,
        deletes=True,
        remaining=1,
    ),
    # Kafka counts 3 segments before and after (5 records each by size); ktc has no size rolling, so the
    # expectation kept is the test's point: none of them is deleted.
    Retention(
        **cite(ULT, "shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-32.retention-by-last-timestamp",
        config=TopicConfig(retention_ms=10_000_000),
        timestamp=NOW,
        deletes=False,
    ),
]


@pytest.mark.clause("KIP-32.retention-segment-level", "KIP-32.retention-by-last-timestamp")
@pytest.mark.parametrize("fact", rows(RETENTION))
def test_time_based_retention_is_what_kafkas_test_expects(impl, profile, fact):
    produces = [Produce("t", b) for b in singles(*[fact.timestamp] * 15)]
    ops = (CreateTopic("t", fact.config), *produces, RetentionPass("t"), DescribeLog("t"))
    history = History(profile, ops, start_ms=NOW)
    passed, described = run(history)[-2:]
    seen = {"deletes": bool(passed.deleted_base_offsets), "remaining": len(described.segments)}
    wanted = {"deletes": fact.deletes, "remaining": fact.remaining}
    assert {k: v for k, v in seen.items() if wanted[k] is not None} == {
        k: v for k, v in wanted.items() if v is not None
    }, fact.source
    assert_conforms(impl, history)
