"""Self-tests of the ``strategies`` package: argument validation, reachable edges, well-formed output."""

from __future__ import annotations

import pytest
from hypothesis import find, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, NoSuchExample

from ktc import reference
from ktc.reference.configs import config_error
from ktc.reference.types import (
    INT64_MAX,
    INT64_MIN,
    NONE,
    CreateTopic,
    CreateTopicResult,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    Record,
    StepClock,
    TimestampType,
    TopicConfig,
)
from ktc.specs import profiles
from ktc.strategies import (
    _edges,
    append_histories,
    batches,
    histories,
    records,
    timestamps,
    topic_configs,
)
from ktc.suites.selftest.strategies_support import EACH_PROFILE, FAST, LAT, NOW, epoch_ms, invalid, reach


# ---- edges ---------------------------------------------------------------------------------
def test_calendar_and_pandas_edges_are_the_instants_their_names_say():
    assert _edges.GREGORIAN_CUTOVER_MS == epoch_ms(1582, 10, 15)
    assert _edges.YEAR_1_MS == epoch_ms(1, 1, 1)
    assert _edges.YEAR_9999_END_MS == epoch_ms(9999, 12, 31, 23, 59, 59, 999_000)
    assert _edges.PANDAS_NS_MAX_MS == INT64_MAX // 1_000_000
    assert _edges.PANDAS_NS_MIN_MS == -(INT64_MAX // 1_000_000)


def test_unit_mistakes_are_micro_nano_and_seconds_with_nanoseconds_clamped():
    assert _edges.unit_mistakes(NOW) == (NOW * 1000, NOW * 1_000_000, NOW // 1000)
    assert _edges.unit_mistakes(10**13) == (10**16, INT64_MAX, 10**10)
    assert _edges.unit_mistakes(-(10**13))[1] == INT64_MIN


# ---- timestamps ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(min_value=2, max_value=1),
        dict(min_value=INT64_MIN - 1),
        dict(max_value=INT64_MAX + 1),
        dict(now=1.5),
        dict(now=True),
        dict(now=INT64_MAX + 1),
        dict(bounds=[-1]),
        dict(bounds=[1.0]),
        dict(bounds=5),
        dict(allow_no_timestamp=None),
        dict(min_value="0"),
    ],
)
def test_timestamps_rejects_invalid_arguments(kwargs):
    invalid(lambda: timestamps(**kwargs))


def test_timestamps_rejects_min_value_above_max_value_before_drawing():
    with pytest.raises(InvalidArgument, match="min_value=2 must not be greater than max_value=1"):
        timestamps(min_value=2, max_value=1)


@pytest.mark.parametrize("bound", [0, 1, 1000, 3_600_000, INT64_MAX])
@pytest.mark.parametrize("step", [-1, 0, 1])
def test_timestamps_reach_every_value_around_both_bounds(bound, step):
    for sign in (-1, 1):
        target = _edges.wrap(NOW + sign * bound + step)
        assert reach(timestamps(now=NOW, bounds=[bound]), lambda t, target=target: t == target) == target


EDGES = [
    *(
        (timestamps(), t)
        for t in (
            INT64_MIN,
            INT64_MIN + 1,
            INT64_MAX,
            INT64_MAX - 1,
            -1,
            0,
            1,
            -2,
            _edges.GREGORIAN_CUTOVER_MS,
            _edges.YEAR_1_MS,
            _edges.YEAR_9999_END_MS,
        )
    ),
    *((timestamps(now=NOW), t) for t in (_edges.wrap(NOW + INT64_MIN), *_edges.unit_mistakes(NOW))),
    *((timestamps(min_value=NOW - 5, max_value=NOW + 5), t) for t in (NOW - 5, NOW + 5)),
]


@pytest.mark.parametrize("strategy, target", EDGES, ids=[f"{s!r}={t}" for s, t in EDGES])
def test_timestamps_reach_the_named_edges_overflow_wrong_units_and_range_ends(strategy, target):
    assert reach(strategy, lambda t: t == target) == target


@FAST
@given(st.data())
def test_timestamps_stay_within_min_value_and_max_value_and_skip_minus_one_when_asked(data):
    low = data.draw(st.integers(INT64_MIN, 5))
    high, allow = data.draw(st.integers(max(low, -5), INT64_MAX)), data.draw(st.booleans())
    now = data.draw(st.none() | st.integers(INT64_MIN, INT64_MAX))
    bounds = data.draw(st.lists(st.integers(0, INT64_MAX), max_size=3))
    ts = data.draw(timestamps(now=now, bounds=bounds, min_value=low, max_value=high, allow_no_timestamp=allow))
    assert low <= ts <= high and (allow or ts != -1)


def test_timestamps_repr_shows_only_the_arguments_given():
    assert repr(timestamps(now=5, bounds=(1,))) == "timestamps(now=5, bounds=(1,))"


# ---- records and batches -------------------------------------------------------------------
def test_records_rejects_a_timestamps_argument_that_is_not_a_strategy():
    invalid(lambda: records(timestamps=5))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(min_size=0),
        dict(min_size=3, max_size=2),
        dict(max_size=0),
        dict(codecs=()),
        dict(codecs=["brotli"]),
        dict(codecs="none"),
        dict(timestamps=[1]),
        dict(control=1),
        dict(bad_header="yes"),
    ],
)
def test_batches_rejects_invalid_arguments(kwargs):
    invalid(lambda: batches(**kwargs))


@FAST
@given(batches(codecs=("gzip", "lz4"), min_size=2, max_size=3))
def test_batches_keep_every_default_when_no_flag_is_set(batch):
    assert 2 <= len(batch.records) <= 3 and batch.codec in ("gzip", "lz4")
    assert batch.timestamp_type is TimestampType.CREATE_TIME and batch.max_timestamp is None
    assert not (batch.control or batch.transactional or batch.timestamp_extended)


