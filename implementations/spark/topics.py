"""CreateTopics validation as the Spark implementation understands it: known keys, valid ranges."""

from __future__ import annotations

from ktc.reference.types import TOPIC_COMPRESSION_TYPES, TopicConfig

INT64_MAX = 2**63 - 1
FLOORS = {
    "before_max_ms": 0,
    "after_max_ms": 0,
    "difference_max_ms": 0,
    "segment_ms": 1,
    "retention_ms": -1,
    "retention_max_eventtime_ms": 0,
}


def config_error(config: TopicConfig, profile) -> int:
    """40 (INVALID_CONFIG) for a key the profile's broker does not know or a value out of range."""
    unknown = [key for key in config.set_keys() if key not in profile.configs]
    out_of_range = [
        a
        for a, floor in FLOORS.items()
        if getattr(config, a) is not None and not floor <= getattr(config, a) <= INT64_MAX
    ]
    bad_codec = config.compression_type not in TOPIC_COMPRESSION_TYPES
    return 40 if unknown or out_of_range or bad_codec else 0
