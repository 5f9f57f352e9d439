"""Push Hypothesis towards the interesting edges with ``target()``: records near a bound."""

from __future__ import annotations

from hypothesis import target
from hypothesis.control import current_build_context, currently_in_test_context

from ktc.reference.configs import effective_limits
from ktc.reference.types import CreateTopic, History, Produce, TimestampType, TopicConfig, clock_states
from ktc.specs.profiles import get as get_profile


def bound_distance(history: History) -> int | None:
    """The smallest |(now - ts) - before| or |(ts - now) - after| over CreateTime records."""
    profile, best = get_profile(history.profile), None
    configs: dict[str, TopicConfig] = {}
    for op, snap in zip(history.ops, clock_states(history)):
        if isinstance(op, CreateTopic):
            configs.setdefault(op.topic, op.config)
        elif isinstance(op, Produce) and op.topic in configs:
            config = configs[op.topic]
            if config.timestamp_type is TimestampType.CREATE_TIME:
                before, after = effective_limits(config, profile)
                now = snap.leader_now(op.topic, op.partition)
                for r in op.batch.records:
                    d = min(abs(now - r.timestamp - before), abs(r.timestamp - now - after))
                    best = d if best is None else min(best, d)
    return best


_LAST_CONTEXT = None


def steer(history: History) -> None:
    """target() the bound distance once per example (Hypothesis allows one observation per label)."""
    global _LAST_CONTEXT
    if not currently_in_test_context() or current_build_context() is _LAST_CONTEXT:
        return
    _LAST_CONTEXT = current_build_context()
    distance = bound_distance(history)
    if distance is not None:
        target(-float(min(distance, 2**53)), label="ms from a validation bound (closer is better)")
