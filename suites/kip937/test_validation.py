"""KIP-937: per-record timestamp validation against before/after.max.ms, judged per implementation."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import INT64_MAX, INT64_MIN, ONE_HOUR_MS, Fetch, History, TopicConfig
from ktc.strategies import append_histories, batches, timestamps, topic_configs
from ktc.suites._support import CT, LAT, NOW, bounded, one_append

BEFORE = 86_400_000  # one day, as in Kafka's LogValidatorTest
AFTER = ONE_HOUR_MS
BOUNDED = TopicConfig(before_max_ms=BEFORE, after_max_ms=AFTER)
DELTAS = st.integers(-3 * BEFORE, 3 * BEFORE)
MINUTE = 60_000


@pytest.mark.clause("KIP-937.after-bound", "KIP-937.bounds-inclusive")
@example(delta=AFTER + 1)
@example(delta=AFTER)
@example(delta=AFTER - 1)
@given(delta=DELTAS.filter(lambda d: d > 0))
def test_future_timestamp_beyond_after_bound_is_rejected(impl, profile, delta):
    assert_conforms(impl, one_append(profile, BOUNDED, NOW + delta))


@pytest.mark.clause("KIP-937.before-bound", "KIP-937.bounds-inclusive")
@example(delta=BEFORE + 1)
@example(delta=BEFORE)
@example(delta=BEFORE - 1)
@given(delta=DELTAS.filter(lambda d: d >= 0))
def test_past_timestamp_beyond_before_bound_is_rejected(impl, profile, delta):
    assert_conforms(impl, one_append(profile, BOUNDED, NOW - delta))


@pytest.mark.clause("KIP-937.read-within-bounds")
@example(delta=AFTER + 1)  # one ms past the after bound: refused, so never read (a broker that stores it serves it)
@example(delta=-(BEFORE + 1))  # one ms past the before bound
@given(delta=DELTAS)
def test_a_record_read_back_twice_was_within_the_bounds_at_its_append(impl, profile, delta):
    """One record ``delta`` from the leader's clock on a CreateTime topic, then read twice (a re-read too must
    serve nothing that was refused)."""
    appended = one_append(profile, bounded(profile, BEFORE, AFTER), NOW + delta)
    assert_conforms(impl, History(profile, (*appended.ops, Fetch("t")), start_ms=NOW))


@pytest.mark.clause(
    "KIP-937.before-bound",
    "KIP-937.after-bound",
    "KIP-937.bounds-inclusive",
    "KIP-937.error-code-32",
    "KIP-937.legacy-abs-difference",
    "KIP-937.long-max-fallback",
)
@given(data=st.data())
def test_generated_batches_are_validated_per_record_as_the_reference_does(impl, profile, data):
    config = topic_configs(profile=profile, timestamp_types=[CT])
    assert_conforms(impl, data.draw(append_histories(profile=profile, config=config)))


@pytest.mark.clause("KIP-937.whole-batch-rejection", "KIP-937.validation-before-append", "KIP-937.error-code-32")
@example(good=0, bad_at=1, over=1)
@example(good=2, bad_at=1, over=MINUTE)  # decidable on a real broker too, whose now is only known to an interval
@given(good=st.integers(0, 5), bad_at=st.integers(0, 5), over=st.sampled_from([1, MINUTE]))
def test_batch_with_one_future_timestamp_is_rejected_whole(impl, profile, good, bad_at, over):
    stamps = [NOW] * good
    stamps.insert(min(bad_at, good), NOW + AFTER + over)
    config = bounded(profile, BEFORE, AFTER)
    rejected_then_accepted = one_append(profile, config, *stamps).ops[:2] + one_append(profile, config, NOW).ops[1:]
    assert_conforms(impl, History(profile, rejected_then_accepted, start_ms=NOW))


@pytest.mark.clause("KIP-937.record-error-message", "KIP-937.batch-error-message")
@example(deltas=[AFTER + 1, -(BEFORE + 1), 0])
@given(deltas=st.lists(st.integers(-2 * BEFORE, 2 * BEFORE), min_size=1, max_size=6))
def test_rejection_texts_name_each_record_and_the_bounds(impl, profile, deltas):
    assert_conforms(impl, one_append(profile, bounded(profile, BEFORE, AFTER), *(NOW + d for d in deltas)))


@pytest.mark.clause("KIP-937.record-error-message")
@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_a_log_append_time_typed_batch_is_refused_naming_its_record_as_the_broker_read_it(impl, profile, codec):
    """Kafka names the refused record by its class: uncompressed, a DefaultRecord (a null key: 0 bytes);
    compressed and kept as it came, a PartialDefaultRecord (a null key: -1 bytes; `ktc hunt` against 4.4.0)."""
    assert_conforms(impl, one_append(profile, TopicConfig(timestamp_type=LAT), NOW, codec=codec, timestamp_type=LAT))


@pytest.mark.clause("KIP-937.per-record-validation", "KIP-937.record-error-message")
@given(data=st.data())
def test_each_record_is_validated_not_the_producer_header_max(impl, profile, data):
    b = data.draw(
        batches(timestamps=timestamps(now=NOW, bounds=[BEFORE, AFTER]), bad_header=True, log_append_time_attribute=True)
    )
    config = data.draw(st.sampled_from([bounded(profile, BEFORE, AFTER), TopicConfig(timestamp_type=LAT)]))
    assert_conforms(
        impl,
        one_append(
            profile,
            config,
            *(r.timestamp for r in b.records),
            max_timestamp=b.max_timestamp,
            timestamp_type=b.timestamp_type,
        ),
    )


@pytest.mark.clause("KIP-937.log-append-time-skips-validation")
@example(ts=INT64_MIN)
@example(ts=NOW + AFTER + 1)
@given(ts=timestamps(now=NOW, bounds=[BEFORE, AFTER]))
def test_log_append_time_topic_accepts_any_create_time(impl, profile, ts):
    config = TopicConfig(timestamp_type=LAT, before_max_ms=None if profile == "kafka-3.5" else BEFORE)
    assert_conforms(impl, one_append(profile, config, ts))


@pytest.mark.clause(
    "KIP-937.default-before-unbounded", "KIP-937.default-after-unbounded", "KIP-937.default-after-one-hour"
)
@example(delta=ONE_HOUR_MS + 1)
@example(delta=-(10**15))
@given(delta=st.integers(-(10**16), 10**16))
def test_unset_limits_take_the_profile_default(impl, profile, delta):
    assert_conforms(impl, one_append(profile, TopicConfig(), NOW + delta))


@pytest.mark.clause("KIP-937.default-allows-minimum")
@given(after=st.sampled_from([None, INT64_MAX]))
def test_long_min_timestamp_under_default_configs(impl, profile, after):
    config = TopicConfig() if after is None or profile == "kafka-3.5" else TopicConfig(after_max_ms=after)
    assert_conforms(impl, one_append(profile, config, INT64_MIN))


@pytest.mark.clause("KIP-937.long-max-fallback")
@example(difference=AFTER, delta=AFTER + 1)
@given(difference=st.sampled_from([0, 1, AFTER, BEFORE]), delta=st.integers(-2 * BEFORE, 2 * BEFORE))
def test_long_max_before_and_after_fall_back_to_difference(impl, profile, difference, delta):
    config = TopicConfig(before_max_ms=INT64_MAX, after_max_ms=INT64_MAX, difference_max_ms=difference)
    assert_conforms(impl, one_append(profile, config, NOW + delta))


@pytest.mark.clause("KIP-937.legacy-abs-difference")
@example(difference=AFTER, delta=-(AFTER + 1))
@example(difference=AFTER, delta=AFTER)
@given(difference=st.sampled_from([0, 1, AFTER, BEFORE]), delta=st.integers(-2 * BEFORE, 2 * BEFORE))
def test_difference_bounds_both_directions_with_abs(impl, profile, difference, delta):
    assert_conforms(impl, one_append(profile, TopicConfig(difference_max_ms=difference), NOW + delta))


@pytest.mark.clause("KIP-937.difference-deprecated", "KIP-937.difference-removed")
@given(difference=st.sampled_from([0, AFTER, INT64_MAX]))
def test_the_difference_config_is_honoured_while_deprecated_and_refused_once_removed(impl, profile, difference):
    assert_conforms(impl, one_append(profile, TopicConfig(difference_max_ms=difference), NOW))


@pytest.mark.clause("KIP-937.limits-non-negative")
@example(limit=-1, which="before_max_ms")
@example(limit=-1, which="difference_max_ms")
@example(limit=0, which="after_max_ms")
@given(
    limit=st.one_of(st.sampled_from([-1, 0, 1, INT64_MIN, INT64_MAX]), st.integers(INT64_MIN, INT64_MAX)),
    which=st.sampled_from(["before_max_ms", "after_max_ms", "difference_max_ms"]),
)
def test_a_negative_timestamp_limit_is_refused_when_the_topic_is_created(impl, profile, limit, which):
    assert_conforms(impl, one_append(profile, TopicConfig(**{which: limit}), NOW))


@pytest.mark.clause("KIP-937.future-timestamp-warning")
@example(delta=ONE_HOUR_MS + 1)
@example(delta=ONE_HOUR_MS)
@given(delta=st.integers(-ONE_HOUR_MS, 3 * ONE_HOUR_MS))
def test_timestamp_more_than_one_hour_ahead_is_warned(impl, profile, delta):
    assert_conforms(impl, one_append(profile, TopicConfig(), NOW + delta))
