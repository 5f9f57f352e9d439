"""TLS and SASL against a real broker: a LocalBroker with a SASL_SSL listener beside its plaintext one.

The listener has a throwaway CA, a server certificate for ``localhost`` / 127.0.0.1, SASL PLAIN and
SCRAM-SHA-256/512 for one user (processes/tls.py).  Every login checks the certificate against the
CA file and the hostname.  What ktc measures must not depend on the transport: the same operations
over plaintext and over TLS + SCRAM give the same error codes, offsets and stored timestamps.

Versions: ``KTC_KAFKA_VERSIONS`` (comma-separated; default the newest 3.9.x).
The properties-file parsing is tested without a broker: suites/selftest/test_security_config.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.client import admin, wire  # noqa: E402
from ktc.kafka.client.connection import Connection  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT, PROPERTIES, AuthenticationError, open_socket  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.reference.types import INT64_MAX, Batch, Record, TimestampType  # noqa: E402
from ktc.suites._support import SMALL_SPARK_CHILD  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-security")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
VERSIONS = [
    v.strip() for v in os.environ.get("KTC_KAFKA_VERSIONS", provision.DEFAULT_VERSIONS[0]).split(",") if v.strip()
]  # KTC_KAFKA_VERSIONS=3.9.2,4.3.1 for both majors (measured: both pass, 13-14 s)
HOUR = 3_600_000
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_TOPICS = iter(range(1_000_000))


@pytest.fixture(scope="module", params=VERSIONS)
def broker(request):
    with LocalBroker(request.param, secure=True) as b:
        yield b


# ---- logging in ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_each_mechanism_logs_in_over_tls_with_the_hostname_checked_against_the_ca_file(broker, mechanism):
    security = broker.client_security(mechanism)
    assert security.ssl_context().check_hostname and security.ca_location
    assert broker.secure_bootstrap.startswith("localhost:")  # a name, as managed clusters have
    started = time.monotonic()
    with wire.Client(broker.secure_bootstrap, security=security, timeout_s=10) as client:
        handshake_s = time.monotonic() - started
        assert client.api_versions()[0] == client.supported_versions()[0]  # Produce is there
        assert client.describe_broker_configs(1, ["log.message.timestamp.type"])[0] == 0  # past authentication
    print(f"ktc: TCP + TLS + SASL {mechanism} in {handshake_s:.2f} s")  # a measure, not a claim: CI is loaded


def test_a_client_certificate_signed_by_the_ca_is_accepted(broker):
    with wire.Client(broker.secure_bootstrap, security=broker.client_security(client_cert=True)) as client:
        assert client.describe_broker_configs(1, ["log.message.timestamp.type"])[0] == 0


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_wrong_password_fails_with_the_brokers_message_on_one_line(broker, mechanism):
    security = dataclasses.replace(broker.client_security(mechanism), password="hunter2")
    with pytest.raises(AuthenticationError) as caught:  # a WireError that no retry mends
        wire.Client(broker.secure_bootstrap, security=security, timeout_s=10)
    message = str(caught.value)
    assert "\n" not in message and "Authentication failed" in message and mechanism in message, message
    assert "hunter2" not in message and isinstance(caught.value, wire.WireError)  # the password is never echoed


def test_a_ca_that_did_not_sign_the_certificate_is_refused(broker):
    security = dataclasses.replace(broker.client_security(), ca_location=str(broker.tls.other_ca))
    with pytest.raises(AuthenticationError) as caught:
        wire.Client(broker.secure_bootstrap, security=security, timeout_s=10)
    message = str(caught.value)
    assert "\n" not in message and "certificate" in message and "ssl.ca.location" in message, message


def test_tls_to_the_plaintext_listener_fails_on_one_line(broker):
    with pytest.raises(wire.WireError, match="TLS handshake") as caught:
        wire.Client(broker.bootstrap, security=broker.client_security(), timeout_s=10)
    assert "\n" not in str(caught.value)


def test_a_pipelined_non_blocking_connection_works_over_tls_and_scram(broker):
    host, _, port = broker.secure_bootstrap.rpartition(":")
    connection = Connection((host, int(port)), 10.0, broker.client_security("SCRAM-SHA-512"))
    answers = []
    try:
        for _ in range(3):  # pipelined: three requests in flight at once
            connection.send(
                admin.api_versions(),
                lambda answer, ms: answers.append(answer),
                lambda maybe, reason: answers.append(reason),
            )
        deadline = time.monotonic() + 10
        while len(answers) < 3 and time.monotonic() < deadline and connection.faulted is None:
            select.select([connection.sock], [connection.sock] if connection.wants_write else [], [], 0.1)
            connection.flush()
            for done, answer, received in connection.receive():
                done(answer, received)
    finally:
        connection.close()
    assert connection.faulted is None and len(answers) == 3 and all(isinstance(a, dict) for a in answers), answers


def test_open_socket_with_explicit_plaintext_ignores_the_environment(broker, tmp_path, monkeypatch):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SSL\n")
    monkeypatch.setenv("KTC_KAFKA_CONFIG", str(config))
    host, _, port = broker.bootstrap.rpartition(":")
    open_socket((host, int(port)), 5.0, PLAINTEXT).close()
    with pytest.raises(wire.WireError, match="TLS handshake"):
        wire.Client(broker.bootstrap, timeout_s=5)  # the default follows $KTC_KAFKA_CONFIG


# ---- the transport does not change what is measured --------------------------------------------


def operations(client: wire.Client, now: int) -> list[tuple]:
    """A fixed set of produces, a fetch of everything and list-offsets, as comparable tuples."""
    name = f"sec{next(_TOPICS)}-{time.monotonic_ns()}"
    code, message = client.create_topic(
        name, {"message.timestamp.after.max.ms": 60_000, "message.timestamp.before.max.ms": INT64_MAX}
    )
    assert code == 0, (code, message)
    out: list[tuple] = []
    for stamps in [(now,), (now + HOUR,), (-1,), (INT64_MAX,), (now - 5, -1, now)]:
        p = client.produce(name, Batch(tuple(Record(ts, value=b"v%d" % i) for i, ts in enumerate(stamps))))
        out.append(
            (
                "produce",
                stamps,
                p.error_code,
                p.error_message,
                p.base_offset,
                p.log_append_time,
                p.log_start_offset,
                tuple(e.batch_index for e in p.record_errors),
            )
        )
    f = client.fetch_all(name)
    out.append(
        (
            "fetch",
            f.error_code,
            f.high_watermark,
            f.log_start_offset,
            tuple(
                (
                    b.base_offset,
                    b.timestamp_type,
                    b.max_timestamp,
                    b.crc_ok,
                    tuple((r.offset, r.timestamp) for r in b.records),
                )
                for b in f.batches
            ),
        )
    )
    for target in (wire.LATEST_TIMESTAMP, wire.EARLIEST_TIMESTAMP, wire.MAX_TIMESTAMP, now - 5, now, now + 1):
        lo = client.list_offsets(name, target)
        out.append(("list_offsets", target, lo.error_code, lo.offset, lo.timestamp))
    return out


def test_plaintext_and_tls_with_scram_give_identical_results(broker):
    now = wire.now_ms()
    with wire.Client(broker.bootstrap, security=PLAINTEXT) as client:
        plain = operations(client, now)
    with wire.Client(broker.secure_bootstrap, security=broker.client_security("SCRAM-SHA-256")) as client:
        secure = operations(client, now)
    assert secure == plain
    assert [row[2] for row in plain[:5]] == [0, 32, 0, 32, 0]  # now, now+1h, -1, Long.MAX, a mixed batch
    fetched = plain[5][4]
    assert [b[0] for b in fetched] == [0, 1, 2] and fetched[0][1] is TimestampType.CREATE_TIME
    assert [r for b in fetched for r in b[4]] == [(0, now), (1, -1), (2, now - 5), (3, -1), (4, now)]


# ---- a whole ktc run over TLS + SCRAM ------------------------------------------------------------


def properties_file(security, path: Path) -> Path:
    """The librdkafka-style file a user would write for ``security``."""
    names = {v: k for k, v in PROPERTIES.items() if k != "sasl.mechanisms"}
    lines = [
        f"{names[f.name]}={getattr(security, f.name)}"
        for f in dataclasses.fields(security)
        if f.name in names and getattr(security, f.name) not in (None, "")
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def ktc_run(bootstrap: str, report: Path, seed: int, *extra: str) -> subprocess.Popen:
    """A ``ktc run`` of validation and lookups on the broker at ``bootstrap``, started (``rows_of`` waits for it)."""
    suites = ["suites/kip937/test_validation.py", "suites/kip33/test_list_offsets.py", f"--hypothesis-seed={seed}"]
    cmd = [sys.executable, "-m", "ktc", "run", "--impl", "kafka", "--kafka-bootstrap", bootstrap, "--workers", "0"]
    cmd += ["--report", str(report), *extra, "--", *suites]
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev"}
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def rows_of(run: subprocess.Popen, report: Path) -> dict:
    _stdout, stderr = run.communicate(timeout=600)
    assert run.returncode in (0, 1), stderr[-3000:]
    rows = json.loads((report / "latest" / "results.json").read_text())["rows"]
    return {
        (r["clause"], r["profile"], tuple(r["tests"])): r["verdict"] for r in rows if r["implementation"] == "kafka"
    }


def test_a_ktc_run_of_validation_and_lookups_over_tls_and_scram_gives_the_verdicts_of_plaintext(broker, tmp_path):
    """The two runs go at once, on one broker, with one seed: as two CI jobs sharing a broker would (each run names
    its topics with its own run id, so neither reads, reconfigures or deletes the other's)."""
    config = properties_file(broker.client_security("SCRAM-SHA-512"), tmp_path / "client.properties")
    plain_run = ktc_run(broker.bootstrap, tmp_path / "plain", 20261123)  # both at once, on one broker
    secure_run = ktc_run(broker.secure_bootstrap, tmp_path / "tls", 20261123, "--kafka-config", str(config))
    try:
        plain, secure = rows_of(plain_run, tmp_path / "plain"), rows_of(secure_run, tmp_path / "tls")
    finally:
        for run in (plain_run, secure_run):
            if run.poll() is None:  # SIGTERM: the run's own handlers stop what it started
                run.terminate()
                run.wait(timeout=60)
    decided = {k for k in plain if plain[k] in ("pass", "fail") and secure.get(k) in ("pass", "fail")}
    print(
        f"{len(plain)} rows; {len(decided)} decided on both transports; "
        f"{sum(plain[k] != secure.get(k) for k in plain)} differ"
    )
    assert plain.keys() == secure.keys() and decided
    differing = {k: (plain[k], secure[k]) for k in decided if plain[k] != secure[k]}
    assert not differing, f"verdicts differ (plaintext, TLS): {differing}"


def test_ktc_audit_reads_a_topic_over_tls_and_scram_with_spark_s_kafka_source(broker, tmp_path):
    """``ktc audit --kafka-config``: ktc's client and Spark's Kafka source (kafka.* options) log in alike."""
    pytest.importorskip("pyspark", reason="ktc audit needs the spark extra (pip install 'ktc[spark]')")
    security = broker.client_security("SCRAM-SHA-512")
    topic, now = f"ktc-audit-tls-{next(_TOPICS)}", wire.now_ms()
    with wire.Client(broker.secure_bootstrap, security=security) as client:
        assert client.create_topic(topic, {"message.timestamp.after.max.ms": INT64_MAX})[0] == 0
        assert client.produce(topic, Batch((Record(now), Record(now + 2 * HOUR), Record(-1)))).error_code == 0
        assert client.call(admin.alter_topic_config(topic, "message.timestamp.after.max.ms", HOUR))[0] == 0
    config = properties_file(security, tmp_path / "client.properties")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ktc",
            "audit",
            "--kafka-bootstrap",
            broker.secure_bootstrap,
            "--kafka-config",
            str(config),
            "--topic",
            topic,
            "--source",
            "kafka",
            "--report",
            str(tmp_path / "report"),
            "--seed",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **SMALL_SPARK_CHILD},
    )
    reports = list((tmp_path / "report").glob("*/audit.json"))
    assert reports, done.stdout[-2000:] + done.stderr[-3000:]
    data = json.loads(reports[0].read_text())
    rows = {r["check"]: r for r in data["topics"][0]["rows"]}
    assert data["topics"][0]["source"] == "Spark's Kafka source" and data["topics"][0]["records"] == 3
    assert (rows["create-time-within-after-bound"]["violating"], rows["no-timestamp-records"]["violating"]) == (1, 1)
    assert rows["list-offsets-by-timestamp"]["verdict"] == "pass"
