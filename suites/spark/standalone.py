"""A throwaway Spark standalone cluster on loopback, one master and one worker, for
``test_standalone_cluster.py``: ktc's Spark implementation run where users run it.

Test-only, so it lives beside its test (like ``suites/broker/faultproxy.py``): ktc itself never
starts a cluster; ``--spark-master`` only connects to one the user already has.

How it starts: the pip distribution of PySpark has ``bin/spark-class`` and ``sbin/spark-daemon.sh``
but leaves out ``sbin/start-master.sh`` and ``start-worker.sh``.  Those two scripts only run
``spark-daemon.sh start org.apache.spark.deploy.master.Master 1 --host H --port P --webui-port W``
(and the same with ``org.apache.spark.deploy.worker.Worker`` and the master URL); spark-daemon.sh
in turn runs ``bin/spark-class <class> <args>`` under nohup.  We run the same two classes through
``bin/spark-class`` directly, in the foreground, so that we hold their pids.

Cleanup: each JVM is started in its own session (process group), with ``PR_SET_PDEATHSIG`` and
registered with ktc/kafka/processes/lifecycle.py, so ``stop()`` runs on success,
failure, SIGINT, SIGTERM and at exit; it SIGKILLs each whole group (the worker's group holds its
executors; PySpark's Python daemon leaves that group but exits when its executor's pipe closes) and
removes the one temp dir that holds SPARK_LOG_DIR, SPARK_WORKER_DIR and SPARK_PID_DIR (made under
``parent``, e.g. pytest's tmp_path, so that even a SIGKILLed run's dir is pruned by pytest later).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ktc.kafka.processes.broker import free_ports
from ktc.kafka.processes.lifecycle import (
    child_setup,
    dead,
    keep_stopped,
    kill_group,
    release,
    signals_deferred,
)
from ktc.suites._support import SMALL_JVM, interruptible

HOST = "127.0.0.1"
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_S = 90.0
ROOT = Path(__file__).resolve().parents[2]


class ClusterError(RuntimeError):
    """The cluster did not come up (the message carries the tail of the logs)."""


def spark_home() -> Path:
    import pyspark  # the installed distribution: bin/spark-class and the jars

    return Path(pyspark.__file__).resolve().parent


def accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path.name})"


def with_repo_on_path(env: dict[str, str]) -> dict[str, str]:
    """The repository first on PYTHONPATH: executors' Python workers import implementations.spark even
    from a clone that was never pip-installed (they run with the app's work dir as cwd)."""
    parts = [str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(dict.fromkeys(parts))}


class StandaloneCluster:
    """``with StandaloneCluster() as cluster:`` a master and a worker (``cores``, ``memory``) on free
    loopback ports; ``cluster.master_url`` is ``spark://127.0.0.1:<port>``."""

    def __init__(
        self, cores: int = 1, memory: str = "1g", timeout_s: float = START_TIMEOUT_S, parent: Path | None = None
    ):
        self.cores, self.memory, self.timeout_s, self.parent = cores, memory, timeout_s, parent
        self.root: Path | None = None
        self.ports: dict[str, int] = {}
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.ports['master']}"

    def dir(self, name: str) -> Path:
        assert self.root is not None, "the cluster is not started"
        return self.root / name

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> StandaloneCluster:
        keep_stopped(self)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        with signals_deferred():  # the temp dir is recorded before a signal can clean up
            self.root = Path(tempfile.mkdtemp(prefix="ktc-spark-standalone-", dir=self.parent))
        for name in ("logs", "work", "pids"):
            self.dir(name).mkdir()
        self.ports = dict(zip(("master", "master_ui", "worker", "worker_ui"), free_ports(4)))
        self._launch(
            "master",
            MASTER,
            "--host",
            HOST,
            "--port",
            str(self.ports["master"]),
            "--webui-port",
            str(self.ports["master_ui"]),
        )
        self._wait(lambda: accepts(self.ports["master"]), f"the master to accept on {self.master_url}")
        self._launch(
            "worker",
            WORKER,
            "--host",
            HOST,
            "--port",
            str(self.ports["worker"]),
            "--webui-port",
            str(self.ports["worker_ui"]),
            "--cores",
            str(self.cores),
            "--memory",
            self.memory,
            "--work-dir",
            str(self.dir("work")),
            self.master_url,
        )
        self._wait(lambda: self.alive_workers() >= 1, "the worker to register with the master (state ALIVE)")

    def env(self) -> dict[str, str]:
        home = spark_home()
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_PUBLIC_DNS": HOST,
            "SPARK_LOG_DIR": str(self.dir("logs")),
            "SPARK_WORKER_DIR": str(self.dir("work")),
            "SPARK_PID_DIR": str(self.dir("pids")),
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_DAEMON_JAVA_OPTS": SMALL_JVM,
        }  # the master and the worker: start-up decides
        return with_repo_on_path(env)

    def _launch(self, name: str, main: str, *args: str) -> None:
        command = [str(spark_home() / "bin" / "spark-class"), main, *args]
        with open(self.dir("logs") / f"{name}.out", "ab") as out, signals_deferred():
            self.processes[name] = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
                env=self.env(),
                start_new_session=True,
                preexec_fn=child_setup,
            )

    def _wait(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            exited = {n: p.returncode for n, p in self.processes.items() if p.poll() is not None}
            if exited:
                raise ClusterError(f"waiting for {what}: {exited} exited\n{self.log_tails()}")
            if ready():
                return
            time.sleep(0.2)
        raise ClusterError(f"no sign of {what} within {self.timeout_s:.0f} s\n{self.log_tails()}")

    def log_tails(self) -> str:
        return "\n".join(
            f"--- {name}.out (last lines) ---\n{tail(self.dir('logs') / f'{name}.out')}"
            for name in ("master", "worker")
            if name in self.processes
        )

    def status(self) -> dict:
        """The master's own account (its web UI's /json): workers, active and completed applications."""
        url = f"http://{HOST}:{self.ports['master_ui']}/json/"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return json.load(answer)
        except (OSError, ValueError):
            return {}

    def alive_workers(self) -> int:
        return sum(w.get("state") == "ALIVE" for w in self.status().get("workers", ()))

    def completed_apps(self, name: str, wait_s: float = 20.0) -> list[dict]:
        """The finished applications called ``name``; waits a little, as the master marks an application
        finished only once it has noticed that its driver is gone."""
        deadline = time.monotonic() + wait_s
        while True:
            apps = [a for a in self.status().get("completedapps", ()) if a.get("name") == name]
            if apps or time.monotonic() > deadline:
                return apps
            time.sleep(0.2)

    def executor_logs(self) -> list[Path]:
        """The stderr of every executor the worker ran: work/app-*/<executor id>/stderr."""
        return sorted(self.dir("work").glob("app-*/*/stderr"))

    def executor_log_count(self, text: str) -> int:
        """How often ``text`` occurs in the executors' logs (Spark logs each task at INFO there)."""
        return sum(log.read_text(errors="replace").count(text) for log in self.executor_logs())

    def run(self, argv: list[str], env: dict[str, str], log: Path, timeout_s: float) -> int | None:
        """Run a driver (``ktc run --spark-master ...``) in its own process group, its output in ``log``:
        its exit code, or None if it ran out of time.  ``stop()`` ends it before the cluster."""
        with open(log, "ab") as out, signals_deferred():
            proc = self.processes["driver"] = subprocess.Popen(
                argv,
                env=env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=interruptible_child,
            )
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        finally:
            end_group(proc)

    def stop(self) -> None:
        if "driver" in self.processes:  # first, so that it stops its session while the cluster is there
            end_group(self.processes["driver"])
        for name in ("worker", "master"):  # the worker's group before the master: it holds the executors
            if name in self.processes:
                kill_group(self.processes[name])
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        release(self)


def interruptible_child() -> None:  # preexec_fn: runs in the child between fork and exec
    child_setup()
    interruptible()  # Ctrl-C's default disposition even if ours is an inherited SIG_IGN: end_group sends SIGINT


def end_group(proc: subprocess.Popen, grace_s: float = 15.0) -> None:
    """SIGINT first, as a Ctrl-C would (``ktc run`` passes it on to its pytest child, which stops its Spark
    session and removes its temp dirs at exit), then SIGKILL whatever is left of the group.  Polls /proc
    rather than waiting on ``proc``: it may run in a signal handler that interrupted such a wait."""
    if proc.returncode is None and not dead(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        deadline = time.monotonic() + grace_s
        while not dead(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    kill_group(proc)
