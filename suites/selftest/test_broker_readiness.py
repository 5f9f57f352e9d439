"""A local broker's readiness bound (``LocalBroker.wait_ready``) counts from the last line its JVM logged: a JVM
that still writes its log on a busy machine is slow, not stuck, and is waited for; one whose log stays quiet
for the bound is given up on, with its log's tail."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ktc.kafka.processes.broker import BrokerError, LocalBroker, free_ports

QUIET_S = 1.0
SCRIPT = """
import time
for i in range({lines}):
    with open("console.log", "a") as log:
        log.write(f"line {{i}}\\n")
    time.sleep({every_s})
time.sleep(60)
"""


def broker_logging(tmp_path, lines: int, every_s: float) -> LocalBroker:
    """A LocalBroker whose "JVM" appends a log line every ``every_s`` seconds, ``lines`` times, and never listens."""
    broker = LocalBroker("4.4.0", ready_timeout_s=QUIET_S, ports=(free_ports(1)[0], 0))
    broker.tmpdir = tmp_path
    script = SCRIPT.format(lines=lines, every_s=every_s)
    broker.process = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path)
    return broker


def test_a_broker_that_keeps_logging_past_the_bound_is_waited_for_until_its_log_goes_quiet(tmp_path):
    lines = int(3 * QUIET_S / 0.2)  # it logs for three times the bound
    broker = broker_logging(tmp_path, lines=lines, every_s=0.2)
    try:
        with pytest.raises(BrokerError, match="its log quiet for 1 s") as raised:
            broker.wait_ready()
    finally:
        broker.process.kill()
    assert f"line {lines - 1}" in str(raised.value)  # its last line was logged (and shown) before it was given up


def test_a_broker_whose_log_stays_quiet_is_given_up_on_after_the_bound(tmp_path):
    broker = broker_logging(tmp_path, lines=1, every_s=0.0)
    started = time.monotonic()
    try:
        with pytest.raises(BrokerError, match="did not answer ApiVersions"):
            broker.wait_ready()
    finally:
        broker.process.kill()
    assert time.monotonic() - started < 3 * QUIET_S + 10  # the bound, not the cap of several minutes
