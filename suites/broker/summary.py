"""The broker tier's lines in the terminal summary: why it was skipped, and its measured throughput.

A plugin registered in the root conftest.py (not a hook of suites/broker/conftest.py): under
pytest-xdist the controller collects nothing, so it never loads that conftest, and a summary
hook there would print only in runs without workers.
"""

from __future__ import annotations

from ktc.suites.broker.tier import SKIP_REASON

THROUGHPUT = "ktc_broker_throughput"  # the user property test_bulk_agreement.py records


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # counted from the reports, so it works on the xdist controller too
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIP_REASON in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(f"ktc: {len(skipped)} broker-tier tests skipped: {SKIP_REASON}", yellow=True)
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", []):
        for key, line in getattr(report, "user_properties", ()):
            if key == THROUGHPUT and report.when == "call":  # test_bulk_agreement.py
                terminalreporter.write_line(line)
