"""SIGTERM and SIGINT given to ``ktc run`` reach the whole run: pytest, its xdist workers and what they
started; none of them outlives ktc, and the ``latest`` link is not moved by an interrupted run."""

import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from ktc.suites._support import interruptible

HANGS = textwrap.dedent("""
    import time
    from ktc.examples.minimal_broker import MinimalBroker

    class Hangs(MinimalBroker):
        name = "hangs"
        def run(self, histories):
            while True:
                time.sleep(0.05)
""")


def descendants_once_started(process: subprocess.Popen, want: int, timeout_s: float = 120) -> list:
    """Every process under ``process`` once there are ``want`` of them (pytest and its workers)."""
    parent, deadline = psutil.Process(process.pid), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = parent.children(recursive=True)
        if len(found) >= want:
            return found
        time.sleep(0.2)
    pytest.fail(f"the run did not start {want} processes within {timeout_s:g} s")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_ktc_run_leaves_no_process_of_the_run(tmp_path, signum):
    (tmp_path / "hanging_adapter.py").write_text(HANGS)
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        "hanging_adapter:Hangs",
        "--profile",
        "kafka-4",
        "--workers",
        "2",
        "--impl-timeout",
        "600",
        "--report",
        str(tmp_path / "r"),
        "--",
        "-k",
        "kip937",
    ]
    run = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible
    )  # SIGINT as a terminal gives it, even under nohup
    children = descendants_once_started(run, want=3)  # pytest and two workers
    time.sleep(2)  # the workers are inside run() by now, or about to be
    run.send_signal(signum)
    code = run.wait(timeout=120)  # a hang detector: generous, since a loaded machine is normal
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert code == 128 + signum, run.stderr.read()[-2000:]
    assert alive == [], [p.cmdline() for p in alive]
    assert not (tmp_path / "r" / "latest").exists()


def test_when_ktc_itself_is_killed_outright_nothing_of_its_run_survives(tmp_path):
    """SIGKILL cannot be caught: the kernel sends the pytest child SIGTERM (PR_SET_PDEATHSIG) and the
    child passes it on to its workers."""
    (tmp_path / "hanging_adapter.py").write_text(HANGS)
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        "hanging_adapter:Hangs",
        "--profile",
        "kafka-4",
        "--workers",
        "2",
        "--impl-timeout",
        "600",
        "--report",
        str(tmp_path / "r"),
        "--",
        "-k",
        "kip937",
    ]
    run = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = descendants_once_started(run, want=3)
    time.sleep(2)
    run.kill()
    run.wait(timeout=30)
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
