"""KIP-228: negative timestamps and the NO_TIMESTAMP sentinel."""

from __future__ import annotations

from ktc.checks.common import CT, exempt, fetches_of, flagged, stamps
from ktc.checks.registry import Compare, check
from ktc.checks.scenario import ProduceView, Scenario
from ktc.reference.configs import rebuilds
from ktc.reference.types import (
    INT64_MIN,
    UNKNOWN_SERVER_ERROR,
)


@check("KIP-228.minus-one-is-no-timestamp")
def no_timestamp_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        for i, record in enumerate(view.batch.records):
            if exempt(s, record.timestamp) and view.config.timestamp_type is CT:
                c.eq(
                    view.index,
                    f"error_code with no-timestamp record {i}",
                    view.expected.error_code,
                    view.observed.error_code,
                )
                c.eq(
                    view.index,
                    f"no-timestamp record {i} blamed in record_errors",
                    i in flagged(view.expected),
                    i in flagged(view.observed),
                )
    for i, topic, _p, exp, obs in s.last_fetches():
        c.eq(
            i,
            f"batch MaxTimestamp headers on {topic!r}",
            [b.max_timestamp for b in exp.batches],
            [b.max_timestamp for b in obs.batches],
        )


def has_negative(s: Scenario, view: ProduceView) -> bool:
    return any(r.timestamp < 0 and not exempt(s, r.timestamp) for r in view.batch.records)


@check("KIP-228.negative-timestamps-accepted")
def negative_acceptance_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if has_negative(s, view):
            c.eq(
                view.index,
                "error_code for a batch with negative timestamps",
                view.expected.error_code,
                view.observed.error_code,
            )


@check("KIP-228.rebuild-fails-on-negative")
def rebuild_failure_conformance(s: Scenario, c: Compare) -> None:
    """Every batch the broker rebuilds, negative or not: did the rebuild fail (UNKNOWN_SERVER_ERROR)?
    Batches the model rejects for another reason (validation, error 32) are the validation clauses'."""
    for view in s.produces():
        if rebuilds(view.config, view.batch.codec) and view.expected.error_code in (0, UNKNOWN_SERVER_ERROR):
            c.eq(
                view.index,
                "the rebuild of the batch failed (UNKNOWN_SERVER_ERROR)",
                view.expected.error_code == UNKNOWN_SERVER_ERROR,
                view.observed.error_code == UNKNOWN_SERVER_ERROR,
            )


@check("KIP-228.broker-serves-negative")
def negative_served_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, CT):
        negatives = [(o, ts) for o, ts in stamps(exp) if ts < 0 and not exempt(s, ts)]
        if negatives:
            c.eq(
                i,
                f"negative timestamps served from {topic!r}",
                negatives,
                [(o, ts) for o, ts in stamps(obs) if ts < 0 and not exempt(s, ts)],
            )


@check("KIP-228.sentinel-long-min", "KIP-228.producer-broker-table", "KIP-228.timestamp-extended-bit")
def sentinel_conformance(s: Scenario, c: Compare) -> None:
    if s.history.no_timestamp != INT64_MIN:
        return
    for i, topic, _p, exp, obs in s.last_fetches():
        c.eq(i, f"stored timestamps on {topic!r} (sentinel Long.MIN_VALUE)", stamps(exp), stamps(obs))
