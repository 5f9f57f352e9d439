"""ktc resolves jars one process at a time (two Ivy resolutions into one cache at once lost jars on a
fresh machine).  Maven's fetch of a Kafka broker (provision.lib_dir) and Spark's Ivy for the Kafka
connector (ktc.audit.connector.jars) both wait for the cache's resolution lock, and a process that
waited uses what the holder finished instead of resolving again.  kfake's build and the hunt's Go check
take locks of their own: a test, or a second run, that needs one while another process does it waits
for that one rather than doing it again at the same time (two Go builds at once each take every core).

Each test holds the lock itself, starts the real entry point in a child, sees the child blocked on the
lock (/proc/locks), finishes the cache as another process would, and releases: the child must then
answer from that cache, having run neither Maven (a stand-in ``mvn`` records any call), Ivy nor Go.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ktc import cache
from ktc.kafka.processes import provision

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks")
VERSION = "3.9.2"
PACKAGE = "org.example:ktc-lock-test_2.13:1.0"


def blocked_on_a_lock(pid: int) -> bool:
    """Whether ``pid`` waits for a lock (a ``->`` line of /proc/locks names the waiters)."""
    return any("->" in line and f" {pid} " in line for line in Path("/proc/locks").read_text().splitlines())


def wait_until_blocked(child: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not blocked_on_a_lock(child.pid):
        if child.poll() is not None:
            out, err = child.communicate()
            pytest.fail(f"the child did not wait for the resolution lock: exit {child.returncode}\n{out}\n{err}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"the child was not blocked on the resolution lock within {timeout_s:.0f} s")
        time.sleep(0.05)


def stand_in(tmp_path: Path, tool: str) -> Path:
    """A directory with a ``tool`` that records being run (``<tool>-ran``) and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / tool
    path.write_text(f"#!/bin/sh\ntouch {tmp_path / (tool + '-ran')}\nexit 1\n")
    path.chmod(0o755)
    return bin_dir


def stand_in_mvn(tmp_path: Path) -> Path:
    return stand_in(tmp_path, "mvn")


def test_a_broker_fetch_waits_for_the_lock_and_uses_what_the_holder_finished(tmp_path, monkeypatch):
    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    env = {**os.environ, "PATH": f"{stand_in_mvn(tmp_path)}:{os.environ['PATH']}"}
    with cache.resolving():
        child = subprocess.Popen(
            [sys.executable, "-m", "ktc.kafka.processes.provision", VERSION],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until_blocked(child)
        lib = cache.cache_root() / "kafka" / VERSION / "lib"
        lib.mkdir(parents=True)
        (lib / provision.STAMP).write_text(VERSION + "\n")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.startswith(f"{VERSION}: {lib} "), out
    assert not (tmp_path / "mvn-ran").exists(), "Maven ran although the holder of the lock had finished the cache"


def test_the_kafka_connector_waits_for_the_lock_and_uses_what_the_holder_finished(tmp_path, monkeypatch):
    pytest.importorskip("pyspark", reason="the connector's entry point reads the installed PySpark's version")
    from ktc.audit import connector

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(connector.OVERRIDE, PACKAGE)
    with cache.resolving():
        child = subprocess.Popen(
            [sys.executable, "-m", "ktc.audit.connector", "--resolve"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until_blocked(child)
        target = connector.folder("any")
        target.mkdir(parents=True)
        (target / "stand-in.jar").write_bytes(b"")
        (target / connector.STAMP).write_text(
            json.dumps({"coordinate": PACKAGE, "why": "the test's", "jars": ["stand-in.jar"]})
        )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.startswith(f"the test's: 1 jars in {target} "), out
    assert not (cache.cache_root() / "spark" / "ivy").exists(), "Ivy ran although the holder had finished"


def test_a_connector_folder_missing_a_jar_is_resolved_again(tmp_path, monkeypatch):
    """A stamped folder whose jars were cleaned away is not used as it is (Spark would start without the
    Kafka source): ``jars`` resolves it again, under the lock."""
    from ktc.audit import connector

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(connector.OVERRIDE, PACKAGE)
    target = connector.folder("any")
    target.mkdir(parents=True)
    (target / connector.STAMP).write_text(json.dumps({"coordinate": PACKAGE, "why": "old", "jars": ["gone.jar"]}))
    calls = []

    def resolve_into(folder, coordinate, why):
        calls.append(coordinate)
        (folder / "new.jar").write_bytes(b"")
        (folder / connector.STAMP).write_text(json.dumps({"coordinate": coordinate, "why": why, "jars": ["new.jar"]}))

    monkeypatch.setattr(connector, "resolve_into", resolve_into)
    found, _why = connector.jars("any")
    assert calls == [PACKAGE] and found == [str(target / "new.jar")]


def test_a_kfake_build_waits_for_the_build_in_progress_and_uses_its_binary(tmp_path, monkeypatch):
    from ktc.implementations.kafka.processes import kfake

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    env = {**os.environ, "PATH": f"{stand_in(tmp_path, 'go')}:{os.environ['PATH']}"}
    env.pop("KTC_KFAKE_VERSION", None)
    binary = kfake.binary_path()
    binary.parent.mkdir(parents=True)
    with cache.holding(binary.with_name(".build.lock")):
        child = subprocess.Popen(
            [sys.executable, "-m", "ktc.implementations.kafka.processes.kfake", "--build-only"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until_blocked(child)
        binary.write_bytes(b"")
        binary.with_name(".source").write_text(kfake.source_digest() + "\n")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert f": {binary} (" in out, out
    assert not (tmp_path / "go-ran").exists(), "go ran although the build it waited for had finished"


def test_the_hunts_go_check_starts_only_when_the_check_in_progress_ends(tmp_path, monkeypatch):
    from ktc.hunt import go_test

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    env = {**os.environ, "PATH": f"{stand_in(tmp_path, 'go')}:{os.environ['PATH']}"}
    with cache.holding(cache.cache_root() / "hunt" / "go-check.lock"):
        child = subprocess.Popen(
            [sys.executable, "-m", "ktc.hunt.go_test", "--warm", "v0.0.0-20260101000000-aaaaaaaaaaaa"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until_blocked(child)
        assert not (tmp_path / "go-ran").exists(), "the check ran go while another check held the lock"
    out, _err = child.communicate(timeout=60)
    assert (tmp_path / "go-ran").exists(), out
    assert go_test.MODULE in out and "not built: go mod download" in out, out


def test_a_spark_class_archive_maker_waits_for_the_one_at_work_and_uses_its_archive(tmp_path, monkeypatch):
    pytest.importorskip("pyspark", reason="the archive's name hashes the installed PySpark")
    from ktc.spark import class_archive

    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    archive = class_archive.path()
    if archive is None:
        pytest.skip("no java on PATH: no archive to make")
    archive.parent.mkdir(parents=True)
    with cache.holding(archive.with_name(".make.lock")):
        child = subprocess.Popen(
            [sys.executable, "-m", "ktc.implementations.spark.class_archive"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until_blocked(child)
        archive.write_bytes(b"")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.strip() == f"spark: class archive {archive.name}", "the maker made another archive after waiting"
