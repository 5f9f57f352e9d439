"""KIP-937's two pseudo-code blocks, transcribed line by line, against the model.

'New Validation Logic' is the kip profile's rule (exact integers); 'Existing Validation Logic'
is kafka-3.5's, which Kafka evaluates in Java long arithmetic, so it is compared only where
``message.timestamp - broker.timestamp`` does not overflow (the overflow cases are pinned in
test_overflow_table.py).
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import INT64_MAX, INT64_MIN, History, TopicConfig
from ktc.strategies import timestamps
from ktc.suites._support import NOW, one_append

LIMITS = st.one_of(st.sampled_from([0, 1, 3_600_000, INT64_MAX]), st.integers(0, INT64_MAX))


def new_validation_logic(message_timestamp, broker_timestamp, before_max_ms, after_max_ms) -> bool:
    """The KIP's 'New Validation Logic' block; True means 'Validation passed'."""
    if message_timestamp <= broker_timestamp:
        time_difference = broker_timestamp - message_timestamp
        return time_difference <= before_max_ms
    else:
        time_difference = message_timestamp - broker_timestamp
        return time_difference <= after_max_ms


def existing_validation_logic(message_timestamp, broker_timestamp, difference_max_ms) -> bool:
    """The KIP's 'Existing Validation Logic' block."""
    time_difference = abs(message_timestamp - broker_timestamp)
    return not time_difference > difference_max_ms


def accepted(history: History) -> bool:
    return run(history)[1].error_code == 0


@pytest.mark.profiles("kip")
@pytest.mark.clause("KIP-937.before-bound", "KIP-937.after-bound", "KIP-937.bounds-inclusive")
@example(ts=INT64_MIN, before=INT64_MAX, after=INT64_MAX)
@example(ts=NOW + 3_600_000, before=0, after=3_600_000)
@given(ts=timestamps(now=NOW, bounds=[3_600_000], allow_no_timestamp=False), before=LIMITS, after=LIMITS)
def test_new_validation_logic_block_is_the_kip_profile(impl, profile, ts, before, after):
    history = one_append(profile, TopicConfig(before_max_ms=before, after_max_ms=after), ts)
    assert accepted(history) == new_validation_logic(ts, NOW, before, after)
    assert_conforms(impl, history)


@pytest.mark.profiles("kafka-3.5")
@pytest.mark.clause("KIP-937.legacy-abs-difference")
@example(ts=NOW - 3_600_001, difference=3_600_000)
@given(ts=timestamps(now=NOW, bounds=[3_600_000], allow_no_timestamp=False), difference=LIMITS)
def test_existing_validation_logic_block_is_kafka_3_5_without_overflow(impl, profile, ts, difference):
    history = one_append(profile, TopicConfig(difference_max_ms=difference), ts)
    if INT64_MIN < ts - NOW <= INT64_MAX:
        assert accepted(history) == existing_validation_logic(ts, NOW, difference)
    assert_conforms(impl, history)
