"""What a broker answers after it was stopped uncleanly (SIGKILL) and started again on its log directory.

No KIP speaks of crashes, so nothing here is a clause of its own: every clause a read rests on still holds
after the restart, judged against the model's ``Crash`` (reference/segments.py, ``recover``): the records and
their timestamps stay, LogAppendTime ones too; the log start stays; the active segment's running max and time
index are rebuilt from its batches (LogSegment.recover), the closed segments' are kept; and every segment is
opened anew, so time-based rolling of a segment without a timestamp measures from the restart.  Reads before
and after the crash see one log state, so the invariants over reads pair them.

One fixed history, not Hypothesis: on a broker each crash costs a JVM start.  ``histories(crashes=True)`` draws
crashes for the reference (suites/selftest/test_strategies.py) and for the broker tier
(suites/broker/test_crash_recovery.py).
"""

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference.types import (
    Advance,
    Crash,
    CreateTopic,
    DescribeLog,
    Fetch,
    History,
    ListOffsets,
    Produce,
    TopicConfig,
)
from ktc.suites._support import LAT, NOW, batch

pytestmark = pytest.mark.restarts_broker

SEGMENT_MS = 600_000
HIGH = NOW + 500_000  # the partition's max, left in a closed segment by the roll
ROLLED = TopicConfig(segment_ms=SEGMENT_MS)


def reads(topic: str) -> tuple:
    """A Fetch, MAX_TIMESTAMP, a lookup that only the closed segment answers, EARLIEST, EARLIEST_LOCAL, LATEST."""
    return (Fetch(topic), *(ListOffsets(topic, target) for target in (-3, HIGH - 100_000, -2, -4, -1)))


def crashed(profile: str) -> History:
    """``t``: a batch without a timestamp then the max, rolled away by wall clock, then a lower batch in the
    active segment.  ``u``: a segment without a timestamp that would roll by wall clock without the restart
    (400 s before it and 300 s after, segment.ms 600 s) and does not with it.  ``v``: a LogAppendTime record."""
    ops = (
        CreateTopic("t", ROLLED),
        CreateTopic("u", ROLLED),
        CreateTopic("v", TopicConfig(timestamp_type=LAT)),
        Produce("t", batch(-1)),
        Produce("t", batch(HIGH)),
        Produce("v", batch(NOW)),
        Advance(SEGMENT_MS + 1),
        Produce("t", batch(NOW + 1_000)),
        Produce("u", batch(-1)),
        Advance(400_000),
        *reads("t"),
        Fetch("v"),
        Crash(),
        *reads("t"),
        Fetch("v"),
        Advance(300_000),
        Produce("u", batch(-1)),
        Produce("t", batch(HIGH + 1)),
        *reads("t"),
        DescribeLog("t"),
        DescribeLog("u"),
    )
    return History(profile, ops, start_ms=NOW)


@pytest.mark.clause(
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-first-segment-only",
    "KIP-33.list-offsets-earliest",
    "KIP-33.list-offsets-earliest-local",
    "KIP-33.list-offsets-latest",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
    "KIP-33.read-log-start",
    "KIP-32.read-timestamp-stable",
    "KIP-32.read-log-append-time",
    "KIP-32.roll-by-first-timestamp",
)
def test_a_broker_restarted_after_a_crash_answers_from_the_log_it_had(impl, profile):
    assert_conforms(impl, crashed(profile))
