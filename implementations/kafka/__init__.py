"""Real Apache Kafka brokers under test: provisioning, a local KRaft broker, a wire client,
and the ``kafka`` implementation that runs histories on a broker (adapter.py).

The adapter (and kafka-python with it) is imported on first use, so the pure modules here
(``cluster_histories``: the cluster's clock offsets) import without the broker extra.
"""
import importlib

__all__ = ["KafkaImplementation", "kafka_3_9", "kafka_4"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".adapter", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
