"""KIP-32: what the broker stores and answers: CreateTime kept, LogAppendTime assigned, batch max,
offsets, and the ProduceResponse's log_append_time."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import (
    INT64_MIN,
    Advance,
    CreateTopic,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    TopicConfig,
)
from ktc.strategies import append_histories, timestamps, topic_configs
from ktc.suites._support import CT, LAT, NOW, appends, batch, one_append


@pytest.mark.clause(
    "KIP-32.create-time-kept",
    "KIP-32.offsets-contiguous",
    "KIP-32.batch-max-timestamp",
    "KIP-32.produce-response-log-append-time",
)
@given(data=st.data())
def test_create_time_topic_stores_the_producer_timestamps(impl, profile, data):
    config = topic_configs(profile=profile, timestamp_types=[CT])
    assert_conforms(impl, data.draw(append_histories(profile=profile, config=config)))


@pytest.mark.clause(
    "KIP-32.log-append-time-assigned",
    "KIP-937.log-append-time-overwrites",
    "KIP-32.log-append-time-millisecond",
    "KIP-32.log-append-time-batch-shared",
    "KIP-32.produce-response-log-append-time",
    "KIP-32.batch-max-timestamp",
)
@example(stamps=[INT64_MIN, 0, NOW + 10**9], gap=0)
@given(stamps=st.lists(timestamps(now=NOW), min_size=1, max_size=5), gap=st.integers(0, 10**6))
def test_log_append_time_overwrites_every_record_in_batch(impl, profile, stamps, gap):
    history = appends(
        profile, TopicConfig(timestamp_type=LAT), [batch(*stamps), batch(*stamps)], between=[Advance(gap)]
    )
    assert_conforms(impl, history)


@pytest.mark.clause(
    "KIP-32.create-time-kept",
    "KIP-32.batch-max-timestamp",
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.list-offsets-first-offset-at-or-after",
)
@example(stamps=[NOW - 2, NOW - 1], compression="gzip")
@example(stamps=[NOW - 2, NOW - 1], compression="producer")
@example(stamps=[NOW + 5, NOW], compression="producer")  # a record past the header max it was read as
@given(stamps=st.lists(timestamps(now=NOW), min_size=1, max_size=5), compression=st.sampled_from(["producer", "gzip"]))
def test_a_log_append_time_typed_batch_on_a_create_time_topic_keeps_what_the_broker_read(
    impl, profile, stamps, compression
):
    """The broker reads every record of such a batch as its header MaxTimestamp (here NOW, inside every
    bound); a batch it rebuilds (the topic's codec differs) is written from those reads."""
    produce = Produce("t", batch(*stamps, timestamp_type=LAT, max_timestamp=NOW))
    probes = [ListOffsets("t", target) for target in (-3, NOW, *(ts for ts in stamps if ts >= 0))]
    ops = (CreateTopic("t", TopicConfig(compression_type=compression)), produce, *probes, Fetch("t"))
    assert_conforms(impl, History(profile, ops, start_ms=NOW))


@pytest.mark.clause("KIP-32.batch-max-timestamp")
@example(stamps=[-5, -7], header=10**12)
@given(stamps=st.lists(timestamps(now=NOW), min_size=1, max_size=5), header=timestamps(now=NOW))
def test_broker_recomputes_batch_max_instead_of_trusting_the_header(impl, profile, stamps, header):
    assert_conforms(impl, one_append(profile, TopicConfig(), *stamps, max_timestamp=header))


@pytest.mark.clause("KIP-32.offsets-contiguous")
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=5))
def test_accepted_batches_get_contiguous_offsets_from_the_log_end(impl, profile, sizes):
    assert_conforms(impl, appends(profile, TopicConfig(), [batch(*[NOW] * n) for n in sizes]))


def leader_change_history(profile: str, skew: int, gap: int) -> History:
    """KIP-32's leader-migration corner case: broker 1's clock runs ``skew`` ms behind broker 0."""
    ops = (
        CreateTopic("t", TopicConfig(timestamp_type=LAT)),
        Produce("t", batch(0)),
        Advance(gap),
        ElectLeader("t", 1),
        Produce("t", batch(0)),
        Produce("t", batch(0)),
        Fetch("t"),
    )
    return History(profile, ops, start_ms=NOW, clock_offsets=(0, -skew))


@pytest.mark.clause(
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
    "KIP-32.log-append-time-millisecond",
)
@example(skew=60_000, gap=1)
@example(skew=1, gap=0)
@given(skew=st.integers(0, 10**7), gap=st.integers(0, 10**7))
def test_log_append_time_across_a_leader_change_to_a_slower_clock(impl, profile, skew, gap):
    assert_conforms(impl, leader_change_history(profile, skew, gap))


def mirror_history(profile: str, target_type, latency1: int, latency2: int) -> History:
    """The KIP-32 MirrorMaker walk-through: produce at T0, append at T1, mirror, append at T2."""
    t0 = NOW
    ops = (
        CreateTopic("source", TopicConfig(timestamp_type=LAT)),
        CreateTopic("copy", TopicConfig()),
        CreateTopic("target", TopicConfig(timestamp_type=target_type)),
        Advance(latency1),
        Produce("source", batch(t0)),
        Produce("copy", batch(t0)),
        Advance(latency2),
        Produce("target", batch(t0)),
        Fetch("source"),
        Fetch("copy"),
        Fetch("target"),
    )
    return History(profile, ops, start_ms=t0)


@pytest.mark.clause(
    "KIP-32.mirror-maker-keeps-create-time", "KIP-32.mirror-maker-new-log-append-time", "KIP-870.both-timestamps-stored"
)
@example(latency1=5, latency2=7)
@given(latency1=st.integers(1, 10**6), latency2=st.integers(1, 10**6))
def test_mirror_maker_keeps_create_time_and_gets_a_new_log_append_time(impl, profile, latency1, latency2):
    for target_type in (CT, LAT):
        assert_conforms(impl, mirror_history(profile, target_type, latency1, latency2))


@pytest.mark.clause("KIP-32.read-timestamp-stable", "KIP-32.read-log-append-time")
@example(kind=CT, lag=1, ms=1)  # a record older than its batch's max: a re-read must not read it as the max
@example(kind=LAT, lag=1, ms=1)  # a re-read one ms later must still read the append time, not the read's
@given(kind=st.sampled_from([CT, LAT]), lag=st.integers(0, 60_000), ms=st.integers(0, 60_000))
def test_a_record_read_twice_reads_the_same(impl, profile, kind, lag, ms):
    """A batch whose first record is ``lag`` ms older than its second, read, the clock moved ``ms``, read again."""
    ops = (
        CreateTopic("t", TopicConfig(timestamp_type=kind)),
        Produce("t", batch(NOW - lag, NOW)),
        Fetch("t"),
        Advance(ms),
        Fetch("t"),
    )
    assert_conforms(impl, History(profile, ops, start_ms=NOW))
