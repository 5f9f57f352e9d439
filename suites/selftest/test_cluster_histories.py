"""Which histories the 3-node cluster (--impl kafka-cluster) can run: pure, no JVM."""

import pytest
from hypothesis import given
from hypothesis.errors import InvalidArgument

from ktc.implementations.kafka.cluster_histories import (
    DEFAULT_OFFSETS_S,
    cannot_run,
    fastest_then_slowest,
    node_map,
    offsets_ms,
)
from ktc.reference.types import (
    Advance,
    CreateTopic,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    Produce,
    StepClock,
    TopicConfig,
)
from ktc.strategies import leader_change_histories
from ktc.suites._support import LAT, NOW, batch
from ktc.suites.kip32.test_leader_change_on_skewed_clocks import FASTEST, SLOWEST, leader_change

CLUSTER = offsets_ms(DEFAULT_OFFSETS_S)
TOPIC = CreateTopic("t", TopicConfig(timestamp_type=LAT, partitions=2))


def history(*ops, offsets=(FASTEST, SLOWEST, 0)) -> History:
    return History("kip", (TOPIC, *ops), start_ms=NOW, clock_offsets=offsets)


@pytest.mark.parametrize("first,then", [(FASTEST, SLOWEST), (SLOWEST, FASTEST)])
def test_the_suites_leader_change_histories_run_on_the_cluster(first, then):
    assert cannot_run(leader_change("kip", first, then), CLUSTER) is None


@given(leader_change_histories(profile="kip", clock_offsets=CLUSTER))
def test_every_drawn_leader_change_history_runs_on_the_cluster_and_changes_the_leader_once(history):
    assert cannot_run(history, CLUSTER) is None
    assert [op.broker > 0 for op in history.ops if isinstance(op, ElectLeader)] == [True]


@pytest.mark.parametrize("offsets", [(), (0,), "ab", (0, 2**63)], ids=["none", "one", "a-string", "past-int64"])
def test_leader_change_histories_refuse_clocks_that_cannot_change_a_leader(offsets):
    with pytest.raises(InvalidArgument):
        leader_change_histories(profile="kip", clock_offsets=offsets)


@pytest.mark.parametrize(
    "ops,offsets,why",
    [
        ((Produce("t", batch(NOW)),), (0,), "its own clocks"),
        ((Produce("t", batch(NOW)),), (FASTEST, SLOWEST, 1), "its own clocks"),
        ((StepClock(0, 5),), (FASTEST, SLOWEST, 0), "stepped"),
        ((DescribeLog("t"),), (FASTEST, SLOWEST, 0), "not observable"),
        ((ElectLeader("t", 1), ElectLeader("t", 2)), (FASTEST, SLOWEST, 0), "more than one leader change"),
        ((ElectLeader("t", 1), Fetch("t", 1)), (FASTEST, SLOWEST, 0), "only that partition"),
        ((ElectLeader("u", 1),), (FASTEST, SLOWEST, 0), "not created"),
    ],
    ids=["one-broker", "other-offsets", "step", "describe-log", "two-changes", "other-partition", "no-topic"],
)
def test_histories_the_cluster_cannot_run_say_why(ops, offsets, why):
    assert why in cannot_run(history(*ops, offsets=offsets), CLUSTER)


def test_electing_the_current_leader_or_waiting_is_not_a_change():
    ops = (ElectLeader("t", 0), Advance(5), ElectLeader("t", 1, 1), Produce("t", batch(NOW), 1), Fetch("t", 1))
    assert cannot_run(history(*ops), CLUSTER) is None


def test_history_brokers_map_to_the_nodes_with_their_clock_offsets():
    assert node_map((FASTEST, SLOWEST, 0), CLUSTER) == [
        CLUSTER.index(FASTEST),
        CLUSTER.index(SLOWEST),
        CLUSTER.index(0),
    ]
    assert fastest_then_slowest(DEFAULT_OFFSETS_S) == [CLUSTER.index(FASTEST), CLUSTER.index(SLOWEST), CLUSTER.index(0)]
