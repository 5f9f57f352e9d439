"""KIP-32: time-based rolling and retention, with timestamps in the past, the future and missing."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import INT64_MAX, INT64_MIN, ONE_HOUR_MS, Advance, DescribeLog, RetentionPass, TopicConfig
from ktc.strategies import histories, timestamps
from ktc.suites._support import LAT, NOW, appends, batch, one_append

pytestmark = pytest.mark.retention

SEGMENT_MS = 60_000
RETENTION_MS = 600_000


def rolled_history(profile, stamps, gaps, timestamp_type, retention_ms=RETENTION_MS, retention_pass=True):
    config = TopicConfig(segment_ms=SEGMENT_MS, retention_ms=retention_ms, timestamp_type=timestamp_type)
    history = appends(profile, config, [batch(ts) for ts in stamps])
    ops, out = list(history.ops), []
    for op, gap in zip(ops, [0, *gaps, *[0] * len(ops)]):
        out += [Advance(gap), op] if gap else [op]
    probes = (RetentionPass("t"), DescribeLog("t")) if retention_pass else (DescribeLog("t"),)
    return history.__class__(profile, tuple(out) + probes, start_ms=NOW)


STAMPS = st.lists(timestamps(now=NOW, bounds=[SEGMENT_MS, RETENTION_MS]), min_size=1, max_size=6)
GAPS = st.lists(st.integers(0, 2 * RETENTION_MS), max_size=6)


@pytest.mark.clause("KIP-32.roll-by-first-timestamp", "KIP-32.future-timestamp-breaks-rolling")
@example(stamps=[NOW, NOW + SEGMENT_MS, NOW + SEGMENT_MS + 1], gaps=[])
@example(stamps=[NOW + 10**12, NOW, NOW + 2 * SEGMENT_MS], gaps=[SEGMENT_MS + 1])
@example(stamps=[-1, -1], gaps=[SEGMENT_MS + 1])
@example(stamps=[0, NOW], gaps=[])  # a first batch max of 0 is a rolling base, not a missing timestamp
@given(stamps=STAMPS, gaps=GAPS)
def test_segment_rolls_when_incoming_max_passes_segment_ms(impl, profile, stamps, gaps):
    assert_conforms(impl, rolled_history(profile, stamps, gaps, timestamp_type=TopicConfig().timestamp_type))


# No retention pass: a broker cannot run one on demand, so a history with one is undecidable there;
# without it a broker on a clock ktc sets is judged on its rolls (judge/logdir.py).
@pytest.mark.clause("KIP-32.roll-by-first-timestamp", "KIP-32.future-timestamp-breaks-rolling")
@example(stamps=[NOW, NOW + SEGMENT_MS, NOW + SEGMENT_MS + 1], gaps=[])
@example(stamps=[-1, -1], gaps=[SEGMENT_MS])
@example(stamps=[-1, -1], gaps=[SEGMENT_MS + 1])
@example(stamps=[NOW + 10**12, NOW, NOW + 2 * SEGMENT_MS], gaps=[SEGMENT_MS + 1])
@given(stamps=STAMPS, gaps=GAPS)
def test_segment_rolls_by_time_are_the_same_without_a_retention_pass(impl, profile, stamps, gaps):
    history = rolled_history(profile, stamps, gaps, TopicConfig().timestamp_type, retention_pass=False)
    assert_conforms(impl, history)


@pytest.mark.clause(
    "KIP-32.retention-by-last-timestamp",
    "KIP-32.retention-segment-level",
    "KIP-32.retention-mtime-fallback",
    "KIP-32.future-timestamp-pins-retention",
)
@example(stamps=[NOW - RETENTION_MS - 1, NOW + 10**12, NOW - RETENTION_MS - 1], gaps=[SEGMENT_MS + 1] * 2)
@example(stamps=[NOW + SEGMENT_MS // 2, NOW - RETENTION_MS - 1], gaps=[0])  # future, yet inside kafka-4's 1 h
@example(stamps=[-1, NOW], gaps=[RETENTION_MS + 1])
@example(stamps=[NOW - RETENTION_MS, NOW - RETENTION_MS - 1], gaps=[0])
@given(stamps=STAMPS, gaps=GAPS)
def test_retention_deletes_old_segments_oldest_first_and_stops_at_a_survivor(impl, profile, stamps, gaps):
    assert_conforms(impl, rolled_history(profile, stamps, gaps, timestamp_type=TopicConfig().timestamp_type))


WEEK_MS = 168 * ONE_HOUR_MS  # log.roll.hours and log.retention.hours both default to 168
AROUND_A_WEEK = st.one_of(
    st.sampled_from([WEEK_MS - 1, WEEK_MS, WEEK_MS + 1]), st.integers(WEEK_MS - ONE_HOUR_MS, WEEK_MS + ONE_HOUR_MS)
)


@pytest.mark.clause("KIP-32.roll-by-first-timestamp", "KIP-32.retention-by-last-timestamp")
@example(age=WEEK_MS + 1, gap=WEEK_MS)
@example(age=WEEK_MS, gap=WEEK_MS + 1)
@given(age=AROUND_A_WEEK, gap=AROUND_A_WEEK)
def test_unset_segment_and_retention_ms_mean_one_week(impl, profile, age, gap):
    first = NOW - age
    history = appends(profile, TopicConfig(), [batch(first), batch(first + gap)])
    probes = (RetentionPass("t"), DescribeLog("t"))
    assert_conforms(impl, history.__class__(profile, history.ops + probes, start_ms=NOW))


@pytest.mark.clause("KIP-32.retention-by-last-timestamp", "KIP-32.retention-segment-level")
@example(stamps=[NOW - SEGMENT_MS, NOW + SEGMENT_MS], gaps=[], retention_ms=-1)
@example(stamps=[NOW - SEGMENT_MS, NOW + SEGMENT_MS], gaps=[], retention_ms=0)
@given(stamps=STAMPS, gaps=GAPS, retention_ms=st.sampled_from([-1, 0, 1]))
def test_retention_ms_minus_one_keeps_every_segment_and_zero_keeps_none_older_than_now(
    impl, profile, stamps, gaps, retention_ms
):
    history = rolled_history(profile, stamps, gaps, TopicConfig().timestamp_type, retention_ms=retention_ms)
    assert_conforms(impl, history)


@pytest.mark.clause(
    "KIP-32.roll-by-first-timestamp", "KIP-32.retention-by-last-timestamp", "KIP-32.retention-segment-level"
)
@given(stamps=STAMPS, gaps=GAPS)
def test_log_append_time_segments_roll_and_expire_by_broker_clock(impl, profile, stamps, gaps):
    assert_conforms(impl, rolled_history(profile, stamps, gaps, timestamp_type=LAT))


@pytest.mark.clause(
    "KIP-32.roll-by-first-timestamp",
    "KIP-32.retention-segment-level",
    "KIP-32.retention-by-last-timestamp",
    "KIP-32.log-append-time-assigned",
    "KIP-32.create-time-kept",
    "KIP-32.offsets-contiguous",
)
@given(data=st.data())
def test_generated_histories_agree_with_the_reference(impl, profile, data):
    assert_conforms(impl, data.draw(histories(profile=profile, max_ops=16)))


def around(floor: int) -> st.SearchStrategy:
    """Unset, the floor and its neighbours first, then the int64 ends and anything."""
    return st.one_of(
        st.none(),
        st.sampled_from([floor - 1, floor, floor + 1, INT64_MIN, INT64_MAX]),
        st.integers(INT64_MIN, INT64_MAX),
    )


@pytest.mark.clause("KIP-32.time-configs-range")
@example(segment_ms=0, retention_ms=None)
@example(segment_ms=1, retention_ms=-1)
@example(segment_ms=None, retention_ms=-2)
@given(segment_ms=around(1), retention_ms=around(-1))
def test_segment_and_retention_ms_below_their_floors_are_refused(impl, profile, segment_ms, retention_ms):
    config = TopicConfig(segment_ms=segment_ms, retention_ms=retention_ms)
    assert_conforms(impl, one_append(profile, config, NOW))
