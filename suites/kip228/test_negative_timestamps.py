"""KIP-228: negative timestamps, the NO_TIMESTAMP sentinel, and the broker's rebuild path."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import CODECS, INT64_MIN, TOPIC_COMPRESSION_TYPES, History, TopicConfig
from ktc.strategies import timestamps
from ktc.suites._support import LAT, NOW, one_append

NEGATIVES = st.one_of(st.sampled_from([-2, -5, INT64_MIN, INT64_MIN + 1]), st.integers(INT64_MIN, -2))
AROUND_ZERO = st.sampled_from([-1, 0, 1])  # where "negative" starts, and the -1 exemption


@pytest.mark.clause("KIP-228.minus-one-is-no-timestamp")
@example(others=[])
@example(others=[NOW + 10**12])
@given(others=st.lists(timestamps(now=NOW), max_size=4))
def test_minus_one_is_exempt_and_ignored_by_the_batch_max(impl, profile, others):
    config = (
        TopicConfig(after_max_ms=0, before_max_ms=0) if profile != "kafka-3.5" else TopicConfig(difference_max_ms=0)
    )
    assert_conforms(impl, one_append(profile, config, -1, *others))


@pytest.mark.clause(
    "KIP-228.negative-timestamps-accepted", "KIP-228.broker-serves-negative", "KIP-228.rebuild-fails-on-negative"
)
@example(stamps=[-5], topic_codec="gzip", batch_codec="none")
@example(stamps=[-5, -1, 0], topic_codec="producer", batch_codec="none")
@example(stamps=[0], topic_codec="gzip", batch_codec="none")  # the rule's edge: 0 is not negative
@given(
    stamps=st.lists(st.one_of(NEGATIVES, AROUND_ZERO, timestamps(now=NOW)), min_size=1, max_size=4),
    topic_codec=st.sampled_from(TOPIC_COMPRESSION_TYPES),
    batch_codec=st.sampled_from(CODECS),
)
def test_negative_timestamps_are_kept_in_place_and_break_a_rebuild(impl, profile, stamps, topic_codec, batch_codec):
    for timestamp_type in (None, LAT):
        config = TopicConfig(
            compression_type=topic_codec, **({"timestamp_type": timestamp_type} if timestamp_type else {})
        )
        assert_conforms(impl, one_append(profile, config, *stamps, codec=batch_codec))


@pytest.mark.clause("KIP-228.sentinel-long-min", "KIP-228.timestamp-extended-bit")
@example(stamps=[-1, INT64_MIN, 5], extended=False)
@example(stamps=[-1, INT64_MIN, 5], extended=True)
@given(
    stamps=st.lists(st.one_of(st.sampled_from([-1, INT64_MIN]), timestamps(now=NOW)), min_size=1, max_size=4),
    extended=st.booleans(),
)
def test_long_min_sentinel_draft_stores_missing_timestamps_as_long_min(impl, profile, stamps, extended):
    history = one_append(profile, TopicConfig(), *stamps, timestamp_extended=extended)
    assert_conforms(impl, History(profile, history.ops, start_ms=NOW, no_timestamp=INT64_MIN))
