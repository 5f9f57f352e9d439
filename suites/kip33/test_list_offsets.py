"""KIP-33: the time index and ListOffsets by timestamp, over logs with several segments."""
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from reference.types import (
    Advance,
    CreateTopic,
    DescribeLog,
    Fetch,
    History,
    ListOffsets,
    Produce,
    RetentionPass,
    TopicConfig,
)
from strategies import timestamps
from suites._support import LAT, NOW, batch

SEGMENT_MS = 60_000
MISSING_ONLY = st.lists(st.lists(st.just(-1), min_size=1, max_size=3), min_size=1, max_size=3)  # no timestamps at all
STAMPS = st.one_of(st.lists(st.lists(timestamps(now=NOW, bounds=[SEGMENT_MS]), min_size=1, max_size=3), max_size=6),
                   MISSING_ONLY)


def searched_history(profile, batches, targets, timestamp_type=None, retention=False, gap=0) -> History:
    kwargs = {"timestamp_type": timestamp_type} if timestamp_type else {}
    ops = [CreateTopic("t", TopicConfig(segment_ms=SEGMENT_MS, retention_ms=600_000, **kwargs))]
    for stamps in batches:
        ops += [Produce("t", batch(*stamps)), Advance(gap)]
    ops += [RetentionPass("t")] if retention else []
    ops += [ListOffsets("t", target) for target in targets] + [Fetch("t"), DescribeLog("t")]
    return History(profile, tuple(ops), start_ms=NOW)


TARGETS = st.lists(st.one_of(st.sampled_from([-1, -2, -3]), timestamps(now=NOW, bounds=[SEGMENT_MS], min_value=0)),
                   min_size=1, max_size=6)


@pytest.mark.clause("KIP-33.list-offsets-first-offset-at-or-after", "KIP-33.list-offsets-not-found",
                    "KIP-33.list-offsets-first-segment-only", "KIP-33.list-offsets-latest",
                    "KIP-33.list-offsets-earliest", "KIP-33.list-offsets-max-timestamp")
@example(batches=[[NOW], [NOW + 2 * SEGMENT_MS], [NOW + SEGMENT_MS]], targets=[NOW + SEGMENT_MS, -3, -1, -2])
@example(batches=[[-1], [-1], [NOW - 5]], targets=[0, -3])
@example(batches=[[NOW], [NOW + SEGMENT_MS, NOW - 1]], targets=[-3])  # the max is not the batch's last record
@example(batches=[], targets=[-3, -1, -2, 0])
@example(batches=[[-1], [-1, -1]], targets=[-3, 0])  # a log without timestamps: its max is Kafka's -1 floor
@example(batches=[[-509], [-1]], targets=[-3])  # the first batch's header max is the -1 floor: nothing found
@example(batches=[[0], [NOW]], targets=[1])  # a largest timestamp of 0 is a timestamp, not a reason for the mtime
@given(batches=STAMPS, targets=TARGETS)
def test_list_offsets_returns_the_first_offset_at_or_after_the_target(impl, profile, batches, targets):
    for timestamp_type, gap in ((None, 0), (None, SEGMENT_MS + 1), (LAT, SEGMENT_MS + 1)):
        assert_conforms(impl, searched_history(profile, batches, targets, timestamp_type, gap=gap))


@pytest.mark.clause("KIP-33.list-offsets-first-segment-only", "KIP-33.list-offsets-not-found")
@example(batches=[[-1], [NOW]], targets=[0])
@given(batches=STAMPS, targets=TARGETS)
def test_list_offsets_after_retention_and_mtime_qualified_segments(impl, profile, batches, targets):
    assert_conforms(impl, searched_history(profile, batches, targets, retention=True, gap=SEGMENT_MS + 1))


@pytest.mark.clause("KIP-33.time-index-running-max", "KIP-33.time-index-strictly-increasing",
                    "KIP-33.time-index-skips-no-timestamp")
@example(batches=[[NOW + 5], [NOW], [NOW + 5], [NOW + 9], [-1]])
@given(batches=STAMPS)
def test_time_index_records_the_running_max_when_it_strictly_increases(impl, profile, batches):
    assert_conforms(impl, searched_history(profile, batches, []))
