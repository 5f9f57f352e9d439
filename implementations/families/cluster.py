"""``kafka-cluster``: three KRaft nodes with skewed clocks, for leader changes
(implementations/kafka/cluster_adapter.py)."""
from __future__ import annotations

from ktc.implementations.families._kafka import KAFKA_VERSION, target_env
from ktc.implementations.protocol import Plugin

PLUGIN = Plugin(
    family="cluster",
    description="a 3-node Apache Kafka cluster ktc starts, clocks skewed with libfaketime, for leader changes",
    builtins={"kafka-cluster": "ktc.implementations.kafka.cluster_adapter:kafka_cluster"},
    options=(KAFKA_VERSION,), replay_env=target_env,
)
