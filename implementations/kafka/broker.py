"""A single-node KRaft Apache Kafka broker on loopback, started from Maven Central jars.

    with LocalBroker("3.9.2") as broker:
        client = wire.Client(broker.bootstrap)
        ...

``LocalBroker`` makes a temp dir, picks two free loopback ports (bind to port 0), writes
``server.properties`` for combined broker+controller mode with a static quorum, formats the
storage with ``kafka.tools.StorageTool``, starts ``java -cp <lib>/* kafka.Kafka`` in its own
process group with output and log4j going to files in the temp dir, and waits until the broker
answers ApiVersions.  It is always stopped and its temp dir removed: on ``__exit__``, at
interpreter exit (``atexit``), on SIGINT / SIGTERM (handlers kill every live broker's process
group, then hand the signal on), and, on Linux, when the Python process dies outright
(``PR_SET_PDEATHSIG`` = SIGKILL on the JVM).  Brokers hold throwaway data, so stopping is a
SIGKILL of the process group: instant and certain.

``faketime_offset_s`` shifts the JVM's wall clock with Debian's libfaketime (``LD_PRELOAD``;
the host clock is untouched); monotonic time is left alone.  Two libfaketime switches make the
JVM usable: ``FAKETIME_DONT_FAKE_MONOTONIC=1`` (else the JVM hangs, libfaketime's README) and
``FAKETIME_FORCE_MONOTONIC_FIX=0`` (measured on Debian 12, glibc 2.36, libfaketime 0.9.10: with
the fix on, every JVM timed wait spins on futex - 1.4 M calls, ``Thread.sleep(500)`` took 550-
600 ms and a javac run 9 s instead of 1.2 s; with it off, 500 ms and 1.7 s).

A multi-node cluster (cluster.py) builds nodes with ``node_id``, a shared ``cluster_id``, fixed
``ports`` and the quorum in ``config``, and drives the same phases ``start`` does one by one:
``open``, ``prepare``/``format_done``, ``launch``, ``wait_ready``; ``halt`` stops the JVM and
keeps the data for ``relaunch``.  Every node is registered for cleanup from ``open`` on.
"""
from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Mapping, Optional

from . import provision

READY_TIMEOUT_S = 60.0
FAKETIME_GLOBS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
                  "/usr/local/lib/faketime/libfaketime.so.1")


class BrokerError(RuntimeError):
    """The broker could not be started (the message carries the tail of its log)."""


# ---- every live broker of this process, for atexit and signal handlers ---------------------

_LIVE: "set[LocalBroker]" = set()
_LOCK = threading.RLock()
_PREVIOUS: dict[int, object] = {}


def stop_all() -> None:
    with _LOCK:
        brokers = list(_LIVE)
    for broker in brokers:
        broker.stop()


def _on_signal(signum, frame):
    stop_all()
    previous = _PREVIOUS.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # SIGINT's default raises KeyboardInterrupt here
    elif previous == signal.SIG_IGN:
        return
    else:  # SIG_DFL: die of the same signal, as if we had never caught it
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal only works there; atexit and PDEATHSIG still cover us
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if current is _on_signal or current == signal.SIG_IGN:
            continue  # already ours, or deliberately ignored (e.g. SIGINT of a background job): leave it
        _PREVIOUS[signum] = current
        signal.signal(signum, _on_signal)


atexit.register(stop_all)


_DEFERRED = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT/SIGTERM while a child or temp dir exists but is not yet recorded on the broker;
    a signal that arrives meanwhile is delivered (and cleans up) right after."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


try:  # loaded now: dlopen between fork and exec can deadlock
    _PRCTL = ctypes.CDLL(None).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None


def _child_setup() -> None:  # runs in the child between fork and exec
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)  # the JVM must not inherit our deferral
    if _PRCTL is not None:
        # PR_SET_PDEATHSIG: the kernel SIGKILLs the JVM when the thread that started it dies, so a
        # SIGKILLed Python leaves no JVM.  (Start brokers from a thread that outlives them.)
        _PRCTL(1, int(signal.SIGKILL))


