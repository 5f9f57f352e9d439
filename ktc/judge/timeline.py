"""The numbers a counterexample timeline is drawn from, as plain data for ``reports/html.py``.

What the broker's clock read at each Produce and which before/after bounds applied are the
model's bookkeeping (leader changes, stepped clocks, profile defaults, the Long.MAX fallback);
computing them here keeps ``reports/`` free of rules and the drawing free of guesses.
"""
from __future__ import annotations

from ktc.judge.serialize import FormatError, from_data
from reference.configs import effective_limits
from reference.types import INT64_MAX, CreateTopic, Produce, clock_states
from specs.profiles import ProfileError
from specs.profiles import get as get_profile


def timeline(counterexample: dict) -> dict | None:
    """``{"produces": [{op_index, topic, now, before, after, timestamps, timestamp_type}], "mismatch_op"}``.

    ``before``/``after`` are None when unbounded (Long.MAX); None overall when the history cannot
    be read (a counterexample from another ktc version) or has no Produce.
    """
    try:
        history = from_data(counterexample["history"])
        profile = get_profile(history.profile)
    except (FormatError, ProfileError, KeyError, TypeError):
        return None
    configs, produces = {}, []
    for index, (op, snap) in enumerate(zip(history.ops, clock_states(history))):
        if isinstance(op, CreateTopic):
            configs.setdefault(op.topic, op.config)
        elif isinstance(op, Produce) and op.topic in configs:
            produces.append(produce_row(index, op, configs[op.topic], profile, snap.leader_now(op.topic, op.partition)))
    if not produces:
        return None
    return {"produces": produces, "mismatch_op": (counterexample.get("mismatch") or {}).get("op_index")}


def produce_row(index: int, op: Produce, config, profile, now: int) -> dict:
    before, after = effective_limits(config, profile)
    return {"op_index": index, "topic": op.topic, "now": now,
            "before": None if before >= INT64_MAX else before, "after": None if after >= INT64_MAX else after,
            "timestamps": [r.timestamp for r in op.batch.records],
            "timestamp_type": config.timestamp_type.value}
