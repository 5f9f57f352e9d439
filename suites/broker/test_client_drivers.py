"""The client drivers against a local Apache Kafka: each library's driver (implementations/clients/drivers) is
built into ktc's cache, says hello, creates topics, produces records with explicit timestamps (and none, and
-1), reads them back and looks up offsets, and every answer has the shape implementations/clients/README.md
gives and carries the values back.  A smoke test of the drivers, not the judging of the libraries.

The releases on either side of a fixed consumer bug (drivers/sources.toml) are read back from a LogAppendTime
topic: the last release with the bug hands the application firstTimestamp + delta, the first without it the
batch's LogAppendTime.

A library whose toolchain is missing here is skipped with the launcher's reason.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import select
import subprocess
import tempfile
import time
import tomllib
from importlib import import_module

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.clients.drivers import catalog  # noqa: E402
from ktc.implementations.clients.drivers.build import HERE  # noqa: E402
from ktc.implementations.clients.library import Library, Unavailable  # noqa: E402
from ktc.kafka.client import wire  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.reference.types import Batch, Record  # noqa: E402

ANSWER_S = 120.0  # a hang guard: a driver that answers nothing fails the test instead of stopping the run
_TOPICS = itertools.count()
ERROR_KEYS = {"kind", "code", "retriable", "message", "record"}
BUGS = tomllib.loads((HERE / "sources.toml").read_text())["bug"]
CONSUMER_BUGS = [bug for bug in BUGS if bug["behaviour"].startswith("consumer: a record of a LogAppendTime batch")]


class Driver:
    """One driver process: a JSON line out, a JSON line back."""

    def __init__(self, argv: list[str]):
        self.log = tempfile.TemporaryFile(prefix="ktc-driver-")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def ask(self, request: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        if not select.select([self.process.stdout], [], [], ANSWER_S)[0]:
            pytest.fail(f"the driver answered nothing to {request['op']} within {ANSWER_S:.0f} s: {self.log_tail()}")
        line = self.process.stdout.readline()
        assert line, f"the driver exited ({self.process.poll()}): {self.log_tail()}"
        return json.loads(line)

    def log_tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def launch(library: Library, version: str) -> Driver:
    launcher = library.launcher
    if isinstance(launcher, str):
        module, _, attribute = launcher.partition(":")
        launcher = getattr(import_module(module), attribute)
    try:
        return Driver(launcher(library, version))
    except Unavailable as reason:
        pytest.skip(f"{library.name} {version}: {reason}")


@pytest.fixture(scope="module")
def broker():
    with LocalBroker(provision.DEFAULT_VERSIONS[0]) as b:  # 3.9: the old releases' protocol versions still served
        yield b


@pytest.fixture(scope="module")
def admin(broker):
    with wire.Client(broker.bootstrap) as c:
        yield c


@pytest.fixture(scope="module", params=catalog.LIBRARIES, ids=lambda library: library.name)
def driver(request):
    started = launch(request.param, request.param.default_version)
    yield request.param, started
    started.close()


def new_topic(admin: wire.Client, **configs) -> str:
    name = f"drivers{os.getpid()}x{next(_TOPICS)}"
    # retention.ms=-1: records dated years ago would otherwise be deleted by time retention before they are read
    code, message = admin.create_topic(name, {"retention.ms": -1, **configs})
    assert code == 0, (code, message)
    return name


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def assert_error_shaped(answer: dict) -> None:
    assert answer["ok"] is False and set(answer["error"]) == ERROR_KEYS, answer
    error = answer["error"]
    assert error["kind"] in ("local", "broker", "timeout") and isinstance(error["message"], str), answer
    assert error["code"] is None or isinstance(error["code"], int), answer
    assert error["retriable"] in (None, True, False) and (error["record"] is None or isinstance(error["record"], int))


def int64(text: object) -> int:
    assert isinstance(text, str), f"an int64 travels as a decimal string, not {text!r}"
    return int(text)


def produce(driver: Driver, broker, topic: str, records: list[dict], compression: str = "none") -> dict:
    request = {"op": "produce", "bootstrap": broker.bootstrap, "topic": topic, "partition": "0"}
    return driver.ask({**request, "compression": compression, "records": records, "timeout_ms": 15000})


def consume(driver: Driver, broker, topic: str, count: int, offset: int = 0) -> dict:
    request = {"op": "consume", "bootstrap": broker.bootstrap, "topic": topic, "partition": "0"}
    answer = driver.ask({**request, "offset": str(offset), "count": count, "timeout_ms": 60000})
    assert answer["ok"] is True and len(answer["records"]) == count, (answer, driver.log_tail())
    return answer


def test_hello_names_the_library_its_version_and_language(driver):
    library, started = driver
    answer = started.ask({"op": "hello"})
    assert answer == {"ok": True, "library": library.name, "version": answer["version"], "language": library.language}
    assert answer["version"].lstrip("v") == library.default_version.lstrip("v"), answer


def test_an_unknown_op_is_a_local_error(driver):
    _, started = driver
    answer = started.ask({"op": "no-such-op"})
    assert_error_shaped(answer)
    assert answer["error"]["kind"] == "local" and "no-such-op" in answer["error"]["message"], answer


def test_create_topic_applies_its_configs(driver, broker, admin):
    _, started = driver
    name = f"drivers{os.getpid()}x{next(_TOPICS)}"
    configs = {"message.timestamp.type": "LogAppendTime", "retention.ms": "-1"}
    answer = started.ask(
        {"op": "create_topic", "bootstrap": broker.bootstrap, "topic": name, "partitions": 1, "configs": configs}
    )
    assert answer == {"ok": True}, answer
    code, message, entries = described(admin, name, "message.timestamp.type")
    assert (code, entries["message.timestamp.type"].value) == (0, "LogAppendTime"), (code, message)


def described(admin, topic: str, key: str, patience_s: float = 30.0):
    """DescribeConfigs of ``key``, asked again while the broker does not know the topic yet: a library's CreateTopics
    is answered once the controller has it, which can be before this broker's metadata does (seen with Sarama)."""
    deadline = time.monotonic() + patience_s
    while True:
        code, message, entries = admin.describe_topic_configs(topic, [key])
        if (code == 0 and key in entries) or time.monotonic() > deadline:
            return code, message, entries
        time.sleep(0.05)


