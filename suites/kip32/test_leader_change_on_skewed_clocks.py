"""KIP-32's leader-migration corner case on the clocks of the 3-node cluster (``--impl kafka-cluster``).

The draft says the leader appends ``max(lastAppendedTimestamp, currentTimeMillis)`` "so the
timestamp in the log will not go backward" when leadership moves to a broker whose clock is
behind.  These histories put the three brokers on the cluster's own clock offsets
(implementations/kafka/cluster_histories.py), so the reference, Spark and the real cluster run
the very same scenario: a LogAppendTime topic, one batch on the leader, the leadership moved to
another broker (on the cluster: by halting the leader), one more batch, and everything fetched
back.  Fixed histories, not Hypothesis: on the cluster each leader change costs seconds.
"""

import pytest

from ktc.implementations.kafka.cluster_histories import DEFAULT_OFFSETS_S, offsets_ms
from ktc.judge.harness import assert_conforms
from ktc.reference.types import CreateTopic, ElectLeader, Fetch, History, ListOffsets, Produce, TopicConfig
from ktc.suites._support import LAT, NOW, batch

OFFSETS_MS = offsets_ms(DEFAULT_OFFSETS_S)
FASTEST, SLOWEST = max(OFFSETS_MS), min(OFFSETS_MS)
LAT_TOPIC = TopicConfig(timestamp_type=LAT)


def leader_change(profile: str, first: int, then: int, config: TopicConfig = LAT_TOPIC) -> History:
    """Broker 0 (clock offset ``first`` ms) leads, then broker 1 (offset ``then`` ms); broker 2 follows.  A
    consumer reads the partition after the move (on a CreateTime topic before it too): what it reads is judged
    by the invariants over reads.  No read of a LogAppendTime topic precedes the move: under ``kip`` the
    model keeps each record's CreateTime next to its LogAppendTime (KIP-870), which Kafka's Fetch does not
    show, and that first divergence would leave the leader change's own clause unknown."""
    rest = list(OFFSETS_MS)
    rest.remove(first)
    rest.remove(then)
    before = reads() if config.timestamp_type is not LAT else ()
    ops = (
        CreateTopic("t", config),
        Produce("t", batch(NOW, NOW)),
        *before,
        ElectLeader("t", 1),
        Produce("t", batch(NOW)),
        *reads(),
        Fetch("t"),
    )
    return History(profile, ops, start_ms=NOW, clock_offsets=(first, then, *rest))


def reads() -> tuple:
    """A Fetch, EARLIEST, LATEST, MAX_TIMESTAMP and a lookup of the first record's timestamp."""
    return (Fetch("t"), *(ListOffsets("t", target) for target in (-2, -1, -3, NOW)))


@pytest.mark.clause(
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
    "KIP-32.log-append-time-assigned",
    "KIP-32.read-log-append-time",
    "KIP-32.read-timestamp-stable",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
    "KIP-33.read-log-start",
)
@pytest.mark.parametrize(
    "first,then", [(FASTEST, SLOWEST), (SLOWEST, FASTEST)], ids=["to-a-slower-clock", "to-a-faster-clock"]
)
def test_log_append_time_across_a_leader_change_between_skewed_clocks(impl, profile, first, then):
    assert_conforms(impl, leader_change(profile, first, then))


@pytest.mark.clause(
    "KIP-937.read-within-bounds",
    "KIP-32.read-timestamp-stable",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
    "KIP-33.read-log-start",
)
def test_create_time_records_read_the_same_after_leadership_moves_to_a_slower_clock(impl, profile):
    assert_conforms(impl, leader_change(profile, FASTEST, SLOWEST, TopicConfig()))
