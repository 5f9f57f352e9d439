"""Building blocks of ``topic_configs()``: one value strategy per field, keyed by Kafka config name."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from ktc.reference.types import (
    CONFIG_NAMES,
    INT64_MAX,
    ONE_HOUR_MS,
    TOPIC_COMPRESSION_TYPES,
    TimestampType,
    TopicConfig,
)
from ktc.specs import profiles

from ._edges import DAY_MS

LIMIT_EDGES = (None, 0, 1, 1000, ONE_HOUR_MS, DAY_MS, INT64_MAX, INT64_MAX - 1)
LIMIT_FIELDS = ("before_max_ms", "after_max_ms", "difference_max_ms")
WHOLE_DAYS = tuple(d * DAY_MS for d in range(1, 11))


def limit_values(limits: Sequence[int | None] | None) -> st.SearchStrategy[int | None]:
    """One of ``limits`` when given; else unset first, then named limits, then any non-negative int64."""
    if limits is not None:
        return st.sampled_from(limits)
    return st.one_of(st.sampled_from(LIMIT_EDGES), st.integers(0, INT64_MAX))


def durations(floor: int, extra: tuple[int, ...] = ()) -> st.SearchStrategy[int | None]:
    """Unset first, then whole days up to ten, ``extra`` values, then anything in [floor, 10 days]."""
    return st.one_of(st.none(), st.sampled_from(WHOLE_DAYS + tuple(extra)), st.integers(floor, 10 * DAY_MS))


def mostly(common: str, others: Sequence[str]) -> st.SearchStrategy[str]:
    """``common`` three times in four (and first when shrinking), else one of ``others``."""
    return st.one_of(st.just(common), st.just(common), st.just(common), st.sampled_from(others))


def field_strategies(limits: st.SearchStrategy[int | None]) -> dict[str, st.SearchStrategy[int | None]]:
    """The strategy for every optional field, by attribute name."""
    return {
        **{attr: limits for attr in LIMIT_FIELDS},
        "segment_ms": durations(1),
        "retention_ms": durations(-1, extra=(-1,)),
        "retention_max_eventtime_ms": durations(0, extra=(0,)),
    }


def accepted_fields(
    accepted: frozenset[str], limits: st.SearchStrategy[int | None]
) -> dict[str, st.SearchStrategy[int | None]]:
    """Only the fields whose Kafka config name the profile accepts."""
    return {attr: s for attr, s in field_strategies(limits).items() if CONFIG_NAMES[attr] in accepted}


@st.composite
def topic_configs(
    draw: st.DrawFn,
    *,
    profile: str,
    timestamp_types: Sequence[TimestampType] = tuple(TimestampType),
    limits: Sequence[int | None] | None = None,
) -> TopicConfig:
    """Named like the public strategy so that the repr reads as the user's call."""
    accepted = profiles.get(profile).configs
    kind = (
        st.sampled_from(timestamp_types) if "message.timestamp.type" in accepted else st.just(TimestampType.CREATE_TIME)
    )
    codec = mostly("producer", TOPIC_COMPRESSION_TYPES) if "compression.type" in accepted else st.just("producer")
    fields = {attr: draw(s) for attr, s in accepted_fields(accepted, limit_values(limits)).items()}
    return TopicConfig(
        timestamp_type=draw(kind), compression_type=draw(codec), partitions=draw(st.integers(1, 3)), **fields
    )
