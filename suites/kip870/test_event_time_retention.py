"""KIP-870 (under discussion): retention by the partition's max event time, under the kip profile."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import Advance, CreateTopic, DescribeLog, Fetch, History, Produce, RetentionPass, TopicConfig
from ktc.strategies import timestamps
from ktc.suites._support import LAT, NOW, batch

pytestmark = pytest.mark.retention

DAY = 86_400_000
EVENT_LIMIT = 3 * DAY


def event_history(profile, stamps, limit, timestamp_type=None, gap=DAY) -> History:
    kwargs = {"timestamp_type": timestamp_type} if timestamp_type else {}
    config = TopicConfig(segment_ms=1, retention_ms=30 * DAY, retention_max_eventtime_ms=limit, **kwargs)
    ops = [CreateTopic("t", config)]
    for ts in stamps:
        ops += [Produce("t", batch(ts)), Advance(gap)]
    return History(profile, tuple(ops) + (RetentionPass("t"), Fetch("t"), DescribeLog("t")), start_ms=NOW)


NEAR_NOW = timestamps(now=NOW, bounds=[EVENT_LIMIT], min_value=NOW - 60 * DAY, max_value=NOW + 60 * DAY)
NO_EVENT_TIME = st.sampled_from([-1, -2, 0])  # the no-timestamp sentinel (no event time) and its neighbours
STAMPS = st.lists(st.one_of(*[NEAR_NOW] * 5, NO_EVENT_TIME), min_size=1, max_size=6)


@pytest.mark.clause(
    "KIP-870.event-time-retention", "KIP-870.partition-max-event-time", "KIP-870.combined-with-existing"
)
@example(stamps=[NOW - 10 * DAY, NOW - 5 * DAY, NOW], limit=EVENT_LIMIT)
@example(stamps=[NOW, NOW - EVENT_LIMIT - 1, NOW + EVENT_LIMIT], limit=EVENT_LIMIT)
@example(stamps=[-1, NOW, NOW], limit=EVENT_LIMIT)  # a segment of no-timestamp records has no event time
@given(stamps=STAMPS, limit=st.sampled_from([0, DAY, EVENT_LIMIT]))
def test_segments_older_than_max_event_time_minus_limit_are_deleted(impl, profile, stamps, limit):
    for timestamp_type in (None, LAT):
        assert_conforms(impl, event_history(profile, stamps, limit, timestamp_type))


@pytest.mark.clause("KIP-870.unset-means-unchanged")
@given(stamps=STAMPS)
def test_unset_event_time_limit_leaves_retention_unchanged(impl, profile, stamps):
    assert_conforms(impl, event_history(profile, stamps, None))


@pytest.mark.clause("KIP-870.config-name", "KIP-937.difference-deprecated")
@pytest.mark.parametrize("limit", [0, EVENT_LIMIT])
def test_event_time_config_exists_only_where_the_profile_has_it(impl, profile, limit):
    assert_conforms(impl, event_history(profile, [NOW], limit))
