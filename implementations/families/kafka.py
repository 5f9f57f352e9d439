"""The Apache Kafka brokers ktc starts: ``kafka`` (without --kafka-bootstrap), ``kafka-3.9``, ``kafka-4`` and
``kafka-X.Y.Z`` (that release, from Maven Central) -- implementations/kafka/adapter.py."""
from __future__ import annotations

import re

from ktc.implementations.families._kafka import KAFKA_CLOCK, KAFKA_VERSION, clock_line, known_release, target_env
from ktc.implementations.protocol import Plugin

RELEASE = re.compile(r"^kafka-(\d+\.\d+\.\d+)$")  # kafka-3.7.2: that Apache Kafka release, started locally


def serves(spec: str, values) -> bool:
    return spec in ("kafka-3.9", "kafka-4") or bool(RELEASE.match(spec)) or (
        spec == "kafka" and not values.get("kafka_bootstrap"))


def own_profile(spec: str, values, requested: str) -> None:
    """A release ktc starts is judged under its line's profile (said at the run's end); an unknown one is refused."""
    match = RELEASE.match(spec)
    if match:
        known_release(match.group(1))


def release(match: re.Match):
    """``kafka-X.Y.Z``: Apache Kafka X.Y.Z from Maven Central, started locally, under its line's profile."""
    from ktc.implementations.kafka import KafkaImplementation
    return KafkaImplementation(match.group(1), bootstrap="")


PLUGIN = Plugin(
    family="kafka",
    description="Apache Kafka from Maven Central, started by ktc on loopback on a clock ktc sets",
    builtins={"kafka": "ktc.implementations.kafka:KafkaImplementation",  # KTC_KAFKA_VERSION, or --kafka-version
              "kafka-3.9": "ktc.implementations.kafka:kafka_3_9", "kafka-4": "ktc.implementations.kafka:kafka_4"},
    options=(KAFKA_VERSION, KAFKA_CLOCK), serves=serves, own_profile=own_profile, replay_env=target_env,
    summary=clock_line, pattern=RELEASE, from_pattern=release, pattern_hint="kafka-X.Y.Z for an Apache Kafka release",
)
