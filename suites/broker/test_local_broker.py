"""A real Kafka broker from Maven Central jars: what it answers, and that it always goes away.

Each assertion about time uses only what is known: the broker's
"now" lies in [sent, received] of the request (both read from the same host clock), so every
bound the broker prints or echoes is checked against that interval, never against a guess.

Versions: ``KTC_KAFKA_VERSIONS`` (comma-separated; default the newest 3.9.x).  Cases whose
outcome is the same on 3.9 and 4.x pin the topic configs they depend on.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil", reason="the broker tier needs psutil (pip install psutil)")
pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.client import wire  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.reference.types import INT64_MAX, INT64_MIN, Batch, Record, TimestampType  # noqa: E402
from ktc.suites._support import interruptible  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-local-broker")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
VERSIONS = [
    v.strip() for v in os.environ.get("KTC_KAFKA_VERSIONS", provision.DEFAULT_VERSIONS[0]).split(",") if v.strip()
]
HOUR = 3_600_000
BATCH_MESSAGE = "One or more records have been rejected due to invalid timestamp"
RECORD_MESSAGE = re.compile(
    r"Timestamp (-?\d+) of message with offset (\d+) is out of range\. "
    r"The timestamp should be within \[(-?\d+), (-?\d+)\]"
)
_TOPICS = iter(range(1_000_000))


@pytest.fixture(scope="module", params=VERSIONS)
def broker(request):
    with LocalBroker(request.param) as b:
        yield b


@pytest.fixture
def client(broker):
    with wire.Client(broker.bootstrap) as c:
        yield c


def topic(client, **configs) -> str:
    name = f"t{next(_TOPICS)}"
    code, message = client.create_topic(name, {k.replace("_", "."): v for k, v in configs.items()})
    assert code == 0, (code, message)
    return name


def records(*timestamps: int) -> Batch:
    return Batch(tuple(Record(ts, value=b"v%d" % i) for i, ts in enumerate(timestamps)))


def within(value: int, low: int, high: int) -> bool:
    return low <= value <= high


# ---- KIP-937 on a real broker ----------------------------------------------------------------


def test_one_future_record_rejects_the_whole_batch_with_the_exact_texts(client):
    name = topic(client, message_timestamp_after_max_ms=HOUR)
    future = wire.now_ms() + 2 * HOUR
    out = client.produce(name, records(future, wire.now_ms()))

    assert (out.error_code, out.error_message) == (32, BATCH_MESSAGE)
    assert (out.base_offset, out.log_append_time) == (-1, -1)
    assert [e.batch_index for e in out.record_errors] == [0]
    match = RECORD_MESSAGE.fullmatch(out.record_errors[0].message)
    assert match, out.record_errors[0].message
    ts, offset, low, high = map(int, match.groups())
    assert (ts, offset) == (future, 0)
    # upper bound = now + after; lower bound = now - before, before = Long.MAX (unset on 3.9 and 4.x)
    assert within(high - HOUR, out.sent_ms, out.received_ms), (high, out)
    assert within(low + INT64_MAX, out.sent_ms, out.received_ms), (low, out)
    fetched = client.fetch_all(name)
    assert (fetched.error_code, fetched.high_watermark, fetched.batches) == (0, 0, ())  # nothing appended


# The overflow table's row "before = MAX, after = 1h" (the 4.x default, pinned here so 3.9 agrees):
# Java computes now - ts with wrapping longs, so Long.MIN looks 2^63 - now ms in the *future*.
OVERFLOW_ROW = [
    ("Long.MIN", lambda now: INT64_MIN, 32),
    ("-2", lambda now: -2, 0),
    ("-1 (NO_TIMESTAMP, exempt)", lambda now: -1, 0),
    ("0", lambda now: 0, 0),
    ("now", lambda now: now, 0),
    ("now+2h", lambda now: now + 2 * HOUR, 32),
    ("Long.MAX", lambda now: INT64_MAX, 32),
]


@pytest.mark.parametrize("label,make,expected", OVERFLOW_ROW, ids=[r[0] for r in OVERFLOW_ROW])
def test_overflow_table_row_before_max_after_one_hour(client, label, make, expected):
    name = topic(client, message_timestamp_after_max_ms=HOUR, message_timestamp_before_max_ms=INT64_MAX)
    ts = make(wire.now_ms())
    out = client.produce(name, records(ts))
    assert out.error_code == expected, (label, out)
    if expected:
        assert out.error_message == BATCH_MESSAGE
        assert [e.batch_index for e in out.record_errors] == [0]
        assert RECORD_MESSAGE.fullmatch(out.record_errors[0].message).group(1) == str(ts)
    else:
        assert out.base_offset == 0 and not out.record_errors
        stored = client.fetch_all(name).batches
        assert [r.timestamp for b in stored for r in b.records] == [ts]
        assert stored[0].timestamp_type is TimestampType.CREATE_TIME


# ---- LogAppendTime -----------------------------------------------------------------------------


def test_log_append_time_is_echoed_and_stored_for_every_record(client):
    name = topic(
        client,
        message_timestamp_type="LogAppendTime",
        message_timestamp_after_max_ms=0,
        message_timestamp_before_max_ms=0,
    )
    # no validation under LogAppendTime: even Long.MIN / Long.MAX with zero bounds are appended
    out = client.produce(name, records(5, INT64_MIN, wire.now_ms(), INT64_MAX, -1))
    assert (out.error_code, out.base_offset, out.record_errors) == (0, 0, ())
    assert within(out.log_append_time, out.sent_ms, out.received_ms), out
    (batch,) = client.fetch_all(name).batches
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == out.log_append_time
    assert [r.timestamp for r in batch.records] == [out.log_append_time] * 5
    assert [r.offset for r in batch.records] == [0, 1, 2, 3, 4]


def test_create_time_header_max_is_recomputed_from_the_records(client):
    name = topic(client)
    now = wire.now_ms()
    out = client.produce(name, Batch((Record(now - 10), Record(now - 5)), max_timestamp=now + 10 * HOUR))
    assert out.error_code == 0, out
    (batch,) = client.fetch_all(name).batches
    assert batch.max_timestamp == now - 5  # the broker does not keep a dishonest header max
    assert batch.crc_ok


# ---- ListOffsets -------------------------------------------------------------------------------


def test_list_offsets_latest_earliest_max_and_by_timestamp(client):
    name = topic(client)
    now = wire.now_ms()
    for ts in (now - 3000, now - 1000, now - 2000):  # offsets 0, 1, 2; max timestamp at offset 1
        assert client.produce(name, records(ts)).error_code == 0
    lo = client.list_offsets
    assert (lo(name, wire.LATEST_TIMESTAMP).offset, lo(name, wire.EARLIEST_TIMESTAMP).offset) == (3, 0)
    got = lo(name, wire.MAX_TIMESTAMP)
    assert (got.error_code, got.offset, got.timestamp) == (0, 1, now - 1000)
    # by timestamp: the first offset whose timestamp is >= target, with that record's timestamp
    assert (lo(name, 0).offset, lo(name, 0).timestamp) == (0, now - 3000)
    assert (lo(name, now - 2500).offset, lo(name, now - 2500).timestamp) == (1, now - 1000)
    assert (lo(name, now - 1000).offset, lo(name, now - 1000).timestamp) == (1, now - 1000)
    none = lo(name, now - 999)
    assert (none.error_code, none.offset, none.timestamp) == (0, -1, -1)


def test_describe_configs_reports_the_topic_overrides(client, broker):
    name = topic(client, message_timestamp_after_max_ms=HOUR)
    code, _, entries = client.describe_topic_configs(
        name, ["message.timestamp.after.max.ms", "message.timestamp.before.max.ms"]
    )
    assert code == 0
    assert entries["message.timestamp.after.max.ms"].value == str(HOUR)
    assert entries["message.timestamp.before.max.ms"].value == str(INT64_MAX)
    code, _, entries = client.describe_broker_configs(1, ["log.message.timestamp.after.max.ms"])
    default_after = str(HOUR) if provision.major(broker.version) >= 4 else str(INT64_MAX)  # KIP-1030 in 4.0
    assert (code, entries["log.message.timestamp.after.max.ms"].value) == (0, default_after)


# ---- the client's own encoding ---------------------------------------------------------------


def test_crc32c_implementations_agree():
    assert wire.crc32c_pure(b"123456789") == 0xE3069283  # the CRC-32C check value
    blob = wire.encode_batch(records(INT64_MIN, INT64_MAX, -1, 0))
    assert wire.crc32c(blob[21:]) == wire.crc32c_pure(blob[21:])
    (batch,) = wire.decode_batches(blob)
    assert [r.timestamp for r in batch.records] == [INT64_MIN, INT64_MAX, -1, 0] and batch.crc_ok


# ---- it always goes away -----------------------------------------------------------------------


def ours(tmpdir: Path) -> list[psutil.Process]:
    """Every live process whose command line mentions this broker's temp dir."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(tmpdir) in part for part in proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def port_is_free(port: int) -> bool:
    with socket.socket() as s:  # SO_REUSEADDR: TIME_WAIT leftovers are fine, a listener is not
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
            return True
        except OSError:
            return False


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


