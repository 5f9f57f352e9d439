"""Where shipped Kafka departs from the KIP texts, one fixed history per departure.

Every test here is pinned (no generation), so it judges the ``pinned_only`` profiles too: a
real broker is judged under ``kip`` on these histories alone.  The reference and Spark pass
them under every profile; a broker passes them under the profile its version ships and fails
the ``kip`` rows its version departs from, which ``expectations/<broker>.toml`` lists with the
reason and source (strict: a departure that stops failing fails the run).  Inputs are derived
from thresholds: the bound, the bound + 1, Long.MIN_VALUE.
"""

from dataclasses import replace

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference.types import INT64_MAX, INT64_MIN, ONE_HOUR_MS, ListOffsets, TopicConfig
from ktc.suites._support import LAT, NOW, one_append

pytestmark = pytest.mark.pinned
DAY_MS = 24 * ONE_HOUR_MS
MINUTE_MS = 60_000


@pytest.mark.clause("KIP-937.int64-wraparound", "KIP-937.default-allows-minimum")
def test_long_min_timestamp_under_default_limits_is_judged_by_wrapped_arithmetic(impl, profile):
    """Kafka: now - Long.MIN wraps, accepted (3.x), or rejected as 'future' by the one-hour after
    default (kafka-4).  (Under kip's exact arithmetic the KIP contradicts itself here: see the
    ambiguity note of KIP-937.default-before-unbounded; no kip clause is claimed.)"""
    assert_conforms(impl, one_append(profile, TopicConfig(), INT64_MIN))


@pytest.mark.clause("KIP-937.default-after-unbounded", "KIP-937.default-after-one-hour")
def test_timestamp_a_minute_beyond_one_hour_ahead_under_default_after(impl, profile):
    """kip and kafka-3.6: after.max.ms defaults to Long.MAX, accepted.  kafka-4: one hour, rejected.
    (A minute past the bound, not one ms: a real broker's clock is only known to a request interval.)"""
    assert_conforms(impl, one_append(profile, TopicConfig(), NOW + ONE_HOUR_MS + MINUTE_MS))


@pytest.mark.profiles("kip", "kafka-3.6")  # before.max.ms and difference.max.ms side by side
@pytest.mark.clause("KIP-937.before-bound", "KIP-937.long-max-fallback")
def test_before_long_max_with_a_one_day_difference_judges_a_two_day_old_record(impl, profile):
    """kip: before = Long.MAX accepts it.  kafka-3.6: Long.MAX falls back to difference.max.ms (one
    day), rejected."""
    config = TopicConfig(before_max_ms=INT64_MAX, after_max_ms=INT64_MAX, difference_max_ms=DAY_MS)
    assert_conforms(impl, one_append(profile, config, NOW - 2 * DAY_MS))


@pytest.mark.clause(
    "KIP-228.negative-timestamps-accepted", "KIP-228.broker-serves-negative", "KIP-228.rebuild-fails-on-negative"
)
def test_negative_timestamp_in_a_batch_the_broker_must_recompress(impl, profile):
    """kip: accepted and served.  Kafka: the rebuild throws, UNKNOWN_SERVER_ERROR, nothing stored."""
    assert_conforms(impl, one_append(profile, TopicConfig(compression_type="gzip"), -5))


@pytest.mark.clause("KIP-937.difference-deprecated")
def test_a_topic_created_with_the_deprecated_difference_config(impl, profile):
    """kip and 3.x: deprecated but honoured (kafka-4 removed it; the clause does not hold there)."""
    assert_conforms(impl, one_append(profile, TopicConfig(difference_max_ms=ONE_HOUR_MS), NOW - ONE_HOUR_MS - 1))


@pytest.mark.clause("KIP-937.per-record-validation", "KIP-937.read-within-bounds")
def test_a_log_append_time_typed_batch_whose_own_timestamp_is_out_of_range(impl, profile):
    """kip: each record's own timestamp is validated (KIP-937's pseudo-code, per record): two days old,
    refused.  Kafka 3.6+: such a batch reads as its header max (now, in range), accepted, and its
    records' own timestamps are what a consumer reads: a record two days older than before.max.ms
    allows.  3.5: refused for its attribute."""
    config = (
        TopicConfig(before_max_ms=DAY_MS, after_max_ms=ONE_HOUR_MS)
        if profile != "kafka-3.5"
        else TopicConfig(difference_max_ms=DAY_MS)
    )
    assert_conforms(impl, one_append(profile, config, NOW - 2 * DAY_MS, NOW, timestamp_type=LAT))


@pytest.mark.clause("KIP-33.read-max-timestamp-holder")
def test_max_timestamp_of_a_log_append_time_typed_batch_whose_header_is_no_record(impl, profile):
    """A client-set LogAppendTime batch on a CreateTime topic, its header max a minute after its records.
    kip: stored as sent, record by record: MAX_TIMESTAMP answers the newer record.  Kafka 3.8+ (model):
    stored with the header as MaxTimestamp, MAX_TIMESTAMP searches the batch for it and finds none."""
    config = (
        TopicConfig(before_max_ms=DAY_MS, after_max_ms=ONE_HOUR_MS)
        if profile != "kafka-3.5"
        else TopicConfig(difference_max_ms=DAY_MS)
    )
    sent = one_append(profile, config, NOW - 2 * MINUTE_MS, NOW - MINUTE_MS, timestamp_type=LAT, max_timestamp=NOW)
    assert_conforms(impl, replace(sent, ops=(*sent.ops, ListOffsets("t", -3))))
