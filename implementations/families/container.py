"""``kafka-container``: the apache/kafka image under testcontainers (implementations/kafka/container.py)."""
from __future__ import annotations

from implementations.families._kafka import KAFKA_VERSION, clock_line, target_env
from implementations.protocol import Plugin

PLUGIN = Plugin(
    family="container",
    description="the apache/kafka image under testcontainers (needs a Docker engine)",
    builtins={"kafka-container": "implementations.kafka.container:KafkaContainerImplementation"},
    options=(KAFKA_VERSION,), replay_env=target_env, summary=clock_line,
)
