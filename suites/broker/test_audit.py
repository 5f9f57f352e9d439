"""``ktc audit`` end to end: plant known-bad data on a local broker with ktc's own client, then audit.

The broker runs on a clock ktc sets (processes/clock.py), so LogAppendTime can be made to go
backwards or run ahead on purpose.  Each planted record is known by its offset from the
ProduceResponse; the audit must report exactly those, per check, and nothing on a clean topic --
through Spark's own Kafka source, and through ktc's client when Spark's Kafka connector cannot be
resolved (the leader-change test reads with ``--source ktc``).  Runs the real CLI in a child process, as a
user would.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict

import pytest

pytest.importorskip("psutil", reason="the broker tier needs psutil (pip install psutil)")
pytest.importorskip("pyspark", reason="ktc audit needs the spark extra (pip install 'ktc[spark]')")

from ktc.implementations.kafka.judge.clocked import Echo  # noqa: E402
from ktc.kafka.client import admin, wire  # noqa: E402
from ktc.kafka.processes import clock_shim, provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402
from ktc.kafka.processes.clock import ControlledClock  # noqa: E402
from ktc.kafka.topics import TopicNamer  # noqa: E402
from ktc.reference.types import Batch, Record  # noqa: E402
from ktc.suites._support import SMALL_SPARK_CHILD  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-audit")  # the module on one worker: its fixtures once
HOUR, MINUTE, LONG_MAX = 3_600_000, 60_000, 2**63 - 1
ANCHOR = wire.now_ms() - 10 * MINUTE  # the broker's clock, frozen behind the host's: appends precede any read


class Planted:
    """What was produced, and which offsets each check must report."""

    def __init__(self, client):
        self.client = client
        self.expected: dict[str, set] = defaultdict(set)
        self.stamps: dict[tuple, int] = {}  # (topic, partition, offset) -> the timestamp produced

    def produce(
        self,
        topic: str,
        stamps,
        partition: int = 0,
        plant: str | None = None,
        which=None,
        if_create_time: str | None = None,
    ) -> None:
        """``plant``: the check that must report these records (``which`` of them); ``if_create_time``: the one that
        must report them when the broker stored them as CreateTime (its answer carries no LogAppendTime)."""
        out = self.client.produce(topic, Batch(tuple(Record(t) for t in stamps)), partition=partition)
        assert out.error_code == 0, out
        plant = if_create_time if if_create_time and out.log_append_time == -1 else plant
        for i, t in enumerate(stamps):
            self.stamps[(topic, partition, out.base_offset + i)] = t
            if plant and (which is None or which(t)):
                self.expected[plant].add((topic, partition, out.base_offset + i))

    def create(self, topic: str, partitions: int = 1, **configs) -> None:
        code, message = self.client.create_topic(topic, configs, partitions=partitions)
        assert code == 0, message

    def alter(self, topic: str, key: str, value) -> None:
        """IncrementalAlterConfigs, then DescribeConfigs until the broker reads the new value (it answers the
        alter when the controller has it, which can be before the broker applies it)."""
        assert self.client.call(admin.alter_topic_config(topic, key, value))[0] == 0
        deadline = time.monotonic() + 30
        while self.client.describe_topic_configs(topic, [key])[2][key].value != str(value):
            assert time.monotonic() < deadline, f"{topic}: {key} never read {value}"
            time.sleep(0.05)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    clock = ControlledClock(clock_shim.build(), directory=tmp_path_factory.mktemp("clock"), start_ms=ANCHOR)
    try:
        with LocalBroker(provision.DEFAULT_VERSIONS[0], clock=clock) as broker, wire.Client(broker.bootstrap) as client:
            clock.observe = Echo(client, TopicNamer())
            plan = Planted(client)
            plant_all(plan, clock)
            yield broker, plan
    finally:
        clock.remove()


def plant_all(plan: Planted, clock) -> None:
    clock.set(ANCHOR)
    loose_then_tightened(plan)
    became_log_append_time(plan, clock)
    clean(plan)
    nanoseconds(plan)


def loose_then_tightened(plan: Planted) -> None:
    """Future timestamps accepted while after.max.ms was Long.MAX, then the bound tightened to an hour."""
    plan.create("audit-loosened", partitions=2, **{"message.timestamp.after.max.ms": LONG_MAX})
    future = lambda t: t > ANCHOR + HOUR
    for p in (0, 1):
        plan.produce("audit-loosened", [ANCHOR - MINUTE, ANCHOR, ANCHOR + 2 * HOUR], p, "after", future)
        plan.produce("audit-loosened", [ANCHOR + HOUR, -1, ANCHOR + 30 * MINUTE], p, "after", future)
        plan.produce("audit-loosened", [-5, ANCHOR + 7 * 24 * HOUR], p, "after", future)
    plan.alter("audit-loosened", "message.timestamp.after.max.ms", HOUR)


def became_log_append_time(plan: Planted, clock) -> None:
    """CreateTime data, then the topic turned LogAppendTime; the broker's clock stepped back, then ahead."""
    topic = "audit-became-lat"
    plan.create(topic)
    plan.produce(topic, [ANCHOR - MINUTE, ANCHOR], plant="type")
    plan.alter(topic, "message.timestamp.type", "LogAppendTime")
    plan.produce(topic, [1, 2, 3], if_create_time="type")  # a broker slow to apply the change stores them CreateTime
    clock.set(ANCHOR - MINUTE)
    plan.produce(topic, [4, 5], plant="backwards")
    clock.set(ANCHOR + MINUTE)
    plan.produce(topic, [6])
    clock.set(wire.now_ms() + HOUR)
    plan.produce(topic, [7, 8], plant="ahead")
    clock.set(ANCHOR)


