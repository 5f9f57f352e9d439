"""LogAppendTime across several leader moves of one partition, on fixed histories: what a cluster ktc did not start
is judged on with ``--move-leaders`` (implementations/kafka/moves/), on the clocks it has.

The KIP-32 draft's leader-migration rule (``max(lastAppendedTimestamp, currentTimeMillis)``, "so the timestamp in
the log will not go backward") holds in the KIP texts' profile alone: a broker is judged under ``kip`` on pinned
inputs only, so these histories are pinned.  They cite only the leader-change clauses; a single broker declares
those unsupported, so elsewhere they add no row but a reason.  The clock offsets drawn here are the reference's
and Spark's; a real cluster runs on its own clocks, measured from its LogAppendTime echoes.
"""

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference.types import CreateTopic, ElectLeader, Fetch, History, Produce, TopicConfig
from ktc.suites._support import LAT, NOW, batch

LEADER_CHANGE = (
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
)


def round_trip(profile: str, offsets: tuple[int, int, int], partitions: int = 1) -> History:
    """Leadership of the last partition goes from broker 0 to 1, to 2 and back to 0, a batch appended on each."""
    p = partitions - 1
    ops = (
        CreateTopic("t", TopicConfig(timestamp_type=LAT, partitions=partitions)),
        Produce("t", batch(NOW, NOW), p),
        ElectLeader("t", 1, p),
        Produce("t", batch(NOW), p),
        ElectLeader("t", 2, p),
        Produce("t", batch(NOW), p),
        ElectLeader("t", 0, p),
        Produce("t", batch(NOW), p),
        Fetch("t", p),
    )
    return History(profile, ops, start_ms=NOW, clock_offsets=offsets)


@pytest.mark.pinned
@pytest.mark.clause(*LEADER_CHANGE)
@pytest.mark.parametrize(
    "offsets,partitions",
    [((0, 0, 0), 1), ((0, -60_000, 60_000), 1), ((0, 60_000, -60_000), 2)],
    ids=["same-clocks", "slower-then-faster", "faster-then-slower-second-partition"],
)
def test_log_append_time_across_a_round_trip_of_the_leadership(impl, profile, offsets, partitions):
    assert_conforms(impl, round_trip(profile, offsets, partitions))
