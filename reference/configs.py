"""Topic configs: which keys a profile knows, which values are valid, and the effective limits."""

from __future__ import annotations

from ktc.specs.profiles import Profile

from .types import INT64_MAX, INVALID_CONFIG, NONE, TOPIC_COMPRESSION_TYPES, TopicConfig

_AT_LEAST = {
    "before_max_ms": 0,
    "after_max_ms": 0,
    "difference_max_ms": 0,
    "segment_ms": 1,
    "retention_ms": -1,
    "retention_max_eventtime_ms": 0,
}


def config_error(config: TopicConfig, profile: Profile) -> int:
    """INVALID_CONFIG for a key the profile does not know or a value out of range, else NONE."""
    if any(key not in profile.configs for key in config.set_keys()):
        return INVALID_CONFIG
    for attr, floor in _AT_LEAST.items():
        value = getattr(config, attr)
        if value is not None and not floor <= value <= INT64_MAX:
            return INVALID_CONFIG
    if config.compression_type not in TOPIC_COMPRESSION_TYPES:
        return INVALID_CONFIG
    return NONE


def effective_limits(config: TopicConfig, profile: Profile) -> tuple[int, int]:
    """(before, after) as the broker applies them, defaults and the Long.MAX fallback included."""
    difference = INT64_MAX if config.difference_max_ms is None else config.difference_max_ms
    if profile.validation == "abs-difference":
        return difference, difference
    before = profile.default_before_max_ms if config.before_max_ms is None else config.before_max_ms
    after = profile.default_after_max_ms if config.after_max_ms is None else config.after_max_ms
    if profile.long_max_fallback:
        before = difference if before == INT64_MAX else before
        after = difference if after == INT64_MAX else after
    return before, after


def segment_ms(config: TopicConfig) -> int:
    return 604_800_000 if config.segment_ms is None else config.segment_ms


def retention_ms(config: TopicConfig) -> int:
    return 604_800_000 if config.retention_ms is None else config.retention_ms


def rebuilds(config: TopicConfig, codec: str) -> bool:
    """Whether the broker must rebuild the batch: the topic's codec differs from the producer's."""
    target = "none" if config.compression_type == "uncompressed" else config.compression_type
    return target not in ("producer", codec)
