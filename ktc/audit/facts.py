"""What an audit judges stored data against: the topic's configs, the profile, and the read time.

A record's append time is not stored for CreateTime data, but it is bounded: no record read was
appended after the read finished (``read_ms``, ktc's clock, plus ``skew_ms`` for a broker clock
that runs ahead).  That bound is what makes the after-bound and the LogAppendTime checks decidable.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktc.specs.profiles import get as get_profile

LONG_MAX = 2**63 - 1
TYPE = "message.timestamp.type"
BEFORE = "message.timestamp.before.max.ms"
AFTER = "message.timestamp.after.max.ms"
DIFFERENCE = "message.timestamp.difference.max.ms"
COMPRESSION = "compression.type"
CONFIG_KEYS = (TYPE, BEFORE, AFTER, DIFFERENCE, COMPRESSION)
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")


class FactsError(ValueError):
    """A topic config the audit cannot read: names the key and the value."""


@dataclass(frozen=True)
class TopicFacts:
    topic: str
    timestamp_type: str  # the topic's message.timestamp.type now
    before_max_ms: int | None
    after_max_ms: int | None
    difference_max_ms: int | None  # None where the broker has no such config (Kafka 4)
    compression_type: str
    profile: str
    read_ms: int | None = None  # ktc's clock when the read finished (None: unknown)
    skew_ms: int = 0

    @property
    def sentinel(self) -> int:
        return -1

    def window(self) -> tuple[int, int]:
        """The effective (before, after) bounds under the profile: defaults, abs-difference, Long.MAX fallback."""
        p = get_profile(self.profile)
        difference = LONG_MAX if self.difference_max_ms is None else self.difference_max_ms
        if p.validation == "abs-difference":
            return difference, difference
        before = p.default_before_max_ms if self.before_max_ms is None else self.before_max_ms
        after = p.default_after_max_ms if self.after_max_ms is None else self.after_max_ms
        fallback = (lambda v: difference if v == LONG_MAX else v) if p.long_max_fallback else (lambda v: v)
        return fallback(before), fallback(after)

    def latest_append_ms(self) -> int | None:
        """No record read was appended after this instant (on the broker's clock)."""
        return None if self.read_ms is None else self.read_ms + self.skew_ms


def facts_from_configs(topic: str, configs: dict[str, str | None], profile: str, **more) -> TopicFacts:
    """TopicFacts from DescribeConfigs values (or ``--config KEY=VALUE``), validated."""
    kind = configs.get(TYPE) or "CreateTime"
    if kind not in TIMESTAMP_TYPES:
        raise FactsError(f"{TYPE}={kind!r} for topic {topic!r}: expected CreateTime or LogAppendTime")
    return TopicFacts(
        topic,
        kind,
        _ms(configs, BEFORE),
        _ms(configs, AFTER),
        _ms(configs, DIFFERENCE),
        configs.get(COMPRESSION) or "producer",
        profile,
        **more,
    )


def _ms(configs: dict[str, str | None], key: str) -> int | None:
    value = configs.get(key)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise FactsError(f"{key}={value!r}: expected a whole number of milliseconds") from None
    if number < 0:
        raise FactsError(f"{key}={value!r}: must not be negative")
    return number
