"""Kafka's own log tests, pinned (kafka_own_tests.py says how a row restates one): UnifiedLogTest's
time-based rolling and time-based retention, as segments described after each step."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import (
    NO_TIMESTAMP,
    Advance,
    CreateTopic,
    DescribeLog,
    History,
    Produce,
    RetentionPass,
    TopicConfig,
)
from ktc.suites._support import NOW, batch
from ktc.suites.pinned.kafka_own_tests import BOTH_3X, K35, K36, ULT, Fact, cite, rows, singles

pytestmark = [pytest.mark.pinned, pytest.mark.retention]


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
