"""The broker tier's switch: it runs only with KTC_BROKER_TESTS=1 or an ``--impl`` naming kafka.

Otherwise every test here is skipped *with the reason*, and the reason is repeated once in the
terminal summary so a run without the tier never looks like a run that passed it.
"""
from __future__ import annotations

import os

import pytest

SKIP_REASON = ("broker tier off: set KTC_BROKER_TESTS=1 or pass --impl kafka to start real Kafka brokers "
               "(needs Java 17+ and Maven with access to Maven Central)")


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


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # counted from the reports, so it works on the xdist controller too
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if SKIP_REASON in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(f"ktc: {len(skipped)} broker-tier tests skipped: {SKIP_REASON}", yellow=True)
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", []):
        for key, line in getattr(report, "user_properties", ()):
            if key == "ktc_broker_throughput" and report.when == "call":  # test_bulk_agreement.py
                terminalreporter.write_line(line)
