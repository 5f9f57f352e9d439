"""The 3-node cluster's clocks, and which histories it can run on them.  Pure: no Kafka client here,
so the suites import the offsets (``DEFAULT_OFFSETS_S``, from ktc/kafka/processes/skew.py) without the
broker extra.

A history runs on the cluster when its ``clock_offsets`` are the cluster's, in any order (history
broker b runs on the node whose offset is ``clock_offsets[b]``), and its ``ElectLeader`` ops can be
realised by halting the current leader: at most one leader change (halting a second node of
three loses the KRaft quorum), on a partition whose replica list puts the elected broker next,
after which only that partition is used (the halted node led every other one).  No
``StepClock`` (a running JVM's offset is fixed) and no ``RetentionPass``/``DescribeLog`` (not
observable through the Kafka protocol).
"""

from __future__ import annotations

from ktc.kafka.processes.skew import DEFAULT_OFFSETS_S, fastest_then_slowest, offsets_ms  # noqa: F401 (re-exported)
from ktc.reference.types import CreateTopic, DescribeLog, ElectLeader, History, RetentionPass, StepClock


def cannot_run(history: History, cluster_ms: tuple[int, ...]) -> str | None:
    if sorted(history.clock_offsets) != sorted(cluster_ms):
        return (
            f"the 3-node cluster runs only histories on its own clocks, offsets {list(cluster_ms)} ms in any "
            f"order (this history: {list(history.clock_offsets)})"
        )
    if any(isinstance(op, StepClock) for op in history.ops):
        return "a running broker's clock offset cannot be stepped"
    if any(isinstance(op, (RetentionPass, DescribeLog)) for op in history.ops):
        return "retention passes and segment listings are not observable through the Kafka protocol"
    return election_problem(history)


def election_problem(history: History) -> str | None:
    """Why the history's elections cannot be realised by halting one leader, or None."""
    partitions, leaders, changed = {}, {}, None
    for op in history.ops:
        key = (op.topic, getattr(op, "partition", None)) if hasattr(op, "topic") else None
        if isinstance(op, CreateTopic):
            partitions.setdefault(op.topic, op.config.partitions)
        if changed is not None and key is not None and key != changed:
            return "after a leader change only that partition can be used (the halted node led the others)"
        if isinstance(op, ElectLeader) and op.broker != leaders.get(key, 0):
            if op.partition >= partitions.get(op.topic, 0):
                return f"an election on {op.topic}-{op.partition}, which was not created before"
            if changed is not None:
                return "more than one leader change (halting a second node of three loses the KRaft quorum)"
            changed, leaders[key] = key, op.broker
    return None


def node_map(history_offsets, cluster_offsets) -> list[int]:
    """History broker b -> the cluster node whose clock offset is ``history_offsets[b]``."""
    free, out = list(range(len(cluster_offsets))), []
    for offset in history_offsets:
        node = next(i for i in free if cluster_offsets[i] == offset)
        free.remove(node)
        out.append(node)
    return out
