"""A broker that closes the connection on one kind of request it cannot parse: the run completes,
exactly the clauses resting on that request are ``unsupported`` with the probed behaviour as the reason,
and no row is ``error``.

One Apache Kafka broker behind a FaultProxy (suites/broker/faultproxy.py) whose ``refuse`` rule closes the
connection of every matching request, as tansu does on a ListOffsets target it does not know.  ktc is run
as a user would (``ktc run --impl kafka --kafka-bootstrap <proxy>``) on the ListOffsets suite.  The
clauses each refusal must leave unsupported are written here by hand, from the KIPs' version table
(EARLIEST_LOCAL needs ListOffsets v8, KIP-405; LATEST_TIERED v9, KIP-1005), not read from the code
under test.  Measured: 44 s for both cases and the broker's start (2026-11-26, shared 2-core machine).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.launch import QUIET  # noqa: E402
from ktc.kafka.processes import provision, scratch  # noqa: E402
from ktc.suites.broker.faultproxy import FaultProxy, api_key, api_version  # noqa: E402
from ktc.suites.broker.test_faults import ProxiedBroker  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-refused-requests")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
VERSION = os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
LIST_OFFSETS, DESCRIBE_CONFIGS = 2, 32
# The tests whose clauses tell the cases apart: every special target (earliest-local, latest-tiered, an unknown
# negative target, latest, earliest) and MAX_TIMESTAMP (v7, which a broker refusing v8+ still answers).
SELECTED = "special_and_unknown_negative_targets or log_append_time_typed_batch_on_a_create_time_topic"
BROKER_RESOURCE = 4


def broker_describe_configs(frame: bytes) -> bool:
    """DescribeConfigs whose first resource is a broker (v4+: flexible header and compact array)."""
    if api_key(frame) != DESCRIBE_CONFIGS:
        return False
    at = 12  # size, api key, version, correlation id
    at += 2 + max(0, struct.unpack_from(">h", frame, at)[0])  # client id
    if api_version(frame) >= 4:
        at += 1  # the header's tagged fields: none (ktc sends none)
        at += 1  # the resources array's length as one unsigned varint (a handful of resources)
    else:
        at += 4
    return frame[at] == BROKER_RESOURCE


CASES = {
    # refused requests -> the clauses that must be unsupported because of them (by hand, see the docstring)
    "ListOffsets v8+": (
        lambda frame: api_key(frame) == LIST_OFFSETS and api_version(frame) >= 8,
        {"KIP-33.list-offsets-earliest-local", "KIP-33.list-offsets-latest-tiered"},
    ),
    "DescribeConfigs(broker)": (broker_describe_configs, set()),
}


@pytest.fixture(scope="module")
def network():
    """(broker, proxy): the proxy forwards to the broker's proxied listener; Metadata sends clients back to it."""
    data = scratch.make()
    try:
        with FaultProxy() as proxy:
            config = {**QUIET, **({"log.dirs": data} if data is not None else {})}
            with ProxiedBroker(VERSION, proxy.port, config=config) as broker:
                proxy.target = ("127.0.0.1", broker.proxied_port)
                yield broker, proxy
    finally:
        scratch.remove(data)


@pytest.mark.parametrize("case", list(CASES))
def test_a_request_the_broker_refuses_leaves_exactly_its_clauses_unsupported(network, tmp_path, case):
    _broker, proxy = network
    rule, expected = CASES[case]
    proxy.refuse(rule)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ktc",
                "run",
                "--impl",
                "kafka",
                "--kafka-bootstrap",
                proxy.bootstrap,
                "--workers",
                "0",
                "--report",
                str(tmp_path),
                "--",
                "suites/kip33/test_list_offsets.py",
                "-k",
                SELECTED,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            env={**{k: v for k, v in os.environ.items() if k != "KTC_RUN_ID"}, "HYPOTHESIS_PROFILE": "dev"},
        )
    finally:
        proxy.refuse(None)
    print(proc.stderr[-3000:])
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # finished: judged, never refused (2) nor crashed
    doc = json.loads(next(tmp_path.glob("*/results.json")).read_text())
    rows = doc["rows"]
    assert rows and not [r for r in rows if r["verdict"] == "error"], [r["clause"] for r in rows]
    probed = {r["clause"] for r in rows if r["verdict"] == "unsupported" and "probed" in (r.get("reason") or "")}
    assert probed == expected
    if case == "DescribeConfigs(broker)":
        target = doc["provenance"]["targets"][0]
        assert "DescribeConfigs(broker): connection closed" in target["evidence"], target["evidence"]
        assert proxy.refused >= 1