def clean(plan: Planted) -> None:
    plan.create("audit-clean", partitions=2, **{"message.timestamp.after.max.ms": HOUR})
    for p in (0, 1):
        plan.produce("audit-clean", [ANCHOR - 5 * MINUTE, ANCHOR - MINUTE, ANCHOR], p)
        plan.produce("audit-clean", [ANCHOR + 59 * MINUTE, ANCHOR + HOUR], p)


def nanoseconds(plan: Planted) -> None:
    """A timestamp in nanoseconds where milliseconds belong: Spark's Kafka source cannot hold it."""
    plan.create("audit-nanoseconds", **{"message.timestamp.after.max.ms": LONG_MAX})
    plan.produce("audit-nanoseconds", [ANCHOR, ANCHOR * 1_000_000], plant="after", which=lambda t: t > ANCHOR + HOUR)
    plan.alter("audit-nanoseconds", "message.timestamp.after.max.ms", HOUR)


CHECKS = {
    "after": "create-time-within-after-bound",
    "type": "timestamp-type-matches-config",
    "backwards": "log-append-time-never-backwards",
    "ahead": "log-append-time-not-after-read",
}
NOTICES = {"no-timestamp-records": lambda t: t == -1, "negative-timestamps": lambda t: t < -1}
TOPICS = ["audit-loosened", "audit-became-lat", "audit-clean", "audit-nanoseconds"]


NO_CONNECTOR = "org.example:ktc-no-such-connector_2.13:0.0.1"


SOURCES = ("kafka", "kafka-without-connector")


@pytest.fixture(scope="module")
def audits(planted, tmp_path_factory):
    """Both ``ktc audit --source kafka`` children over every planted topic, started at once (each starts its own
    Spark; the one without a connector also waits on Ivy): per source, (exit code, report folder, stderr).
    ``kafka-without-connector``: Spark's Kafka connector cannot be resolved (an unknown coordinate, an empty
    cache), so ktc's own client reads every topic; the same records must be found."""
    broker, _plan = planted
    if shutil.which("java") is None:
        pytest.fail("ktc audit runs Spark: it needs Java 17")
    children = {source: audit_child(broker.bootstrap, source, tmp_path_factory) for source in SOURCES}
    done = {}
    try:
        for source, (child, report) in children.items():
            stdout, stderr = child.communicate(timeout=600)
            done[source] = (child.returncode, report, stdout, stderr)
    finally:
        for child, _report in children.values():
            if child.poll() is None:  # a timeout or an interrupt: the child's process group, its JVMs with it
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
    return done


