"""Ctrl-C in the middle of ``ktc run --impl kafka-3.9``: pytest-xdist's controller, its workers and
every JVM they started go away, and so do the brokers' temp dirs.

Ctrl-C is SIGINT to the whole foreground process group; the run is started in a session of its
own so that the signal reaches exactly it.  The JVMs are found by walking the run's process tree
(psutil), so brokers of other runs on the machine are never counted.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from ktc.suites._support import interruptible

ROOT = Path(__file__).resolve().parents[2]
LOGS_DIR = re.compile(r"-Dkafka\.logs\.dir=(\S+)/logs")


def broker_jvms(pid: int) -> dict[int, str]:
    """pid -> temp dir of every Kafka JVM under the process ``pid``."""
    found = {}
    for child in psutil.Process(pid).children(recursive=True):
        try:
            match = LOGS_DIR.search(" ".join(child.cmdline()))
        except psutil.Error:
            continue
        if match:
            found[child.pid] = match.group(1)
    return found


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for_brokers(run: subprocess.Popen, seconds: float = 90) -> dict[int, str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and run.poll() is None:
        jvms = broker_jvms(run.pid)
        if jvms:
            time.sleep(3)  # well into the suites: topics created, requests in flight
            return broker_jvms(run.pid)
        time.sleep(0.2)
    return {}


def test_sigint_to_a_ktc_run_on_a_broker_leaves_no_jvm_and_no_temp_dir(tmp_path):
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        "kafka-3.9",
        "--profile",
        "kafka-3.9",
        "--report",
        str(tmp_path / "report"),
        "--workers",
        "2",
    ]
    run = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=interruptible,
    )
    try:
        jvms = wait_for_brokers(run)
        assert jvms, "no broker JVM appeared under the run within 90 s"
        os.killpg(run.pid, signal.SIGINT)
        code = run.wait(timeout=180)  # a hang detector: generous, since a loaded machine is normal
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(pid) for pid in jvms):
        time.sleep(0.1)
    assert code != 0
    assert [pid for pid in jvms if alive(pid)] == []
    assert [d for d in jvms.values() if os.path.exists(d)] == []