# ---- the broker ------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def random_cluster_id() -> str:
    """What ``StorageTool random-uuid`` prints: a type-4 UUID, URL-safe base64 without padding."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def faketime_library() -> str:
    for pattern in FAKETIME_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise BrokerError("libfaketime not found: install Debian's libfaketime (apt-get install libfaketime) "
                      "to run brokers with a skewed clock")


class LocalBroker:
    def __init__(self, version: str = provision.DEFAULT_VERSIONS[0], *, config: Optional[Mapping[str, object]] = None,
                 faketime_offset_s: Optional[float] = None, ready_timeout_s: float = READY_TIMEOUT_S,
                 heap: str = "512m", node_id: int = 1, cluster_id: Optional[str] = None,
                 ports: Optional[tuple[int, int]] = None):
        self.version = version
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.config = dict(config or {})
        self.faketime_offset_s = faketime_offset_s
        self.ready_timeout_s = ready_timeout_s
        self.heap = heap
        self.tmpdir: Optional[Path] = None
        self.process: Optional[subprocess.Popen] = None
        self.port, self.controller_port = ports or (0, 0)
        self.startup_s: Optional[float] = None
        self._children: list[subprocess.Popen] = []

    # -- public surface
    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    @property
    def log_path(self) -> Path:
        assert self.tmpdir is not None
        return self.tmpdir / "logs" / "server.log"

    def __enter__(self) -> "LocalBroker":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "LocalBroker":
        lib = provision.lib_dir(self.version)  # before the clock starts: a cold cache is not start time
        t0 = time.monotonic()
        self.open()
        try:
            for attempt in range(2):  # a freed port can be taken before the JVM binds it: retry once
                self.port, self.controller_port = free_port(), free_port()
                self._write_files()
                self._format(lib)
                self.launch(lib)
                try:
                    self.wait_ready()
                    break
                except BrokerError:
                    if attempt == 0 and "Address already in use" in self.log_tail():
                        self._kill()
                        shutil.rmtree(self.tmpdir / "data", ignore_errors=True)
                        continue
                    raise
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    # -- the phases of start, one by one (cluster.py starts several nodes side by side)
    def open(self) -> None:
        """Register for cleanup (atexit, signals) and make the temp dir, with signals held meanwhile."""
        _install_handlers()
        with _signals_deferred():
            with _LOCK:
                _LIVE.add(self)
            self.tmpdir = Path(tempfile.mkdtemp(prefix=f"ktc-kafka-{self.version}-"))

    def prepare(self, lib: Path) -> subprocess.Popen:
        """Write the files and start formatting the storage; ``format_done`` waits for it."""
        self._write_files()
        return self._format_begin(lib)

    def halt(self, grace_s: float = 15.0) -> None:
        """Stop the JVM, keeping its data for ``relaunch``: SIGTERM (a controlled shutdown hands
        its partitions over), then SIGKILL of the process group if it is still alive after ``grace_s``."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace_s)
        self._kill()

    def relaunch(self) -> None:
        """Start the JVM again on the same data, ports and clock offset; wait until it answers."""
        self._kill()
        self.launch(provision.lib_dir(self.version))
        self.wait_ready()

    def stop(self) -> None:
        """Kill every child's process group and remove the temp dir.

        Idempotent and safe to re-enter from a signal handler that interrupted a stop in progress:
        each step is repeated, never skipped on a flag, so the handler finishes what was cut short.
        """
        self._kill()
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        with _LOCK:
            _LIVE.discard(self)

    def log_tail(self, lines: int = 30) -> str:
        if self.tmpdir is None:
            return ""
        chunks = []
        for name in ("logs/server.log", "console.log"):
            path = self.tmpdir / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                if text:
                    chunks.append(f"--- {name}\n" + "\n".join(text))
        return "\n".join(chunks)

    # -- internals
    def properties(self) -> dict[str, object]:
        assert self.tmpdir is not None
        props: dict[str, object] = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": f"{self.node_id}@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.tmpdir / "data",
            "num.partitions": 1,
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "group.initial.rebalance.delay.ms": 0,
            "log.retention.check.interval.ms": 1000,
            "log.initial.task.delay.ms": 0,
            "log.segment.delete.delay.ms": 0,
            "log.cleaner.enable": "false",
        }
        if provision.major(self.version) >= 4:
            props.update({"share.coordinator.state.topic.replication.factor": 1,
                          "share.coordinator.state.topic.min.isr": 1})
        props.update(self.config)
        return props

    def _write_files(self) -> None:
        assert self.tmpdir is not None
        (self.tmpdir / "logs").mkdir(exist_ok=True)
        (self.tmpdir / "server.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in self.properties().items()))
        log = self.tmpdir / "logs" / "server.log"
        pattern = "[%d] %p %m (%c)%n"
        if provision.logging_family(self.version) == "reload4j":
            (self.tmpdir / "log4j.properties").write_text(
                "log4j.rootLogger=INFO, file\n"
                "log4j.appender.file=org.apache.log4j.FileAppender\n"
                f"log4j.appender.file.File={log}\n"
                "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
                f"log4j.appender.file.layout.ConversionPattern={pattern}\n"
                "log4j.logger.kafka.request.logger=WARN\n")
        else:
            (self.tmpdir / "log4j2.xml").write_text(
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<Configuration status="WARN">\n'
                f'  <Appenders><File name="file" fileName="{log}"><PatternLayout pattern="{pattern}"/></File></Appenders>\n'
                '  <Loggers><Logger name="kafka.request.logger" level="WARN"/>\n'
                '    <Root level="INFO"><AppenderRef ref="file"/></Root></Loggers>\n'
                '</Configuration>\n')

    def _java(self, lib: Path, main: str, *args: str) -> list[str]:
        assert self.tmpdir is not None
        if provision.logging_family(self.version) == "reload4j":
            logging = [f"-Dlog4j.configuration=file:{self.tmpdir / 'log4j.properties'}"]
        else:
            logging = [f"-Dlog4j2.configurationFile={self.tmpdir / 'log4j2.xml'}"]
        return ["java", f"-Xmx{self.heap}", "-Xss1m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
                f"-Dkafka.logs.dir={self.tmpdir / 'logs'}", *logging,
                "-cp", str(lib / "*"), main, *args]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.faketime_offset_s is not None:
            env.update({"LD_PRELOAD": faketime_library(),
                        "FAKETIME": f"{self.faketime_offset_s:+g}s",
                        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                        "FAKETIME_FORCE_MONOTONIC_FIX": "0"})
        return env

    def _format(self, lib: Path) -> None:
        self.format_done(self._format_begin(lib))

    def _format_begin(self, lib: Path) -> subprocess.Popen:
        assert self.tmpdir is not None
        cmd = self._java(lib, "kafka.tools.StorageTool", "format", "-t", self.cluster_id or random_cluster_id(),
                         "-c", str(self.tmpdir / "server.properties"), "--ignore-formatted")
        with open(self.tmpdir / "format.log", "wb") as out, _signals_deferred():
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=self._env(), preexec_fn=_child_setup)
            self._children.append(proc)
        return proc

    def format_done(self, proc: subprocess.Popen) -> None:
        assert self.tmpdir is not None
        try:
            code = proc.wait(timeout=60)
        except BaseException:
            _killpg(proc)
            raise
        self._children.remove(proc)
        if code != 0:
            tail = (self.tmpdir / "format.log").read_text(errors="replace").strip().splitlines()[-15:]
            raise BrokerError(f"kafka.tools.StorageTool format failed (exit {code}) for Kafka {self.version}:\n"
                              + "\n".join(tail))

    def launch(self, lib: Path) -> None:
        assert self.tmpdir is not None
        with open(self.tmpdir / "console.log", "ab") as out, _signals_deferred():
            self.process = subprocess.Popen(
                self._java(lib, "kafka.Kafka", str(self.tmpdir / "server.properties")),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.tmpdir,
                start_new_session=True, env=self._env(), preexec_fn=_child_setup)
            self._children.append(self.process)

    def wait_ready(self) -> None:
        from .wire import Client, WireError  # lazy: wire imports nothing from here
        deadline = time.monotonic() + self.ready_timeout_s
        last = "no connection yet"
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise BrokerError(f"Kafka {self.version} exited with code {code} before answering:\n{self.log_tail()}")
            try:
                with Client(self.bootstrap, timeout_s=2) as client:
                    client.api_versions()
                    return
            except (OSError, WireError) as error:
                last = f"{type(error).__name__}: {error}"
            time.sleep(0.05)
        raise BrokerError(f"Kafka {self.version} did not answer ApiVersions on {self.bootstrap} within "
                          f"{self.ready_timeout_s:.0f} s (last: {last}):\n{self.log_tail()}")

    def _kill(self) -> None:
        for child in list(self._children):
            _killpg(child)
            if self.faketime_offset_s is not None:
                _remove_faketime_shm(child.pid)
        self._children = [c for c in self._children if c.returncode is None]