def audit_child(bootstrap: str, source: str, tmp_path_factory) -> tuple[subprocess.Popen, object]:
    report = tmp_path_factory.mktemp(f"audit-{source}")
    env = {**os.environ, **SMALL_SPARK_CHILD}
    if source == "kafka-without-connector":
        env.update(KTC_CACHE=str(tmp_path_factory.mktemp("cache")), KTC_SPARK_KAFKA_PACKAGE=NO_CONNECTOR)
    topics = [a for t in TOPICS for a in ("--topic", t)]
    cmd = [sys.executable, "-m", "ktc", "audit", "--kafka-bootstrap", bootstrap, "--source", "kafka"]
    cmd += ["--report", str(report), "--seed", "7", *topics]
    child = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    return child, report


@pytest.fixture(scope="module", params=SOURCES)
def audited(planted, audits, request):
    """One source's audit: (plan, exit code, audit.json, violations, stderr)."""
    _broker, plan = planted
    code, report, stdout, stderr = audits[request.param]
    reports = list(report.glob("*/audit.json"))
    assert reports, f"no report; exit {code}\n{stdout[-3000:]}\n{stderr[-3000:]}"
    data = json.loads(reports[0].read_text())
    return plan, code, data, found_offsets(reports[0].parent / "violations.parquet"), stderr


def found_offsets(path) -> dict[str, set]:
    import pyarrow.parquet as pq

    table = pq.read_table(path).to_pydict() if path.exists() else {"check": []}
    out = defaultdict(set)
    for i, check in enumerate(table["check"]):
        out[check].add((table["topic"][i], table["partition"][i], table["offset"][i]))
    return out


def rows_of(data: dict, topic: str) -> dict[str, dict]:
    return {r["check"]: r for t in data["topics"] if t["topic"] == topic for r in t["rows"]}


def test_audit_finds_every_planted_record_and_no_other(audited):
    plan, code, data, found, _stderr = audited
    print(
        f"\nktc audit ({data['source']}): planted/found "
        + ", ".join(f"{check} {len(plan.expected[name])}/{len(found[check])}" for name, check in CHECKS.items())
    )
    for name, check in CHECKS.items():
        assert found[check] == plan.expected[name], f"{check}: found {sorted(found[check])}"
    for notice, produced in NOTICES.items():
        assert found[notice] == {key for key, t in plan.stamps.items() if produced(t)}, notice
    unplanned = set(found) - set(CHECKS.values()) - set(NOTICES)
    assert not unplanned, f"violations of checks nothing was planted for: {sorted(unplanned)}"
    assert code == 1, "a failing check the profile promises (the timestamp type) makes the exit code 1"


def test_audit_of_a_clean_topic_reports_zero_everywhere(audited):
    _plan, _code, data, found, _stderr = audited
    rows = rows_of(data, "audit-clean")
    assert not {c for c, offsets in found.items() if any(t == "audit-clean" for t, _, _ in offsets)}
    assert all(r["violating"] in (0, None) for r in rows.values()), rows
    assert rows["list-offsets-by-timestamp"]["verdict"] == "pass" and rows["list-offsets-by-timestamp"]["checked"] > 0


def test_every_sampled_list_offsets_answer_agrees_with_the_stored_records(audited):
    _plan, _code, data, _found, _stderr = audited
    probes = [rows_of(data, t)["list-offsets-by-timestamp"] for t in TOPICS]
    assert all(p["verdict"] == "pass" for p in probes), probes
    assert sum(p["checked"] for p in probes) >= 10


def test_a_nanosecond_timestamp_spark_cannot_read_is_read_by_ktc_instead(audited, request):
    _plan, _code, data, _found, _stderr = audited
    source = next(t["source"] for t in data["topics"] if t["topic"] == "audit-nanoseconds")
    assert source.startswith("ktc (Spark's Kafka source could not read it: "), source
    if request.node.callspec.params["audited"] == "kafka":
        assert "audit-nanoseconds" in source and "overflows" in source, source


