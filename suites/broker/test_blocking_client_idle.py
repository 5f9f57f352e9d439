"""The blocking client (setup, discovery, the cluster's executor) outlives a broker reaping it.

A broker closes a connection idle for ``connections.max.idle.ms``; the next request on it would
break.  ``wire.Client`` notices the close before sending and opens a new connection.
"""

from __future__ import annotations

import select
import time

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.client import wire  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-blocking-client-idle")  # the module on one worker: its fixtures once
IDLE_MS = 1500


def closed_by_broker(client: wire.Client, timeout_s: float = 60.0) -> float:
    """Seconds until the broker closed the idle connection (observed: the socket turns readable)."""
    start = time.monotonic()
    while not select.select([client.sock], [], [], 0.1)[0]:
        assert time.monotonic() - start < timeout_s, "the broker never reaped the idle connection"
    return time.monotonic() - start


def test_a_request_after_the_broker_reaped_the_idle_connection_goes_out_on_a_new_one():
    with LocalBroker(provision.DEFAULT_VERSIONS[0], config={"connections.max.idle.ms": IDLE_MS}) as broker:
        with wire.Client(broker.bootstrap) as client:
            client.api_versions()
            first = client.sock
            waited = closed_by_broker(client)
            print(f"reaped after {waited:.1f} s idle (connections.max.idle.ms={IDLE_MS})")
            assert client.api_versions() and client.sock is not first
