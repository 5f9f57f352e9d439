"""The suites' order: the tests that watch a broker's retention run last in each target's share of the run.

Apache Kafka before 3.8 runs its first retention pass 30 s after it starts (``log.initial.task.delay.ms``
came in 3.8; ktc sets it to 0 where it exists), and a history with a RetentionPass waits for that pass.
Run first, that wait was most of kafka-3.7.2's time in ``./run conformance``; run last, the target's other
tests fill it.  Nothing else depends on the order: each test judges its own histories.
"""
from __future__ import annotations

RETENTION_WATCHERS = ("suites/kip32/test_segments.py", "suites/kip870/")


def watches_retention(nodeid: str) -> bool:
    return nodeid.startswith(RETENTION_WATCHERS)


def pytest_collection_modifyitems(items: list) -> None:
    items.sort(key=lambda item: watches_retention(item.nodeid))  # stable: the rest keep their order
