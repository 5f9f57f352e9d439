"""Hypothesis strategies for Kafka record-timestamp semantics.

``timestamps`` favours the values where timestamp handling breaks (int64 ends, -1, the
validation bounds around a broker clock, overflow); ``records`` and ``batches`` carry them;
``topic_configs`` draws configs a profile accepts; ``histories`` and ``append_histories``
draw whole scenarios for ``reference.run`` and the implementations under test;
``leader_change_histories`` those a cluster of running brokers with fixed clocks can run.
"""

from .configs import topic_configs
from .data import batches, records, timestamps
from .scenarios import append_histories, histories, leader_change_histories

__all__ = [
    "timestamps",
    "records",
    "batches",
    "topic_configs",
    "histories",
    "append_histories",
    "leader_change_histories",
]
