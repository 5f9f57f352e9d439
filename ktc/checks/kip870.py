"""KIP-870: retention by event time."""

from __future__ import annotations

from ktc.checks.common import (
    LAT,
    compare_fates,
    fetches_of,
    stamps_with_create_time,
    topic_config_conformance,
)
from ktc.checks.registry import Compare, check
from ktc.checks.scenario import Scenario


@check("KIP-870.config-name")
def event_time_config_conformance(s: Scenario, c: Compare) -> None:
    topic_config_conformance(s, c, "retention_max_eventtime_ms")


@check("KIP-870.event-time-retention", "KIP-870.partition-max-event-time", "KIP-870.combined-with-existing")
def event_time_retention_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: limit_set)


@check("KIP-870.unset-means-unchanged")
def unchanged_retention_conformance(s: Scenario, c: Compare) -> None:
    compare_fates(s, c, lambda kind, limit_set: not limit_set)


@check("KIP-870.both-timestamps-stored")
def dual_timestamp_conformance(s: Scenario, c: Compare) -> None:
    for i, topic, exp, obs in fetches_of(s, LAT):
        c.eq(
            i,
            f"stored (offset, timestamp, create_time) on {topic!r}",
            stamps_with_create_time(exp),
            stamps_with_create_time(obs),
        )