def test_a_kafka_connector_that_cannot_be_resolved_falls_back_to_ktc_s_client(audited, request):
    """Spark's Kafka source without its jars: one line says so, ktc's client reads every topic, the audit is
    whole (the findings are checked by the tests above); no traceback."""
    _plan, code, data, _found, stderr = audited
    if request.node.callspec.params["audited"] != "kafka-without-connector":
        assert all(t["source"] == "Spark's Kafka source" for t in data["topics"] if t["topic"] != "audit-nanoseconds")
        return
    assert "Traceback" not in stderr and code == 1, stderr[-2000:]
    said = [line for line in stderr.splitlines() if "Spark's Kafka source is unavailable" in line]
    assert len(said) == 1 and f"could not resolve {NO_CONNECTOR}" in said[0], stderr
    fallback = "ktc (Spark's Kafka source could not read it: Spark's Ivy could not resolve"
    assert all(t["source"].startswith(fallback) for t in data["topics"]), [t["source"] for t in data["topics"]]


def test_no_java_with_the_kafka_source_is_one_line_and_exit_2(planted, tmp_path):
    """Without Java neither the connector nor Spark can be had: the one line says Spark could not start
    (no line about a fallback that cannot happen, no traceback)."""
    broker, _plan = planted
    env = {
        **os.environ,
        "KTC_CACHE": str(tmp_path / "cache"),
        "JAVA_HOME": str(tmp_path / "no-such-jdk"),
        "TMPDIR": str(tmp_path),
    }  # the kept log of the failed start goes there
    cmd = [
        sys.executable,
        "-m",
        "ktc",
        "audit",
        "--kafka-bootstrap",
        broker.bootstrap,
        "--source",
        "kafka",
        "--topic",
        "audit-clean",
        "--report",
        str(tmp_path / "report"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 2, f"exit {done.returncode}\n{done.stderr[-2000:]}"
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("ktc: error: Spark could not start: ") and "no-such-jdk/bin/java" in done.stderr


# ---- a real leader change on skewed clocks ---------------------------------------------------------


def test_audit_sees_log_append_time_go_backwards_across_a_leader_change(tmp_path):
    """The 3-node cluster (libfaketime offsets +150 s / -150 s): records appended by the fast leader are
    ahead of the read; after it halts, the slow leader's LogAppendTime lies behind them, in a new epoch."""
    from ktc.implementations.kafka.cluster_histories import fastest_then_slowest
    from ktc.kafka.processes.cluster import LocalCluster

    with LocalCluster(provision.DEFAULT_VERSIONS[0]) as cluster:
        fast, slow, _ = assignment = fastest_then_slowest(cluster.offsets_s)
        cluster.create_topic(
            "audit-leader-change", [assignment], {"message.timestamp.type": "LogAppendTime", "min.insync.replicas": 2}
        )
        first = cluster.client(fast).produce("audit-leader-change", Batch((Record(1), Record(2), Record(3))))
        cluster.halt(fast)
        cluster.wait_leader("audit-leader-change", 0, slow)
        second = cluster.client(slow).produce("audit-leader-change", Batch((Record(4), Record(5))))
        assert (first.error_code, second.error_code) == (0, 0)
        cmd = [
            sys.executable,
            "-m",
            "ktc",
            "audit",
            "--kafka-bootstrap",
            cluster.nodes[slow].bootstrap,
            "--source",
            "ktc",
            "--topic",
            "audit-leader-change",
            "--report",
            str(tmp_path),
            "--seed",
            "3",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **SMALL_SPARK_CHILD})
    reports = list(tmp_path.glob("*/audit.json"))
    assert reports, done.stdout[-2000:] + done.stderr[-3000:]
    found = found_offsets(reports[0].parent / "violations.parquet")
    topic = "audit-leader-change"
    assert found["log-append-time-never-backwards"] == {(topic, 0, second.base_offset + i) for i in range(2)}
    assert found["log-append-time-not-after-read"] == {(topic, 0, first.base_offset + i) for i in range(3)}
    detail = rows_of(json.loads(reports[0].read_text()), topic)["log-append-time-never-backwards"]["samples"][0]
    assert "leader epoch 1, earlier 0" in detail["detail"], detail