def test_leaving_the_context_leaves_no_jvm_port_or_temp_dir():
    with LocalBroker(VERSIONS[0]) as b:
        pid, tmpdir, ports = b.pid, b.tmpdir, (b.port, b.controller_port)
        assert psutil.pid_exists(pid) and tmpdir.exists() and ours(tmpdir)
        print(f"ktc: Kafka {b.version} started in {b.startup_s:.1f} s (jars cached)")  # a measure, not a claim
    assert not psutil.pid_exists(pid)
    assert not tmpdir.exists()
    assert ours(tmpdir) == []
    assert all(port_is_free(p) for p in ports)


def test_the_codecs_native_libraries_are_unpacked_in_the_brokers_folder_and_go_with_it():
    with LocalBroker(VERSIONS[0]) as b, wire.Client(b.bootstrap) as client:
        assert client.create_topic("codecs", {})[0] == 0
        for codec in ("lz4", "snappy"):
            assert client.produce("codecs", Batch((Record(1), Record(2)), codec=codec)).error_code == 0
        unpacked = {f.name for f in (b.tmpdir / "jvm-tmp").iterdir()}
        tmpdir = b.tmpdir
    assert any("lz4" in n for n in unpacked) and any("snappy" in n for n in unpacked), unpacked
    assert not tmpdir.exists()


