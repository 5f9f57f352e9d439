"""What the history builder must remember while it draws ops: clocks, leaders, topics, timestamps.

This is bookkeeping, not semantics: it never decides what Kafka would answer, only where each
broker's clock is (so Produce timestamps can sit near the validation bounds) and what exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ktc.reference.types import CONFIG_NAMES, INT64_MAX, TopicConfig
from ktc.specs.profiles import Profile

from ._edges import clamp

LIMIT_FIELDS = ("before_max_ms", "after_max_ms", "difference_max_ms")
WEEK_MS = 7 * 86_400_000  # Kafka's default segment.ms and retention.ms (log.roll.hours, log.retention.hours)


def config_bounds(config: TopicConfig, profile: Profile) -> tuple[int, ...]:
    """The limits a config sets that the profile accepts, the profile's default limits, and the
    topic's segment.ms and retention.ms (Kafka's one-week default where unset): timestamps are drawn
    at now +- each of them, +-1, so rolls and retention are decided at their exact edges too."""
    given = [getattr(config, a) for a in LIMIT_FIELDS if CONFIG_NAMES[a] in profile.configs]
    defaults = [profile.default_before_max_ms, profile.default_after_max_ms]
    durations = [
        WEEK_MS if config.segment_ms is None else config.segment_ms,
        WEEK_MS if config.retention_ms is None else config.retention_ms,
    ]
    valid = (b for b in [*given, *defaults, *durations] if b is not None and 0 <= b <= INT64_MAX)
    return tuple(sorted(set(valid)))


@dataclass
class Sketch:
    profile: Profile
    real_ms: int
    offsets: list[int]
    topics: dict[str, TopicConfig] = field(default_factory=dict)
    leaders: dict[tuple[str, int], int] = field(default_factory=dict)
    produced: list[int] = field(default_factory=list)
    no_timestamp: int = -1  # the history's missing-timestamp sentinel (KIP-228: -1, or Long.MIN under kip)

    @property
    def brokers(self) -> int:
        return len(self.offsets)

    def partitions(self, topic: str) -> int:
        return max(1, self.topics[topic].partitions)

    def clock(self, topic: str, partition: int) -> int:
        """The leader's wall clock, saturated into int64 so it is a valid ``now``."""
        return clamp(self.real_ms + self.offsets[self.leaders.get((topic, partition), 0)])

    def bounds(self, topic: str) -> tuple[int, ...]:
        return config_bounds(self.topics[topic], self.profile)
