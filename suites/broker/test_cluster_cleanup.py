"""The 3-node skewed-clock cluster always goes away: SIGINT to its Python process while it starts
and while it serves produces leaves no JVM, no listening port and no temp dir.

The cluster runs in a child Python whose TMPDIR is a directory of this test's own, so "no temp
dir left" and "no JVM left" are decided on that directory alone (other brokers may be running).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil", reason="the broker tier needs psutil (pip install psutil)")
pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.suites._support import interruptible  # noqa: E402
from ktc.suites.broker.test_local_broker import ROOT, VERSIONS, port_is_free  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-cluster-cleanup")  # the module on one worker: its fixtures once

CHILD = """
import json, sys
from ktc.kafka.client import wire
from ktc.kafka.processes.cluster import LocalCluster
from ktc.reference.types import Batch, Record
with LocalCluster(sys.argv[1]) as c:
    c.create_topic("t", [[0, 1, 2]])
    ports = [p for n in c.nodes for p in (n.port, n.controller_port)]
    print(json.dumps({"ports": ports, "offsets": c.measured_offsets_ms}), flush=True)
    while True:  # mid-run: produce to the leader until interrupted
        c.client(c.leader("t")).produce("t", Batch((Record(wire.now_ms()),)))
"""


def spawn(tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, VERSIONS[0]],
        cwd=ROOT,
        env=env,
        text=True,
        preexec_fn=interruptible,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def jvms_under(tmp: Path) -> list[int]:
    """pgrep: every live process whose command line mentions the directory (the JVMs name their temp dirs)."""
    out = subprocess.run(["pgrep", "-f", str(tmp)], capture_output=True, text=True)
    return [
        int(p)
        for p in out.stdout.split()
        if psutil.pid_exists(int(p)) and psutil.Process(int(p)).status() != psutil.STATUS_ZOMBIE
    ]


def interrupt(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=120)  # a hang detector: generous, since a loaded machine is normal
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def faketime_shm(pids) -> list[str]:
    """libfaketime's per-process POSIX shm and semaphore files of these processes."""
    names = {f"faketime_shm_{p}" for p in pids} | {f"sem.faketime_sem_{p}" for p in pids}
    return sorted(n for n in os.listdir("/dev/shm") if n in names) if os.path.isdir("/dev/shm") else []


def assert_nothing_left(tmp: Path, ports=(), pids=()) -> None:
    assert wait_for(lambda: not jvms_under(tmp), 15), f"JVMs left: {jvms_under(tmp)}"
    assert list(tmp.iterdir()) == [], f"temp dirs left: {list(tmp.iterdir())}"
    assert all(port_is_free(p) for p in ports), [p for p in ports if not port_is_free(p)]
    assert faketime_shm(pids) == [], f"libfaketime shm left: {faketime_shm(pids)}"


def test_sigint_while_the_cluster_serves_produces_leaves_nothing(tmp_path):
    child = spawn(tmp_path)
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        started = json.loads(line)
        jvms = jvms_under(tmp_path)
        assert len(jvms) == 3 and len(faketime_shm(jvms)) == 6  # the check below can fail
        time.sleep(1.0)  # produces in flight
    finally:
        interrupt(child)
    assert child.returncode != 0
    assert_nothing_left(tmp_path, started["ports"], jvms)


def test_sigint_while_the_cluster_starts_leaves_nothing(tmp_path):
    child = spawn(tmp_path)
    try:
        assert wait_for(lambda: len(list(tmp_path.glob("ktc-kafka-*"))) == 3 and jvms_under(tmp_path), 60), (
            child.stderr.read() if child.poll() is not None else "the cluster's nodes never appeared"
        )
    finally:
        interrupt(child)
    assert_nothing_left(tmp_path)
