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
600 ms and a javac run 9 s instead of 1.2 s; with it off, 500 ms and 1.7 s).  ``clock`` (clock.py)
freezes the wall clock instead, at the instant ktc last set, with ktc's own preload (clock_c/).

A multi-node cluster (cluster.py) builds nodes with ``node_id``, a shared ``cluster_id``, fixed
``ports`` and the quorum in ``config``, and drives the same phases ``start`` does one by one:
``open``, ``prepare``/``format_done``, ``launch``, ``wait_ready``; ``halt`` stops the JVM and
keeps the data for ``relaunch``.  Every node is registered for cleanup from ``open`` on.

``secure=True`` (or a ``tls.SecureListener``) adds a SASL_SSL listener beside the plaintext one
(``start`` only): a throwaway CA and certificates in the temp dir, SASL PLAIN and SCRAM-SHA-256/512
for one user (SCRAM created at format time).  ``secure_bootstrap`` is its address (``localhost:port``)
and ``client_security(mechanism)`` the client settings that log in to it; see tls.py.

The files and command line it starts with (server.properties, logging, ``java``) are broker_config.py's;
this module holds the process: its phases, readiness, and its end.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from . import broker_config, provision, tls
from .clock import ControlledClock
from .lifecycle import child_setup, keep_stopped, kill_group, release, signals_deferred

READY_TIMEOUT_S = 60.0  # without a new line in its logs: a JVM that is stuck, not one that is slow
READY_CAP_S = 300.0  # however busy the machine (a JVM that still logs at load 20+ on two cores is only slow)
FAKETIME_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


