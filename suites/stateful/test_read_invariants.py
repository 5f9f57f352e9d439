"""The KIPs' promises as invariants over what a consumer reads.

Each history reads its partitions mid-way (a Fetch with EARLIEST, LATEST, MAX_TIMESTAMP and a lookup
by timestamp, all of one log state) and often after retention moved the log start
(strategies/_histories.py).  The invariants are judged on those reads alone, against the leader
clocks of the appends: not against the model's stored log, nor against any single Produce
response, so a departure the model copies from Kafka still shows.  Batches may carry the
LogAppendTime attribute or a header max that disagrees with their records.  Leader changes where
the implementation can run them (the reference, Spark, a cluster); one broker otherwise.  Each
invariant's known edges are pinned in its KIP's folder (suites/kip32, kip33, kip937), which runs first.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import ONE_HOUR_MS, Advance, CreateTopic, Fetch, History, Produce, TopicConfig
from ktc.strategies import batches, histories
from ktc.suites._support import CT, LAT, NOW

SKEW_MS = 120_000
MINUTE_MS, DAY_MS = 60_000, 24 * ONE_HOUR_MS


def brokers(impl) -> st.SearchStrategy[int]:
    """Up to three brokers where leader changes can be run, else one."""
    leaders = not impl.capabilities().reason_unsupported("KIP-32.followers-keep-log-append-time")
    return st.integers(1, 3) if leaders and impl.capabilities().cannot_run is None else st.just(1)


def odd_batches(timestamps) -> st.SearchStrategy:
    return batches(timestamps=timestamps, log_append_time_attribute=True, bad_header=True)


@pytest.mark.clause("KIP-32.read-timestamp-stable", "KIP-32.read-log-append-time", "KIP-937.read-within-bounds")
@given(data=st.data(), kind=st.sampled_from([CT, LAT]), ms=st.sampled_from([1, MINUTE_MS, DAY_MS]))
def test_a_record_reads_the_same_before_and_after_later_appends(impl, profile, data, kind, ms):
    """Read, let the clock move, append again, read again: every record read twice reads the same."""
    stamps = st.integers(NOW - DAY_MS, NOW + ONE_HOUR_MS)  # within the bounds: this test is about reading twice
    drawn = batches(timestamps=stamps, min_size=2, log_append_time_attribute=True, bad_header=True)
    first, later = (data.draw(drawn, label=name) for name in ("first", "later"))
    config = (
        TopicConfig(timestamp_type=kind, before_max_ms=DAY_MS, after_max_ms=ONE_HOUR_MS)
        if profile != "kafka-3.5"
        else TopicConfig(timestamp_type=kind, difference_max_ms=DAY_MS)
    )
    ops = (CreateTopic("t", config), Produce("t", first), Fetch("t"), Advance(ms), Produce("t", later), Fetch("t"))
    assert_conforms(impl, History(profile, ops, start_ms=NOW))


@pytest.mark.clause(
    "KIP-937.read-within-bounds",
    "KIP-32.read-log-append-time",
    "KIP-32.read-timestamp-stable",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
    "KIP-33.read-log-start",
)
@given(data=st.data())
def test_what_a_consumer_reads_keeps_the_kips_promises(impl, profile, data):
    count = data.draw(brokers(impl), label="brokers")
    assert_conforms(
        impl,
        data.draw(
            histories(
                profile=profile, brokers=count, max_ops=16, batches=odd_batches, skew_ms=SKEW_MS if count > 1 else 0
            )
        ),
    )
