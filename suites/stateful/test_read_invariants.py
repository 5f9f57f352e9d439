"""The KIPs' promises as invariants over what a consumer reads (issue 25).

Each history reads its partitions mid-way (a Fetch with EARLIEST, LATEST, MAX_TIMESTAMP and a lookup
by timestamp, all of one log state) and often after retention moved the log start
(strategies/_histories.py).  The invariants are judged on those reads alone, against the leader
clocks of the appends: not against the model's stored log, nor against any single Produce
response, so a departure the model copies from Kafka still shows.  Batches may carry the
LogAppendTime attribute or a header max that disagrees with their records.  Leader changes where
the implementation can run them (the reference, Spark, a cluster); one broker otherwise.
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from strategies import batches, histories

SKEW_MS = 120_000


def brokers(impl) -> st.SearchStrategy[int]:
    """Up to three brokers where leader changes can be run, else one."""
    leaders = not impl.capabilities().reason_unsupported("KIP-32.followers-keep-log-append-time")
    return st.integers(1, 3) if leaders and impl.capabilities().cannot_run is None else st.just(1)


def odd_batches(timestamps) -> st.SearchStrategy:
    return batches(timestamps=timestamps, log_append_time_attribute=True, bad_header=True)


@pytest.mark.clause("KIP-937.read-within-bounds", "KIP-32.read-log-append-time", "KIP-32.read-timestamp-stable",
                    "KIP-33.read-max-timestamp-holder", "KIP-33.read-lookup-first-match", "KIP-33.read-log-start")
@given(data=st.data())
def test_what_a_consumer_reads_keeps_the_kips_promises(impl, profile, data):
    count = data.draw(brokers(impl), label="brokers")
    assert_conforms(impl, data.draw(histories(profile=profile, brokers=count, max_ops=16, batches=odd_batches,
                                              skew_ms=SKEW_MS if count > 1 else 0)))
