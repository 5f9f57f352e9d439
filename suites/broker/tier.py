"""The broker tier's switch: it runs only with KTC_BROKER_TESTS=1 or an ``--impl`` naming kafka.

A plug-in of the clone's pytest configuration (the root ``conftest.py``), not a conftest: a conftest under
``suites/`` would be imported by its path, as ``suites.broker.conftest``, beside ``ktc.suites``.

Otherwise every test here is skipped *with the reason*, and the reason is repeated once in the
terminal summary so a run without the tier never looks like a run that passed it.
"""

from __future__ import annotations

import os

import pytest

SKIP_REASON = (
    "broker tier off: set KTC_BROKER_TESTS=1 or pass --impl kafka to start real Kafka brokers "
    "(needs Java 17+ and Maven with access to Maven Central)"
)


def enabled(config: pytest.Config) -> bool:
    if os.environ.get("KTC_BROKER_TESTS", "") not in ("", "0"):
        return True
    impls = config.getoption("impl", None) or []
    return any("kafka" in part for value in impls for part in value.split(","))


def pytest_collection_modifyitems(config, items):
    if enabled(config):
        return
    marker = pytest.mark.skip(reason=SKIP_REASON)
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(marker)


@pytest.fixture(scope="module")
def clocked_kafka():
    """A local broker of the default release that ktc starts on a clock it sets, its log directory read."""
    from ktc.implementations.families.kafka import KAFKA
    from ktc.implementations.kafka.adapter import BrokerAdapter
    from ktc.implementations.kafka.settings import Started
    from ktc.kafka.processes import provision

    impl = BrokerAdapter(KAFKA, Started(provision.DEFAULT_VERSIONS[0], clock="controlled"))
    try:
        impl.address()
        if impl.launcher.log_dir is None:
            pytest.fail(f"the broker ktc started is not on a clock it sets: {impl.launcher.clock_reason}")
        yield impl
    finally:
        impl.close()
