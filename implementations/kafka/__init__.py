"""Kafka-compatible brokers under test: the target declarations' parts (target.py, settings.py), their
launchers (launch.py and its kin), the one adapter that judges any of them (adapter.py), its executors
(running.py, cluster_run.py) and the judge they share (judge/).

The adapter (and kafka-python with it) is imported on first use, so the declarations and the pure modules
here (``cluster_histories``: the cluster's clock offsets) import without the broker extra.
"""

import importlib

__all__ = ["BrokerAdapter"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".adapter", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
