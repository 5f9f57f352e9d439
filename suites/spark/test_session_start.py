"""A Spark that cannot start is one line naming the root cause and the log that holds the rest -- never a
py4j traceback -- and ``ktc audit`` then exits 2 (a fresh machine once ended ``ktc audit`` in a
JAVA_GATEWAY_EXITED traceback).  Spark's Kafka connector that cannot be resolved is one line too.

Each case runs where it would on a user's machine: the ``ktc audit`` CLI in a child process over a small
Parquet file (no broker), or the connector's resolution into an empty cache of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("pyspark", reason="needs the spark extra (pip install 'ktc[spark]')")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")
BOGUS = "org.example:ktc-no-such-connector_2.13:0.0.1"
needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="needs Java 17 on PATH")


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "records.parquet"
    pq.write_table(
        pa.table({"partition": [0, 0], "offset": [0, 1], "timestamp_ms": [1, 2], "timestampType": [0, 0]}), path
    )
    return path


def audit_file(records, tmp_path, **env) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "ktc",
        "audit",
        "--topic",
        "t",
        "--source",
        str(records),
        "--report",
        str(tmp_path / "report"),
    ]
    env = {**os.environ, "TMPDIR": str(tmp_path), **env}  # the kept log of a failed start goes there
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The one line ``ktc audit`` printed on stderr; fails on a traceback or more lines."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"{len(lines)} lines on stderr:\n{done.stderr}"
    assert done.returncode == 2, f"exit {done.returncode}: {done.stderr}"
    return lines[0]


def kept_log(line: str) -> str:
    """The log file the line names, which must exist (the rest of the JVM's output is there)."""
    assert "; see " in line, line
    log = line.rsplit("; see ", 1)[1]
    assert os.path.isfile(log), f"{log} (named by the error) does not exist"
    return log


def test_a_missing_java_is_one_line_and_exit_2(records, tmp_path):
    done = audit_file(records, tmp_path, JAVA_HOME=str(tmp_path / "no-such-jdk"))
    line = one_error_line(done)
    assert line.startswith("ktc: error: Spark could not start: "), line
    assert f"{tmp_path / 'no-such-jdk'}/bin/java: No such file or directory" in line, line
    kept_log(line)


@needs_java
def test_an_unresolvable_package_is_one_line_with_ivy_s_reason(records, tmp_path):
    conf = f"spark.jars.packages={BOGUS}\nspark.jars.ivy={tmp_path / 'ivy'}"
    done = audit_file(records, tmp_path, KTC_SPARK_CONF=conf, KTC_CACHE=str(tmp_path / "cache"))
    line = one_error_line(done)
    assert line.startswith("ktc: error: Spark could not start: "), line
    assert "unresolved dependency: org.example#ktc-no-such-connector_2.13;0.0.1" in line, line
    assert "[unresolved dependency" in open(kept_log(line)).read()
    assert (tmp_path / "cache" / "resolve.lock").exists(), "the session resolved packages without ktc's lock"


@needs_java
def test_a_connector_that_cannot_be_resolved_is_one_line_and_leaves_no_folder(tmp_path, monkeypatch):
    from ktc.audit import connector

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(connector.OVERRIDE, BOGUS)
    with pytest.raises(connector.ConnectorError) as raised:
        connector.jars("4.0.0")
    line = str(raised.value)
    assert "\n" not in line and line.startswith(f"Spark's Ivy could not resolve {BOGUS}: "), line
    assert "unresolved dependency" in line, line
    assert "[unresolved dependency" in open(kept_log(line)).read()
    target = connector.folder("4.0.0")
    assert [p.name for p in target.parent.iterdir() if p.is_dir()] == [], "a staging or half folder was left"


@needs_java
def test_a_kafka_source_spark_cannot_find_is_one_line_ktc_audit_falls_back_on():
    """Without the connector's jars on the classpath (this session never loads them), the Kafka source fails
    when planned; ``kafka_source_failure`` must name it in one line so ``ktc audit`` reads with its client."""
    from ktc.audit.sources import kafka_source_failure, read_spark_kafka
    from ktc.spark import session

    with pytest.raises(Exception) as raised:
        read_spark_kafka(session.get(), "127.0.0.1:1", "t")
    line = kafka_source_failure(raised.value)
    assert line is not None and "\n" not in line and "Failed to find data source: kafka" in line, (line, raised.value)
