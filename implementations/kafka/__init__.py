"""Real Apache Kafka brokers under test (issue 4): provisioning, a local KRaft broker, a wire client,
and the ``kafka`` implementation that runs histories on a broker (adapter.py)."""
from .adapter import KafkaImplementation, kafka_3_9, kafka_4

__all__ = ["KafkaImplementation", "kafka_3_9", "kafka_4"]