class BrokerError(RuntimeError):
    """The broker could not be started (the message carries the tail of its log)."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports: each stays bound until all are picked, so the kernel cannot
    give one twice (two separate picks can, and a broker refuses two listeners on one port)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


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
    raise BrokerError(
        "libfaketime not found: install Debian's libfaketime (apt-get install libfaketime) "
        "to run brokers with a skewed clock"
    )


class LocalBroker:
    def __init__(
        self,
        version: str = provision.DEFAULT_VERSIONS[0],
        *,
        config: Mapping[str, object] | None = None,
        faketime_offset_s: float | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        heap: str = "512m",
        node_id: int = 1,
        cluster_id: str | None = None,
        ports: tuple[int, int] | None = None,
        secure: bool | tls.SecureListener = False,
        clock: ControlledClock | None = None,
    ):
        self.version = version
        self.secure: tls.SecureListener | None = tls.SecureListener() if secure is True else (secure or None)
        self.tls: tls.TlsFiles | None = None
        self.node_id = node_id
        self.cluster_id = cluster_id or random_cluster_id()  # one id across start's retries: its log dirs may stay
        self.config = dict(config or {})
        self.faketime_offset_s = faketime_offset_s
        self.clock = clock
        self.ready_timeout_s, self.heap = ready_timeout_s, heap
        self.tmpdir: Path | None = None
        self.process: subprocess.Popen | None = None
        self.port, self.controller_port = ports or (0, 0)
        self.startup_s: float | None = None
        self._children: list[subprocess.Popen] = []

    # -- public surface
    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def secure_bootstrap(self) -> str:
        """The SASL_SSL listener's address (a name, so the hostname check has one to check)."""
        assert self.secure is not None, "start the broker with secure=True"
        return f"{self.secure.host}:{self.secure.port}"

    def client_security(self, mechanism: str = "SCRAM-SHA-256", *, client_cert: bool = False):
        """Client settings (``client.security.Security``) that log in to the SASL_SSL listener."""
        assert self.secure is not None and self.tls is not None, "start the broker with secure=True"
        return tls.client_security(self.secure, self.tls, mechanism, client_cert=client_cert)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> LocalBroker:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> LocalBroker:
        lib = provision.lib_dir(self.version)  # before the clock starts: a cold cache is not start time
        t0 = time.monotonic()
        self.open()
        try:
            for attempt in range(2):  # a freed port can be taken before the JVM binds it: retry once
                self.port, self.controller_port, secure_port = free_ports(3)
                if self.secure is not None:
                    self.secure.port = secure_port
                self._write_files()
                self._format(lib)
                self.launch(lib)
                try:
                    self.wait_ready()
                    break
                except BrokerError:
                    if attempt == 0 and "Address already in use" in self.log_tail():
                        assert self.tmpdir is not None  # made by open()
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
        with signals_deferred():
            keep_stopped(self)
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
        """Start the JVM again on the same data, ports and clock offset (its server.properties written again
        from ``config``); wait until it answers."""
        self._kill()
        self._write_files()
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
        release(self)

    def exit_code(self, wait_s: float = 2.0) -> int | None:
        """The JVM's exit code once it has exited (killed by a signal: minus its number), else None.  Waits
        up to ``wait_s``: a dying JVM resets its connections before it can be reaped."""
        try:
            return self.process.wait(wait_s) if self.process is not None else None
        except subprocess.TimeoutExpired:
            return None

    def logged_bytes(self) -> int:
        """How much its logs hold so far (what wait_ready takes for progress)."""
        paths = [self.tmpdir / name for name in ("logs/server.log", "console.log")] if self.tmpdir else []
        return sum(path.stat().st_size for path in paths if path.exists())

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
        """server.properties (broker_config.py); a subclass may change it (a proxied listener)."""
        assert self.tmpdir is not None
        return broker_config.server_properties(
            self.node_id,
            (self.port, self.controller_port),
            self.tmpdir / "data",
            self.version,
            frozen_clock=self.clock is not None,
            listener=(self.secure, self.tls) if self.secure is not None and self.tls is not None else None,
            config=self.config,
        )

    def _write_files(self) -> None:
        assert self.tmpdir is not None
        (self.tmpdir / "logs").mkdir(exist_ok=True)
        (self.tmpdir / "jvm-tmp").mkdir(exist_ok=True)
        if self.secure is not None and self.tls is None:
            self.tls = tls.make_files(self.tmpdir / "tls")
        broker_config.write_files(self.tmpdir, self.version, self.properties())

    def _java(self, lib: Path, main: str, *args: str) -> list[str]:
        assert self.tmpdir is not None
        return broker_config.java_command(self.tmpdir, self.version, self.heap, lib, main, *args)

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.faketime_offset_s is not None:
            env.update(
                {
                    "LD_PRELOAD": faketime_library(),
                    "FAKETIME": f"{self.faketime_offset_s:+g}s",
                    "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                    "FAKETIME_FORCE_MONOTONIC_FIX": "0",
                }
            )
        if self.clock is not None:
            env.update(self.clock.environment())
        return env

    def _format(self, lib: Path) -> None:
        self.format_done(self._format_begin(lib))

    def _format_begin(self, lib: Path) -> subprocess.Popen:
        assert self.tmpdir is not None
        cmd = self._java(
            lib,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            self.cluster_id,
            "-c",
            str(self.tmpdir / "server.properties"),
            "--ignore-formatted",
            *(tls.scram_arguments(self.secure) if self.secure is not None else ()),
        )
        with open(self.tmpdir / "format.log", "wb") as out, signals_deferred():
            proc = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self._env(),
                preexec_fn=child_setup,
            )
            self._children.append(proc)
        return proc

    def format_done(self, proc: subprocess.Popen) -> None:
        assert self.tmpdir is not None
        try:
            code = proc.wait(timeout=60)
        except BaseException:
            kill_group(proc)
            raise
        self._children.remove(proc)
        if code != 0:
            tail = (self.tmpdir / "format.log").read_text(errors="replace").strip().splitlines()[-15:]
            cause = next((line.split("Exception: ", 1)[1] for line in tail if "Exception: " in line), "see below")
            raise BrokerError(f"{cause} (Kafka {self.version}'s StorageTool format, exit {code}):\n" + "\n".join(tail))

    def launch(self, lib: Path) -> None:
        assert self.tmpdir is not None
        with open(self.tmpdir / "console.log", "ab") as out, signals_deferred():
            self.process = subprocess.Popen(
                self._java(lib, "kafka.Kafka", str(self.tmpdir / "server.properties")),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.tmpdir,
                start_new_session=True,
                env=self._env(),
                preexec_fn=child_setup,
            )
            self._children.append(self.process)

    def wait_ready(self) -> None:
        from ..client.security import PLAINTEXT  # lazy, like wire: it loads kafka-python
        from ..client.wire import Client, WireError  # lazy: wire imports nothing from here

        started = time.monotonic()
        deadline, cap, logged = started + self.ready_timeout_s, started + max(READY_CAP_S, self.ready_timeout_s), 0
        last = "no connection yet"
        while time.monotonic() < min(deadline, cap):
            if (size := self.logged_bytes()) > logged:  # still starting: the bound counts from its last line
                deadline, logged = time.monotonic() + self.ready_timeout_s, size
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise BrokerError(f"Kafka {self.version} exited with code {code} before answering:\n{self.log_tail()}")
            try:
                with Client(self.bootstrap, timeout_s=2, security=PLAINTEXT) as client:  # not $KTC_KAFKA_CONFIG
                    client.api_versions()
                if self.secure is not None:  # and the SASL_SSL listener: TLS, then SCRAM from the metadata log
                    with Client(self.secure_bootstrap, timeout_s=2, security=self.client_security()) as client:
                        client.api_versions()
                return
            except (OSError, WireError) as error:
                last = f"{type(error).__name__}: {error}"
            time.sleep(0.05)
        raise BrokerError(
            f"Kafka {self.version} did not answer ApiVersions on {self.bootstrap} within "
            f"{time.monotonic() - started:.0f} s (its log quiet for {self.ready_timeout_s:.0f} s, or "
            f"{READY_CAP_S:.0f} s in all; last: {last}):\n{self.log_tail()}"
        )

    def _kill(self) -> None:
        for child in list(self._children):
            kill_group(child)
            if self.faketime_offset_s is not None:
                _remove_faketime_shm(child.pid)
        self._children = [c for c in self._children if c.returncode is None]


def _remove_faketime_shm(pid: int) -> None:
    """libfaketime makes a POSIX shm and semaphore per process and removes them in its destructor,
    which a SIGKILLed JVM never runs: remove them for it."""
    for name in (f"/dev/shm/faketime_shm_{pid}", f"/dev/shm/sem.faketime_sem_{pid}"):
        with contextlib.suppress(OSError):
            os.unlink(name)


if __name__ == "__main__":  # python -m ktc.kafka.processes.broker [VERSION]: start, time, stop
    with LocalBroker(sys.argv[1] if len(sys.argv) > 1 else provision.DEFAULT_VERSIONS[0]) as b:
        print(f"Kafka {b.version} on {b.bootstrap} (pid {b.pid}) ready in {b.startup_s:.2f} s; dir {b.tmpdir}")
