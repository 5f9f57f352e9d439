"""The numbers a counterexample timeline is drawn from, as plain data for ``reports/html.py``.

What the broker's clock read at each Produce and which before/after bounds applied are the
model's bookkeeping (leader changes, stepped clocks, profile defaults, the Long.MAX fallback);
computing them here keeps ``reports/`` free of rules and the drawing free of guesses.
"""

from __future__ import annotations

from ktc.judge.serialize import FormatError, from_data
from ktc.reference import model
from ktc.reference.configs import effective_limits
from ktc.reference.types import (
    INT64_MAX,
    Advance,
    CreateTopic,
    ElectLeader,
    History,
    Produce,
    ProduceResult,
    Result,
    RetentionPass,
    RetentionResult,
    StepClock,
    TopicConfig,
    clock_states,
)
from ktc.reports.schema import ClockRow, Counterexample, ProduceMark, Timeline
from ktc.specs.profiles import Profile, ProfileError
from ktc.specs.profiles import get as get_profile


def timeline(counterexample: Counterexample) -> Timeline | None:
    """``{"produces": [{op_index, topic, now, before, after, timestamps, timestamp_type}], "clock": [...],
    "mismatch_op"}`` (``clock``: see ``clock_rows``).

    ``before``/``after`` are None when unbounded (Long.MAX); None overall when the history cannot
    be read (a counterexample from another ktc version) or has no Produce.
    """
    try:
        history: History = from_data(counterexample["history"])
        profile = get_profile(history.profile)
    except (FormatError, ProfileError, KeyError, TypeError):
        return None
    configs: dict[str, TopicConfig] = {}
    produces: list[ProduceMark] = []
    for index, (op, snap) in enumerate(zip(history.ops, clock_states(history))):
        if isinstance(op, CreateTopic):
            configs.setdefault(op.topic, op.config)
        elif isinstance(op, Produce) and op.topic in configs:
            produces.append(produce_row(index, op, configs[op.topic], profile, snap.leader_now(op.topic, op.partition)))
    if not produces:
        return None
    return {
        "produces": produces,
        "clock": clock_rows(history),
        "mismatch_op": (counterexample.get("mismatch") or {}).get("op_index"),
    }


def clock_rows(history: History) -> list[ClockRow]:
    """Per operation, as the model runs it: the leader's clock (ms after the history's start) and, for
    the partition it touches, the segments' base offsets after it, which one it rolled and which it deleted.
    Drawn only when the history moves a clock or has segments to show (a roll or a retention pass)."""
    trace, rows = model.run(history), list[ClockRow]()
    segments: dict[tuple[str | None, int], list[int]] = {}
    for index, (op, snap, result) in enumerate(zip(history.ops, clock_states(history), trace)):
        topic: str | None = getattr(op, "topic", None)  # CreateTopic's partition is 0 here
        partition: int = getattr(op, "partition", 0)
        key = (topic, partition)
        rolled, deleted = step_segments(result, segments.setdefault(key, [0]))
        rows.append(
            {
                "op_index": index,
                "kind": type(op).__name__,
                "at": snap.leader_now(topic, partition) - history.start_ms
                if topic
                else snap.real_ms + snap.offsets[0] - history.start_ms,
                "segments": list(segments[key]) if key[0] else [],
                "rolled": rolled,
                "deleted": deleted,
            }
        )
    moving = any(isinstance(op, (Advance, StepClock, ElectLeader, RetentionPass)) for op in history.ops)
    return rows if moving or any(r["rolled"] is not None for r in rows) else []


def step_segments(result: Result, bases: list[int]) -> tuple[int | None, list[int]]:
    """Apply one operation's answer (the model's) to a partition's segment bases: (the base it rolled, the bases
    it deleted)."""
    if (
        isinstance(result, ProduceResult)
        and result.error_code == 0
        and result.rolled
        and result.base_offset not in bases
    ):
        bases.append(result.base_offset)
        return result.base_offset, []
    if isinstance(result, RetentionResult) and result.error_code == 0 and result.deleted_base_offsets:
        bases[:] = [b for b in bases if b not in result.deleted_base_offsets] or [result.log_start_offset]
        return None, list(result.deleted_base_offsets)
    return None, []


def produce_row(index: int, op: Produce, config: TopicConfig, profile: Profile, now: int) -> ProduceMark:
    before, after = effective_limits(config, profile)
    return {
        "op_index": index,
        "topic": op.topic,
        "now": now,
        "before": None if before >= INT64_MAX else before,
        "after": None if after >= INT64_MAX else after,
        "timestamps": [r.timestamp for r in op.batch.records],
        "timestamp_type": config.timestamp_type.value,
    }
