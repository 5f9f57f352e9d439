"""The Apache Kafka brokers ktc starts: ``kafka`` (without --kafka-bootstrap), ``kafka-3.9``, ``kafka-4`` and
``kafka-X.Y.Z`` (that release, from Maven Central), each on loopback on a clock ktc sets
(implementations/kafka/launch.py: ``LocalKafka``), judged under its release line's profile."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from ktc.implementations.families._kafka import KAFKA_CLOCK, KAFKA_VERSION, clock_line, known_release, target_env
from ktc.implementations.kafka.settings import Started
from ktc.implementations.kafka.target import BrokerTarget, ReleaseLine
from ktc.implementations.protocol import Plugin

RELEASE = re.compile(r"^kafka-(\d+\.\d+\.\d+)$")  # kafka-3.7.2: that Apache Kafka release, started locally

# --kafka-version (default $KTC_KAFKA_VERSION), else the newest 3.9.x ktc knows offline
KAFKA = BrokerTarget(
    name="kafka-{version}",
    settings=Started.from_options,
    start="ktc.implementations.kafka.launch:LocalKafka",
    profile=ReleaseLine(),
    kafka_changes=True,
)
KAFKA_3_9 = replace(KAFKA, settings=partial(Started.from_options, newest="3.9"))  # the newest 3.9.x Central lists
KAFKA_4 = replace(KAFKA, settings=partial(Started.from_options, newest="4"))  # the newest 4.x


def serves(spec: str, values) -> bool:
    return (
        spec in ("kafka-3.9", "kafka-4")
        or bool(RELEASE.match(spec))
        or (spec == "kafka" and not values.get("kafka_bootstrap"))
    )


def own_profile(spec: str, values, requested: str) -> None:
    """A release ktc starts is judged under its line's profile (said at the run's end); an unknown one is refused."""
    match = RELEASE.match(spec)
    if match:
        known_release(match.group(1))


def release(match: re.Match) -> BrokerTarget:
    """``kafka-X.Y.Z``: Apache Kafka X.Y.Z from Maven Central, started locally, under its line's profile."""
    return replace(KAFKA, settings=partial(Started.from_options, version=match.group(1)))


PLUGIN = Plugin(
    family="kafka",
    description="Apache Kafka from Maven Central, started by ktc on loopback on a clock ktc sets",
    builtins={"kafka": KAFKA, "kafka-3.9": KAFKA_3_9, "kafka-4": KAFKA_4},
    options=(KAFKA_VERSION, KAFKA_CLOCK),
    serves=serves,
    own_profile=own_profile,
    replay_env=target_env,
    summary=clock_line,
    pattern=RELEASE,
    from_pattern=release,
    pattern_hint="kafka-X.Y.Z for an Apache Kafka release",
)