def _remove_faketime_shm(pid: int) -> None:
    """libfaketime makes a POSIX shm and semaphore per process and removes them in its destructor,
    which a SIGKILLed JVM never runs: remove them for it."""
    for name in (f"/dev/shm/faketime_shm_{pid}", f"/dev/shm/sem.faketime_sem_{pid}"):
        with contextlib.suppress(OSError):
            os.unlink(name)


def _killpg(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """SIGKILL the child's process group (start_new_session: pgid == pid) and wait until it is dead.

    Reaps with non-blocking polls; if the poll cannot reap (a signal handler interrupted a ``wait``
    on the same Popen, which holds its lock), death read from /proc (zombie or gone) is enough.
    """
    if proc.returncode is not None:
        return  # reaped: its pid may belong to someone else now
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + timeout_s
    dead_since = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:  # reaped: gone for good
            return
        if _dead(proc.pid):  # a zombie we cannot reap here (a wait we interrupted holds the lock)
            dead_since = dead_since or time.monotonic()
            if time.monotonic() - dead_since > 1.0:
                return
        time.sleep(0.01)


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state in (b"Z", b"X", b"x")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):  # no /proc (not Linux): fall back to a signal-0 probe
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True


if __name__ == "__main__":  # python -m implementations.kafka.broker [VERSION]: start, time, stop
    with LocalBroker(sys.argv[1] if len(sys.argv) > 1 else provision.DEFAULT_VERSIONS[0]) as b:
        print(f"Kafka {b.version} on {b.bootstrap} (pid {b.pid}) ready in {b.startup_s:.2f} s; dir {b.tmpdir}")
