"""Strategies for topic configurations that a given profile accepts."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ktc.reference.types import INT64_MAX, TimestampType, TopicConfig

from . import _configs
from ._repr import shown
from ._validation import check_profile, check_range, check_sequence, check_subset

__all__ = ["topic_configs"]

CREATE_TIME, LOG_APPEND_TIME = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME


def topic_configs(
    *,
    profile: str,
    timestamp_types: Sequence[TimestampType] = (CREATE_TIME, LOG_APPEND_TIME),
    limits: Sequence[int | None] | None = None,
) -> st.SearchStrategy[TopicConfig]:
    """Topic configs valid for ``profile``: only keys in ``specs.profiles.get(profile).configs`` are set.

    ``message.timestamp.type`` comes from ``timestamp_types``.  The before/after/difference
    limits are unset (None) or one of 0, 1, 1000, one hour, one day, INT64_MAX, INT64_MAX - 1,
    or any non-negative int64; with ``limits`` given, exactly one of its values (None: unset).
    ``segment.ms`` (>= 1), ``retention.ms`` (-1 or more) and ``retention.max.eventtime.ms``
    are unset, whole days up to ten, or up to ten days in ms.  ``compression.type`` is
    "producer" three times in four, else a codec; 1 to 3 partitions.

    Shrinks towards ``TopicConfig()``: every key unset (or the first of ``limits``), CreateTime
    when allowed, producer compression, one partition.
    """
    spec = check_profile(profile)
    kinds = check_subset(timestamp_types, "timestamp_types", tuple(TimestampType))
    if "message.timestamp.type" not in spec.configs and CREATE_TIME not in kinds:
        raise InvalidArgument(
            f"profile={profile!r} cannot set message.timestamp.type, "
            f"so timestamp_types={timestamp_types!r} must include {CREATE_TIME!r}"
        )
    kinds = tuple(kind for kind in TimestampType if kind in kinds)  # CreateTime first: the default
    return _configs.topic_configs(
        **shown(topic_configs, profile=profile, timestamp_types=kinds, limits=_check_limits(limits))
    )


def _check_limits(limits: object) -> tuple[int | None, ...] | None:
    if limits is None:
        return None
    chosen = check_sequence(limits, "limits")
    if not chosen:
        raise InvalidArgument("limits=() must hold at least one value (None means unset)")
    for value in chosen:
        if value is not None:
            check_range(value, "each of limits", 0, INT64_MAX)
    return chosen
