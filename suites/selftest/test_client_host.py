"""The host side of the client-driver contract, without a broker: the driver process (JSON lines, stderr kept,
ended however the host ends it), the int64 rule, the capture proxy's Produce decoder on every request encoding
kafka-python writes, the client targets' names, and a driver that cannot be had being ``unsupported``."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from ktc import implementations
from ktc.implementations.clients.capture import parse_produce
from ktc.implementations.clients.host import Driver, DriverError, from_int64
from ktc.implementations.clients.library import Library, Unavailable
from ktc.implementations.clients.target import ClientImplementation
from ktc.kafka.client import messages
from ktc.kafka.client.records import encode_batch
from ktc.kafka.processes.lifecycle import dead
from ktc.reference.types import Batch, Record

ECHO = (
    "import json, sys\n"
    "print('driver started', file=sys.stderr, flush=True)\n"
    "for line in sys.stdin:\n"
    "    request = json.loads(line)\n"
    "    if request['op'] == 'exit': sys.exit(3)\n"
    "    if request['op'] == 'hang': import time; time.sleep(600)\n"
    "    if request['op'] == 'garbage': print('not json', flush=True); continue\n"
    "    print(json.dumps({'ok': True, 'echo': request}), flush=True)\n"
)


def driver(tmp_path) -> Driver:
    return Driver([sys.executable, "-c", ECHO], log=tmp_path / "driver.log").start()


def test_a_request_is_answered_and_the_drivers_stderr_is_kept(tmp_path):
    with driver(tmp_path) as host:
        answer = host.ask({"op": "hello", "timestamp": "-9223372036854775808"})
        pid = host.process.pid
    assert answer == {"ok": True, "echo": {"op": "hello", "timestamp": "-9223372036854775808"}}
    assert "driver started" in (tmp_path / "driver.log").read_text()
    assert dead(pid), "the driver outlived its host"


@pytest.mark.parametrize("op", ["exit", "hang", "garbage"])
def test_a_driver_that_breaks_the_contract_is_a_one_line_error_and_is_killed(tmp_path, op):
    host = driver(tmp_path)
    pid = host.process.pid
    with pytest.raises(DriverError, match=str(tmp_path / "driver.log")):
        host.ask({"op": op}, timeout_s=2)
    assert host.process is None and dead(pid)


def test_an_int64_as_a_json_number_is_refused():
    assert from_int64("-9223372036854775808") == -(2**63)
    with pytest.raises(DriverError, match="decimal string"):
        from_int64(2**53 + 1)


@pytest.mark.parametrize("version", [3, 8, 9, 12])
def test_the_capture_proxy_decodes_a_produce_request_as_the_client_wrote_it(version):
    batch = Batch((Record(5, None, b"a"), Record(9, None, b"b"), Record(1, None, b"c")), codec="gzip", max_timestamp=-1)
    call = replace(messages.produce("topic-x", encode_batch(batch), partition=2), at=version)
    (sent,) = parse_produce(call.request(7, "client")[4:])
    (decoded,) = sent.batches
    assert (sent.version, sent.topic, sent.partition) == (version, "topic-x", 2)
    assert (decoded.max_timestamp, [r.create_time for r in decoded.records]) == (-1, [5, 9, 1])


def test_client_targets_go_by_library_and_by_library_and_version():
    pinned = implementations.load("client:kafka-python")
    other = implementations.load("client:kafka-python-2.0.2")
    assert (pinned.name, other.name, other.version) == (
        "client-kafka-python-2.3.3",
        "client-kafka-python-2.0.2",
        "2.0.2",
    )
    with pytest.raises(implementations.ImplementationError, match="unknown client library 'nosuch'"):
        implementations.load("client:nosuch-1.0")


def test_a_driver_that_cannot_be_had_makes_every_client_clause_unsupported_with_its_reason():
    def refused(library, version):
        raise Unavailable("no Go toolchain on PATH")

    client = ClientImplementation(Library("gone", "go", "1.0", ("1.0",), refused), "1.0")
    caps = client.capabilities()
    assert "no Go toolchain on PATH" in client.unavailable()
    assert caps.reason_unsupported("KIP-32.client-producer-max-timestamp") == client.unavailable()
    assert caps.profiles == {"client-kip", "client"}


def test_a_rig_that_cannot_start_is_said_once_and_not_retried(monkeypatch):
    from ktc.implementations.clients import target

    starts = []

    def refused(self):
        starts.append(1)
        raise RuntimeError("Kafka 4.4.0 did not answer ApiVersions within 180 s\n--- logs/server.log\n(its tail)")

    monkeypatch.setattr(target.Rig, "start", refused)
    rigs = target.SharedRig()
    for _ in range(2):
        with pytest.raises(Unavailable, match="did not answer ApiVersions within 180 s$"):
            rigs.take()
    assert starts == [1]


def test_a_library_declared_twice_is_refused(monkeypatch):
    from ktc.implementations.clients import libraries

    monkeypatch.setattr(libraries, "other_languages", lambda: (libraries.PYTHON[0],))
    with pytest.raises(ValueError, match="declared twice: kafka-python"):
        libraries.registry()