def test_a_failing_body_still_stops_the_broker():
    with pytest.raises(ZeroDivisionError):
        with LocalBroker(VERSIONS[0]) as b:
            pid, tmpdir = b.pid, b.tmpdir
            1 / 0  # noqa: B018  (raise inside the with block)
    assert not psutil.pid_exists(pid) and not tmpdir.exists() and ours(tmpdir) == []


CHILD = """
import json, sys, time
from ktc.kafka.processes.broker import LocalBroker
with LocalBroker(sys.argv[1]) as b:
    print(json.dumps({"pid": b.pid, "tmpdir": str(b.tmpdir)}), flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_to_the_python_process_leaves_no_jvm(signum):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, VERSIONS[0]],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        preexec_fn=interruptible,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        started = json.loads(line)
        jvm, tmpdir = started["pid"], Path(started["tmpdir"])
        assert psutil.pid_exists(jvm)
        child.send_signal(signum)
        child.wait(timeout=90)  # hang detectors: generous, since a loaded machine is normal
        assert gone_within(jvm, 30), f"JVM {jvm} still alive 30 s after {signum.name} to its Python parent"
        assert ours(tmpdir) == []
        if signum is not signal.SIGKILL:  # SIGKILL runs no Python code: the JVM dies (PDEATHSIG), the dir stays
            assert not tmpdir.exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if "tmpdir" in locals() and tmpdir.exists():
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)


def test_a_start_retried_after_a_taken_port_formats_a_log_dir_it_formatted_before(tmp_path):
    """start() retries once when a freed port was taken before the JVM bound it; the log dirs it formatted then may
    be kept (a scratch dir in /dev/shm is not under the broker's temp dir), so the second format must accept them:
    one cluster id per broker (a CI run's container failed: 'Invalid cluster.id ... Expected X, but read Y')."""
    broker = LocalBroker(VERSIONS[0], config={"log.dirs": tmp_path / "data"})
    broker.open()
    try:
        lib = provision.lib_dir(broker.version)
        for _attempt in range(2):
            broker.port, broker.controller_port = 0, 0
            broker._write_files()
            broker._format(lib)
        assert (tmp_path / "data" / "meta.properties").exists()
    finally:
        broker.stop()