def test_records_produced_with_and_without_timestamps_are_read_back(driver, broker, admin):
    library, started = driver
    name = new_topic(admin)
    sent = [
        {"key": b64(b"k0"), "value": b64(b"v0"), "timestamp": "1600000000000", "headers": []},
        {"key": None, "value": b64(b"v1"), "timestamp": "1600000005000", "headers": []},
        {"key": b64(b"k2"), "value": b64(b""), "timestamp": None, "headers": []},
        {"key": b64(b"k3"), "value": None, "timestamp": "1599999999000", "headers": []},
    ]
    produced = produce(started, broker, name, sent)
    assert produced["ok"] is True, produced
    assert [int64(o) for o in produced["offsets"]] == [0, 1, 2, 3], produced
    assert len(produced["timestamps"]) == 4 and all(t is None or int64(t) for t in produced["timestamps"])
    assert int64(produced["sent_ms"]) <= int64(produced["acked_ms"]), produced
    read = consume(started, broker, name, 4)
    assert read["ok"] is True and [int64(r["offset"]) for r in read["records"]] == [0, 1, 2, 3], read
    assert [(r["key"], r["value"]) for r in read["records"]] == [(s["key"], s["value"]) for s in sent], read
    stamps = [int64(r["timestamp"]) for r in read["records"]]
    assert stamps[:2] + stamps[3:] == [1600000000000, 1600000005000, 1599999999000], read
    assert int64(produced["sent_ms"]) <= stamps[2] <= int64(produced["acked_ms"]), (stamps, produced)
    assert {r["timestamp_type"] for r in read["records"]} <= {"CreateTime", None}, read
    tail = consume(started, broker, name, 2, offset=2)  # a seek past the first records
    assert [(int64(r["offset"]), r["key"]) for r in tail["records"]] == [(2, sent[2]["key"]), (3, sent[3]["key"])]