@pytest.mark.parametrize(
    "flag, drawn",
    [
        ("log_append_time_attribute", lambda b: b.timestamp_type is LAT),
        ("control", lambda b: b.control),
        ("transactional", lambda b: b.transactional),
        ("timestamp_extended", lambda b: b.timestamp_extended),
        (
            "bad_header",
            lambda b: b.max_timestamp is not None and b.max_timestamp != max(r.timestamp for r in b.records),
        ),
    ],
)
def test_batches_draw_each_flagged_feature_without_forcing_it(flag, drawn):
    reach(batches(**{flag: True}), drawn)
    reach(batches(**{flag: True}), lambda b: not drawn(b))


# ---- topic configs -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(profile="kafka-9"),
        dict(profile="kip", timestamp_types=()),
        dict(profile="kip", timestamp_types=["x"]),
        dict(profile="kip", limits=[-1]),
        dict(profile="kip", limits=[INT64_MAX + 1]),
        dict(profile="kip", limits=()),
        dict(profile="kip", limits=5),
    ],
)
def test_topic_configs_rejects_invalid_arguments(kwargs):
    invalid(lambda: topic_configs(**kwargs))


def test_topic_configs_lists_the_valid_profiles_when_the_name_is_unknown():
    with pytest.raises(InvalidArgument, match="kafka-3.5, kafka-3.6, kafka-3.7, kafka-3.8, kafka-3.9, kafka-4"):
        topic_configs(profile="kafka-9")


@EACH_PROFILE
@FAST
@given(data=st.data())
def test_topic_configs_only_set_keys_the_profile_accepts(profile_name, data):
    config = data.draw(topic_configs(profile=profile_name))
    assert set(config.set_keys()) <= profiles.get(profile_name).configs
    assert config_error(config, profiles.get(profile_name)) == NONE


def test_topic_configs_never_set_event_time_retention_where_the_profile_does_not_accept_it():
    with pytest.raises(NoSuchExample):
        find(topic_configs(profile="kafka-4"), lambda c: c.retention_max_eventtime_ms is not None, settings=FAST)


@FAST
@given(topic_configs(profile="kafka-3.6", limits=[None, 7], timestamp_types=[LAT]))
def test_topic_configs_draw_limits_and_types_only_from_the_choices_given(config):
    assert {config.before_max_ms, config.after_max_ms, config.difference_max_ms} <= {None, 7}
    assert config.timestamp_type is LAT


# ---- histories -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(profile="nope"),
        dict(profile="kip", brokers=0),
        dict(profile="kip", max_ops=0),
        dict(profile="kip", skew_ms=-1),
        dict(profile="kip", topic_configs=TopicConfig()),
        dict(profile="kip", batches=5),
    ],
)
def test_histories_rejects_invalid_arguments(kwargs):
    invalid(lambda: histories(**kwargs))


def check_well_formed(history: History):
    trace = reference.run(history)
    creates = [r for op, r in zip(history.ops, trace) if isinstance(op, CreateTopic)]
    assert creates and all(r == CreateTopicResult(NONE) for r in creates)
    assert history.ops[0] == CreateTopic("t", history.ops[0].config)


def final_reads(history: History):
    topics = [op for op in history.ops if isinstance(op, CreateTopic)]
    return [op(t.topic, p) for t in topics for p in range(t.config.partitions) for op in (Fetch, DescribeLog)]


@EACH_PROFILE
@FAST
@given(data=st.data())
def test_histories_run_through_the_reference_and_end_with_reads_of_every_partition(profile_name, data):
    history = data.draw(histories(profile=profile_name, brokers=3, skew_ms=60_000))
    check_well_formed(history)
    reads = final_reads(history)
    assert list(history.ops[-len(reads) :]) == reads
    assert all(abs(offset) <= 60_000 for offset in history.clock_offsets) and history.clock_offsets[0] == 0


@FAST
@given(histories(profile="kafka-4", max_ops=4))
def test_histories_on_one_unskewed_broker_never_step_clocks_or_elect(history):
    assert not any(isinstance(op, (StepClock, ElectLeader)) for op in history.ops)
    reads = (CreateTopic, Fetch, DescribeLog, ListOffsets)
    assert sum(not isinstance(op, reads) for op in history.ops) <= 3 * 4  # a retention step: Produce, Advance, pass


# ---- append histories ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(profile="nope"),
        dict(profile="kip", now=1.5),
        dict(profile="kip", now=INT64_MAX + 1),
        dict(profile="kip", config=5),
        dict(profile="kip", batch=[Record(0)]),
        dict(profile="kafka-4", config=TopicConfig(difference_max_ms=5)),
    ],
)
def test_append_histories_rejects_invalid_arguments(kwargs):
    invalid(lambda: append_histories(**kwargs))


@EACH_PROFILE
@FAST
@given(data=st.data())
def test_append_histories_are_one_create_one_produce_one_fetch_that_the_reference_runs(profile_name, data):
    history = data.draw(append_histories(profile=profile_name))
    check_well_formed(history)
    assert [type(op) for op in history.ops] == [CreateTopic, Produce, Fetch]


@FAST
@given(
    append_histories(profile="kip", config=TopicConfig(before_max_ms=10), now=NOW, batch=batches(timestamps=st.just(5)))
)
def test_append_histories_use_values_and_strategies_as_given(history):
    assert history.start_ms == NOW and history.ops[0].config == TopicConfig(before_max_ms=10)
    assert all(r.timestamp == 5 for r in history.ops[1].batch.records)
