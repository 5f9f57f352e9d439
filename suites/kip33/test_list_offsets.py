"""KIP-33: the time index and ListOffsets by timestamp, over logs with several segments, batches in every
codec, every special target (-1 to -5), other negative targets, and every ListOffsets version."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.harness import assert_conforms
from ktc.reference.types import (
    CODECS,
    INT64_MIN,
    LIST_OFFSETS_MAX_VERSION,
    TOPIC_COMPRESSION_TYPES,
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
from ktc.specs.profiles import get as get_profile
from ktc.strategies import timestamps
from ktc.suites._support import LAT, NOW, batch

MINUTE_MS = 60_000

SEGMENT_MS = 60_000
MISSING_ONLY = st.lists(st.lists(st.just(-1), min_size=1, max_size=3), min_size=1, max_size=3)  # no timestamps at all
STAMPS = st.one_of(
    st.lists(st.lists(timestamps(now=NOW, bounds=[SEGMENT_MS]), min_size=1, max_size=3), max_size=6), MISSING_ONLY
)


RETENTION_MS = 600_000


def searched_history(
    profile, batches, targets, timestamp_type=None, retention=False, gap=0, codecs=(), compression="producer"
) -> History:
    """Batches of these timestamps (batch i in ``codecs[i]``, uncompressed past the end), then a
    ListOffsets per target (an int, or a ready ListOffsets), a Fetch and a DescribeLog."""
    kwargs = {"timestamp_type": timestamp_type} if timestamp_type else {}
    config = TopicConfig(segment_ms=SEGMENT_MS, retention_ms=RETENTION_MS, compression_type=compression, **kwargs)
    ops = [CreateTopic("t", config)]
    for n, stamps in enumerate(batches):
        ops += [Produce("t", batch(*stamps, codec=codecs[n] if n < len(codecs) else "none")), Advance(gap)]
    ops += [RetentionPass("t")] if retention else []
    ops += [t if isinstance(t, ListOffsets) else ListOffsets("t", t) for t in targets] + [Fetch("t"), DescribeLog("t")]
    return History(profile, tuple(ops), start_ms=NOW)


TARGETS = st.lists(
    st.one_of(st.sampled_from([-1, -2, -3]), timestamps(now=NOW, bounds=[SEGMENT_MS], min_value=0)),
    min_size=1,
    max_size=6,
)
CODEC_LISTS = st.lists(st.sampled_from(CODECS), max_size=6)
NEGATIVE_TARGETS = (-1, -2, -3, -4, -5, -6, -7, -100, INT64_MIN)  # the special ones, then others


@st.composite
def probes(draw, profile: str):
    """ListOffsets of any target (a timestamp, a special one, another negative), at no version (the newest
    both sides speak) or any the profile's broker speaks, read uncommitted or committed.  Shrinks towards
    ListOffsets LATEST at the newest version, read uncommitted."""
    newest = min(get_profile(profile).list_offsets_max_version, LIST_OFFSETS_MAX_VERSION)
    target = draw(st.one_of(st.sampled_from(NEGATIVE_TARGETS), timestamps(now=NOW, bounds=[SEGMENT_MS], min_value=0)))
    return ListOffsets("t", target, 0, draw(st.one_of(st.none(), st.integers(1, newest))), draw(st.booleans()))


@pytest.mark.clause(
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-not-found",
    "KIP-33.list-offsets-first-segment-only",
    "KIP-33.list-offsets-latest",
    "KIP-33.list-offsets-earliest",
    "KIP-33.list-offsets-max-timestamp",
)
@example(batches=[[NOW], [NOW + 2 * SEGMENT_MS], [NOW + SEGMENT_MS]], targets=[NOW + SEGMENT_MS, -3, -1, -2], codecs=[])
@example(batches=[[-1], [-1], [NOW - 5]], targets=[0, -3], codecs=[])
# the max is not the batch's last record
@example(batches=[[NOW], [NOW + SEGMENT_MS, NOW - 1]], targets=[-3], codecs=[])
@example(batches=[], targets=[-3, -1, -2, 0], codecs=[])
@example(batches=[[-1], [-1, -1]], targets=[-3, 0], codecs=[])  # a log without timestamps: its max is Kafka's -1 floor
@example(batches=[[-509], [-1]], targets=[-3], codecs=[])  # the first batch's header max is the -1 floor: nothing found
# a largest timestamp of 0 is a timestamp, not a reason for the mtime
@example(batches=[[0], [NOW]], targets=[1], codecs=[])
@example(batches=[[NOW, NOW + 5], [NOW + 2]], targets=[NOW + 1, -3], codecs=["gzip", "zstd"])
@given(batches=STAMPS, targets=TARGETS, codecs=CODEC_LISTS)
def test_list_offsets_returns_the_first_offset_at_or_after_the_target(impl, profile, batches, targets, codecs):
    for timestamp_type, gap in ((None, 0), (None, SEGMENT_MS + 1), (LAT, SEGMENT_MS + 1)):
        assert_conforms(impl, searched_history(profile, batches, targets, timestamp_type, gap=gap, codecs=codecs))


@pytest.mark.retention
@pytest.mark.clause("KIP-33.list-offsets-first-segment-only", "KIP-33.list-offsets-not-found", "KIP-33.read-log-start")
@example(batches=[[-1], [NOW]], targets=[0], codecs=[])
@example(batches=[[NOW - RETENTION_MS - 1], [NOW]], targets=[-2], codecs=[])  # EARLIEST after the first segment went
@example(batches=[[-1], [NOW - 5, NOW]], targets=[NOW - 5], codecs=["lz4", "snappy"])
@given(batches=STAMPS, targets=TARGETS, codecs=CODEC_LISTS)
def test_list_offsets_after_retention_and_mtime_qualified_segments(impl, profile, batches, targets, codecs):
    assert_conforms(
        impl, searched_history(profile, batches, targets, retention=True, gap=SEGMENT_MS + 1, codecs=codecs)
    )


@pytest.mark.clause(
    "KIP-33.time-index-running-max", "KIP-33.time-index-strictly-increasing", "KIP-33.time-index-skips-no-timestamp"
)
@example(batches=[[NOW + 5], [NOW], [NOW + 5], [NOW + 9], [-1]])
@given(batches=STAMPS)
def test_time_index_records_the_running_max_when_it_strictly_increases(impl, profile, batches):
    assert_conforms(impl, searched_history(profile, batches, []))


@pytest.mark.clause(
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.list-offsets-max-timestamp-compressed",
    "KIP-33.list-offsets-max-timestamp-log-append-time",
)
@example(batches=[[NOW, NOW + 10, NOW + 10, NOW]], codecs=["gzip"], compression="producer")  # 3.0-3.7: offset 3
@example(batches=[[NOW, NOW + 10, NOW + 10, NOW]], codecs=["none"], compression="producer")  # 3.7: offset 3
@example(batches=[[NOW, NOW + 10, NOW]], codecs=["none"], compression="gzip")  # rebuilt: 3.0-3.7 answer offset 2
@example(batches=[[NOW + 10, NOW], [NOW + 10]], codecs=["lz4", "none"], compression="producer")  # first batch wins
@example(batches=[[-1, -1]], codecs=["zstd"], compression="producer")  # max -1: nothing recorded before 3.8
@given(batches=STAMPS, codecs=CODEC_LISTS, compression=st.sampled_from(TOPIC_COMPRESSION_TYPES))
def test_max_timestamp_names_the_earliest_record_with_the_max_in_every_codec(
    impl, profile, batches, codecs, compression
):
    for timestamp_type, gap in ((None, 0), (None, SEGMENT_MS + 1), (LAT, 0)):
        assert_conforms(
            impl,
            searched_history(profile, batches, [-3], timestamp_type, gap=gap, codecs=codecs, compression=compression),
        )


@pytest.mark.clause(
    "KIP-33.list-offsets-earliest-local",
    "KIP-33.list-offsets-latest-tiered",
    "KIP-33.list-offsets-earliest-pending-upload",
    "KIP-33.list-offsets-unknown-negative-target",
    "KIP-33.list-offsets-latest",
    "KIP-33.list-offsets-earliest",
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-not-found",
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.list-offsets-max-timestamp-compressed",
    "KIP-33.list-offsets-max-timestamp-log-append-time",
)
@example(batches=[[NOW, -1, -5]], codecs=[], data=None)  # every negative target at the newest version
@example(batches=[[NOW]], codecs=["gzip"], data=None)
@given(batches=STAMPS, codecs=CODEC_LISTS, data=st.data())
def test_special_and_unknown_negative_targets_are_answered_as_the_version_says(impl, profile, batches, codecs, data):
    asked = (
        [ListOffsets("t", target) for target in NEGATIVE_TARGETS]
        + [  # each below its version too
            ListOffsets("t", target, 0, version) for target, version in ((-3, 6), (-4, 7), (-5, 8), (-6, 10))
        ]
        + [ListOffsets("t", -7, 3), ListOffsets("t", -1, 3)]
    )  # a missing partition: 3.9+ refuse the target first
    if data is not None:
        asked = data.draw(st.lists(probes(profile), min_size=1, max_size=8), label="probes")
    newest = min(get_profile(profile).list_offsets_max_version, LIST_OFFSETS_MAX_VERSION)
    asked = [a for a in asked if a.version is None or a.version <= newest]
    assert_conforms(impl, searched_history(profile, batches, asked, codecs=codecs))


@pytest.mark.clause("KIP-33.list-offsets-max-timestamp", "KIP-33.time-index-running-max")
@pytest.mark.parametrize("stamps", [(NOW - 2, NOW), (NOW, NOW - 2), (NOW - 2, NOW, NOW)])
def test_a_log_append_time_typed_batch_on_a_create_time_topic_is_searched_as_the_broker_read_it(impl, profile, stamps):
    """Every record of a LogAppendTime-typed batch reads as its header max, so up to 3.6 the first record
    holds the max (measured on 3.6.2: offset 0 where the stored timestamps put it at 1)."""
    sent = batch(*stamps, timestamp_type=LAT, max_timestamp=max(stamps))
    ops = (CreateTopic("t"), Produce("t", sent), ListOffsets("t", -3), Fetch("t"), DescribeLog("t"))
    assert_conforms(impl, History(profile, ops, start_ms=NOW))


@pytest.mark.clause("KIP-33.read-max-timestamp-holder")
@pytest.mark.parametrize("header", [NOW - 5, -1])  # the batch's smaller record; the NO_TIMESTAMP sentinel
def test_max_timestamp_names_the_record_read_with_the_max_when_the_batch_header_understates_it(impl, profile, header):
    """A client's batch header whose MaxTimestamp is below its records' max: Kafka recomputes it from the records
    (LogValidator), so MAX_TIMESTAMP names the record a consumer reads with the max (a broker that keeps the
    header as sent names another; found by a generated history on kfake, seed 2581855107)."""
    ops = (CreateTopic("t"), Produce("t", batch(NOW, NOW - 5, max_timestamp=header)), Fetch("t"), ListOffsets("t", -3))
    assert_conforms(impl, History(profile, ops, start_ms=NOW))


@pytest.mark.clause("KIP-33.read-max-timestamp-holder", "KIP-33.read-lookup-first-match")
@example(deltas=[[0], [-1]], pick=0)  # the max is in an earlier batch than the latest: not the latest's base offset
@example(deltas=[[-1, 0]], pick=1)  # the first record at or after the target is not its batch's first record
@given(
    deltas=st.lists(st.lists(st.integers(-MINUTE_MS, MINUTE_MS), min_size=1, max_size=3), min_size=1, max_size=4),
    pick=st.integers(0, 11),
)
def test_max_timestamp_and_a_lookup_answer_records_a_consumer_reads(impl, profile, deltas, pick):
    """Batches stamped within a minute of now; a Fetch, MAX_TIMESTAMP and a lookup of the ``pick``-th record's
    timestamp, all of one log state (the invariants over reads, suites/stateful/test_read_invariants.py)."""
    stamps = [NOW + d for ds in deltas for d in ds]
    ops = (
        CreateTopic("t", TopicConfig()),
        *(Produce("t", batch(*(NOW + d for d in ds))) for ds in deltas),
        Fetch("t"),
        ListOffsets("t", -3),
        ListOffsets("t", stamps[pick % len(stamps)]),
    )
    assert_conforms(impl, History(profile, ops, start_ms=NOW))
