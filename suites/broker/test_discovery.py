"""Which Kafka is this: found by asking the brokers that Metadata reports, never an assumed id 1.

Kafka 4.x started with ``node.id=0``, a 3-node cluster asked through each of its nodes (the KRaft
controller is whichever node won the election), and ``--profile`` on a broker ktc did not start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.client import wire  # noqa: E402
from ktc.kafka.discovery import discover  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.kafka.processes.cluster import LocalCluster  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-discovery")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
OLD, NEW = provision.newest("3.9"), provision.newest("4")


def found_through(bootstrap: str):
    with wire.Client(bootstrap) as client:
        return discover(client)


def test_kafka_4_started_with_node_id_0_is_placed_as_kafka_4_by_broker_0():
    with LocalBroker(NEW, node_id=0) as broker:
        found = found_through(broker.bootstrap)
    print(found.describe())
    assert (found.profile, found.node, sorted(found.brokers)) == ("kafka-4", 0, [0])
    assert "after.max.ms=3600000" in found.evidence and "on broker 0 " in found.evidence


def test_each_node_of_a_cluster_is_placed_by_its_own_id_whoever_is_controller():
    with LocalCluster(OLD, offsets_s=(0, 0, 0), verify=False) as cluster:
        seen = [found_through(node.bootstrap) for node in cluster.nodes]
    for index, found in enumerate(seen):
        print(found.describe())
        assert (found.profile, found.node, sorted(found.brokers)) == ("kafka-3.9", index + 1, [1, 2, 3])
    print("controllers as each node reported them:", [found.controller for found in seen])


def test_profile_given_on_the_command_line_wins_over_detection_on_an_external_broker(tmp_path):
    # -k, not the file's path: ktc run collects every suite and pytest adds a path to them (the whole suite ran)
    with LocalBroker(OLD) as broker:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ktc",
                "run",
                "--impl",
                "kafka",
                "--kafka-bootstrap",
                broker.bootstrap,
                "--profile",
                "kafka-4",
                "--workers",
                "0",
                "--report",
                str(tmp_path),
                "--",
                "-k",
                "test_validation",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "HYPOTHESIS_PROFILE": "dev"},
            timeout=600,
        )
    data = json.loads((tmp_path / "latest" / "results.json").read_text())
    targets = data["provenance"]["targets"]
    rows = [r for r in data["rows"] if r["implementation"] == "kafka" and r["profile"] == "kafka-4"]
    assert "judged as kafka-4 (given with --profile)" in proc.stderr, proc.stderr[-2000:]
    assert targets[0]["profile"] == "kafka-4" and targets[0]["requested_profile"] == "kafka-4"
    assert any(r["verdict"] in ("pass", "fail") for r in rows), [r["verdict"] for r in rows]