def test_a_gzip_batch_is_read_back(driver, broker, admin):
    _, started = driver
    name = new_topic(admin)
    sent = [
        {"key": None, "value": b64(b"z%d" % i), "timestamp": str(1600000000000 + i), "headers": []} for i in range(3)
    ]
    produced = produce(started, broker, name, sent, compression="gzip")
    assert produced["ok"] is True, produced
    read = consume(started, broker, name, 3)
    assert [(r["value"], int64(r["timestamp"])) for r in read["records"]] == [
        (s["value"], int(s["timestamp"])) for s in sent
    ], read


def test_a_timestamp_of_minus_one_is_sent_or_refused_with_a_shaped_error(driver, broker, admin):
    _, started = driver
    name = new_topic(admin)
    sent = [{"key": None, "value": b64(b"m"), "timestamp": "-1", "headers": []}]
    produced = produce(started, broker, name, sent)
    if not produced["ok"]:
        assert_error_shaped(produced)
        return
    (record,) = consume(started, broker, name, 1)["records"]
    assert (record["offset"], record["value"]) == ("0", sent[0]["value"]), record
    int64(record["timestamp"])


def test_offsets_for_times_finds_the_first_record_at_or_after(driver, broker, admin):
    _, started = driver
    name = new_topic(admin)
    out = admin.produce(name, Batch((Record(1000, value=b"a"), Record(2000, value=b"b"))))
    assert out.error_code == 0, out
    ask = {"op": "offsets_for_times", "bootstrap": broker.bootstrap, "topic": name, "partition": "0"}
    hit = started.ask({**ask, "timestamp": "1500", "timeout_ms": 15000})
    if not hit["ok"]:  # a library with no such lookup says so
        assert_error_shaped(hit)
        assert "unsupported op" in hit["error"]["message"], hit
        return
    assert (hit["found"], int64(hit["offset"])) == (True, 1), hit
    assert hit.get("timestamp") is None or int64(hit["timestamp"]) == 2000, hit
    miss = started.ask({**ask, "timestamp": "3000", "timeout_ms": 15000})
    assert miss["ok"] is True and (miss["found"] is False or isinstance(int64(miss["offset"]), int)), miss


@pytest.mark.parametrize(
    "bug, version",
    [(bug, bug[side]) for bug in CONSUMER_BUGS for side in ("last_with", "first_without")],
    ids=lambda value: value if isinstance(value, str) else value["library"],
)
def test_a_log_append_time_batch_is_read_as_its_sources_say(bug, version, broker, admin):
    """Records at 1000, 5000, 3000 on a LogAppendTime topic: the release with the bug hands the application
    firstTimestamp + delta (the produced times), the release with the fix the batch's LogAppendTime."""
    library = next(lib for lib in catalog.LIBRARIES if lib.name == bug["library"])
    started = launch(library, version)
    try:
        name = new_topic(admin, **{"message.timestamp.type": "LogAppendTime"})
        out = admin.produce(name, Batch(tuple(Record(ts, value=b"r%d" % ts) for ts in (1000, 5000, 3000))))
        assert out.error_code == 0, out
        read = consume(started, broker, name, 3)
        stamps = [int64(r["timestamp"]) for r in read["records"]]
        expected = [1000, 5000, 3000] if version == bug["last_with"] else [out.log_append_time] * 3
        assert stamps == expected, (library.name, version, read, out.log_append_time)
    finally:
        started.close()
