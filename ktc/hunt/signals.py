"""What a hunt steers towards (``hypothesis.target``) and counts: the validation bounds, the sentinel,
int64 wrap, codec x attribute x topic-config combinations, batch headers that disagree with their
records, leader changes, a moved log start."""

from __future__ import annotations

from hypothesis import target

from ktc.judge.steering import bound_distance
from ktc.reference.types import (
    INT64_MAX,
    INT64_MIN,
    Batch,
    CreateTopic,
    ElectLeader,
    Produce,
    RetentionResult,
    clock_states,
    header_max,
)

COVERAGE = ("at a bound", "the sentinel", "int64 wrap", "a disagreeing header", "a leader change", "a moved log start")


def produces(history) -> list[tuple[Produce, int]]:
    """(Produce op, its leader's clock) in order."""
    return [
        (op, snap.leader_now(op.topic, op.partition))
        for op, snap in zip(history.ops, clock_states(history))
        if isinstance(op, Produce)
    ]


def wraps(now: int, ts: int) -> bool:
    return not (INT64_MIN <= now - ts <= INT64_MAX and INT64_MIN <= ts - now <= INT64_MAX)


def wrap_closeness(history) -> float:
    """log2 of the largest |now - ts| (64 or more: the difference wraps int64)."""
    spans = [abs(now - r.timestamp) for op, now in produces(history) for r in op.batch.records]
    return float(max(spans, default=1).bit_length())


def sentinels(history) -> int:
    return sum(r.timestamp in (-1, history.no_timestamp) for op, _ in produces(history) for r in op.batch.records)


def disagreeing(batch: Batch) -> bool:
    return batch.max_timestamp is not None and batch.max_timestamp != header_max(Batch(batch.records))


def combinations(history) -> int:
    """Distinct (batch codec, batch timestamp type, topic compression, topic timestamp type)."""
    configs = {op.topic: op.config for op in history.ops if isinstance(op, CreateTopic)}
    return len(
        {
            (
                op.batch.codec,
                op.batch.timestamp_type,
                configs[op.topic].compression_type,
                configs[op.topic].timestamp_type,
            )
            for op, _ in produces(history)
            if op.topic in configs
        }
    )


def leader_changes(history, expected) -> int:
    """Elections that move a partition's leadership to another broker, on a topic the model created (an election on
    a refused topic changes nothing)."""
    created = {
        op.topic
        for op, r in zip(history.ops, expected)
        if isinstance(op, CreateTopic) and getattr(r, "error_code", 1) == 0
    }
    leaders: dict[tuple[str, int], int] = {}
    moved = 0
    for op in history.ops:
        if isinstance(op, ElectLeader) and op.topic in created:
            moved += op.broker != leaders.get((op.topic, op.partition), 0)
            leaders[(op.topic, op.partition)] = op.broker
    return moved


def log_start(expected) -> int:
    return max((r.log_start_offset for r in expected if isinstance(r, RetentionResult)), default=0)


def steer(history, expected) -> None:
    """One ``target()`` per label per example (what Hypothesis allows)."""
    distance = bound_distance(history)
    if distance is not None:
        target(-float(min(distance, 2**53)), label="ms from a validation bound")
    target(wrap_closeness(history), label="log2 |now - ts| (int64 wrap at 64)")
    target(float(sentinels(history)), label="sentinel timestamps")
    target(float(combinations(history)), label="codec x attribute x topic-config combinations")
    target(float(sum(disagreeing(op.batch) for op, _ in produces(history))), label="disagreeing headers")
    target(float(leader_changes(history, expected)), label="leader changes")
    target(float(log_start(expected)), label="log start offset")


def covered(history, expected) -> set[str]:
    """Which of ``COVERAGE`` this example reached."""
    pairs = produces(history)
    reached = {
        "at a bound": bound_distance(history) == 0,
        "the sentinel": sentinels(history) > 0,
        "int64 wrap": any(wraps(now, r.timestamp) for op, now in pairs for r in op.batch.records),
        "a disagreeing header": any(disagreeing(op.batch) for op, _ in pairs),
        "a leader change": leader_changes(history, expected) > 0,
        "a moved log start": log_start(expected) > 0,
    }
    return {name for name, on in reached.items() if on}
