"""franz-go's fake Kafka broker (kfake), built from processes/kfake_go and run on loopback.

    with KfakeBroker() as broker:
        client = wire.Client(broker.bootstrap)
        ...

``build()`` compiles implementations/kafka/processes/kfake_go (our launcher, which imports kfake as a Go module) with
``go build`` into ``$KTC_CACHE/kfake/<version>/kfake`` (default cache ``~/.cache/ktc``), once:
a binary whose ``.source`` stamp matches the launcher's sources is reused at the cost of a
``stat`` and a hash of three small files.  ``KfakeBroker`` starts that binary in its own process
group with stdin a pipe (the launcher stops at EOF, so it dies with us) and ``PR_SET_PDEATHSIG``,
reads the ``KTC_KFAKE_LISTENING host:port`` line, and is stopped like a ``LocalBroker``: on
``__exit__``, at exit and on SIGINT/SIGTERM (processes/lifecycle.py), by SIGKILL of its group.
Without ``data_dir`` its state is in memory; with one (``-data-dir``: kfake.DataDir) kfake writes its topics and
segments there as they change, and ``relaunch()`` (SIGKILL, then the same port and directory) finds them again.

    python -m ktc.implementations.kafka.processes.kfake [--build-only]     # KTC_KFAKE_VERSION=newest|pinned|<version>
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from ktc.cache import holding
from ktc.kafka.processes import lifecycle, provision

TOOL_DIR = Path(__file__).resolve().parent / "kfake_go"  # package data: the wheel carries the Go sources
MODULE = "github.com/twmb/franz-go/pkg/kfake"
READY_LINE = "KTC_KFAKE_LISTENING "
READY_TIMEOUT_S = 15.0
BUILD_TIMEOUT_S = 900.0
SOURCES = ("go.mod", "go.sum", "main.go")


class KfakeError(RuntimeError):
    """kfake could not be built or started; the message is one actionable line."""


def pinned_version(go_mod: Path = TOOL_DIR / "go.mod") -> str:
    """The kfake module version implementations/kafka/processes/kfake_go/go.mod requires."""
    try:
        text = go_mod.read_text()
    except OSError as error:
        raise KfakeError(f"cannot read {go_mod}: {error.strerror} (is the ktc checkout complete?)") from None
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(\S+)", text, re.MULTILINE)
    if found is None:
        raise KfakeError(f"{go_mod} does not require {MODULE}")
    return found.group(1)


KFAKE_VERSION = pinned_version()


# ---- building ----------------------------------------------------------------------------------


def newest_version(timeout_s: float = 60.0) -> str | None:
    """The newest kfake the Go module proxy serves (``go list -m MODULE@latest``), or None when it cannot
    say (offline, no Go): the caller then keeps the pinned one and says so."""
    go = shutil.which("go")
    if go is None:
        return None
    try:
        done = subprocess.run(
            [go, "list", "-m", "-f", "{{.Version}}", f"{MODULE}@latest"],
            cwd=TOOL_DIR,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and found.startswith("v") else None


GO_VERSION = re.compile(r"^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+incompatible)?$")  # semver, pseudo-versions too


def chosen_version(wanted: str) -> tuple[str, str]:
    """(version, how it was chosen) for ``KTC_KFAKE_VERSION``: ``pinned`` (the default: go.mod's),
    ``newest`` (the proxy's latest, else the pinned one, said), or an exact module version."""
    if wanted in ("", "pinned"):
        return KFAKE_VERSION, "pinned in kfake_go/go.mod"
    if wanted != "newest":
        if not GO_VERSION.match(wanted):
            raise ValueError(
                f"KTC_KFAKE_VERSION={wanted!r}: expected pinned, newest, or a Go module version of "
                f"github.com/twmb/franz-go/pkg/kfake such as {KFAKE_VERSION}"
            )
        return wanted, "given with KTC_KFAKE_VERSION"
    newest = newest_version()
    if newest is None:
        return KFAKE_VERSION, "the pinned one: the Go module proxy did not answer for the newest"
    return newest, "the newest the Go module proxy serves" + (" (= pinned)" if newest == KFAKE_VERSION else "")


def binary_path(version: str = KFAKE_VERSION) -> Path:
    """Where ``build`` puts the binary: ``<cache>/kfake/<version>/kfake``."""
    return provision.cache_root() / "kfake" / version / "kfake"


def source_digest(tool_dir: Path = TOOL_DIR) -> str:
    """sha256 of the launcher's sources, so an edited main.go or go.mod is rebuilt."""
    digest = hashlib.sha256()
    for name in SOURCES:
        path = tool_dir / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    return digest.hexdigest()


def built(version: str = KFAKE_VERSION) -> bool:
    """Whether a binary of ``version`` built from the current launcher sources is cached."""
    stamp = binary_path(version).with_name(".source")
    return binary_path(version).exists() and stamp.exists() and stamp.read_text().strip() == source_digest()


def build(version: str = KFAKE_VERSION, *, timeout_s: float = BUILD_TIMEOUT_S) -> Path:
    """The kfake binary at ``version``, compiled first with ``go build`` unless a current one is cached.  One
    build at a time (``<version>/.build.lock``): a process that needs kfake while another builds it (``./run``'s
    setup, a second run) waits for that build instead of compiling beside it."""
    target = binary_path(version)
    if built(version):
        return target
    with holding(target.with_name(".build.lock")):
        return built_now(version, target, timeout_s)


def built_now(version: str, target: Path, timeout_s: float) -> Path:
    """``build``'s work, under its lock: nothing when the build it waited for left a current binary."""
    if built(version):
        return target
    go = shutil.which("go")
    if go is None:
        raise KfakeError(
            "the Go toolchain (go) is not on PATH: install Go 1.26+ to build the kfake broker "
            f"from {TOOL_DIR}, or leave the kfake implementation out"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkstemp(prefix="kfake-", dir=target.parent)[1])
    try:
        with module_at(go, version, timeout_s) as module:
            _go_build(go, module, partial, timeout_s)
        os.replace(partial, target)  # atomic: a concurrent build never leaves half a binary
        target.with_name(".source").write_text(source_digest() + "\n")
    finally:
        partial.unlink(missing_ok=True)
    return target


@contextlib.contextmanager
def module_at(go: str, version: str, timeout_s: float):
    """The launcher's module directory requiring kfake at ``version``: TOOL_DIR itself for the pinned
    one, else a temporary copy whose go.mod ``go get`` moved to that version."""
    if version == KFAKE_VERSION:
        yield TOOL_DIR
        return
    with tempfile.TemporaryDirectory(prefix="ktc-kfake-module-") as scratch:
        for name in SOURCES:
            shutil.copy(TOOL_DIR / name, scratch)
        _go(go, ["get", f"{MODULE}@{version}"], Path(scratch), timeout_s, f"go get {MODULE}@{version}")
        _go(go, ["mod", "tidy"], Path(scratch), timeout_s, "go mod tidy")
        yield Path(scratch)


def _go_build(go: str, module: Path, output: Path, timeout_s: float) -> None:
    """Run ``go build`` of ``module`` into ``output``.  Without ``-trimpath``: a trimmed build's packages are
    cached under other keys than ``go vet``'s, so the hunt's Go check (ktc/hunt/go_test.py), which vets a test
    inside this module, compiled franz-go's packages again (24 s on an empty cache after this build, 4.4 s
    without the flag)."""
    _go(
        go,
        ["build", "-buildvcs=false", "-o", str(output), "."],
        module,
        timeout_s,
        f"go build of {TOOL_DIR}",
    )


def _go(go: str, args: list[str], cwd: Path, timeout_s: float, what: str) -> None:
    """Run one go command; KfakeError with the tail of go's output when it fails."""
    try:
        done = subprocess.run(
            [go, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise KfakeError(
            f"{what} did not finish within {timeout_s:.0f} s (is the Go module proxy reachable? see `go env GOPROXY`)"
        ) from None
    except OSError as error:
        raise KfakeError(f"could not run {go}: {error}") from None
    if done.returncode != 0:
        raise KfakeError(
            f"{what} failed (exit {done.returncode}): "
            f"{_tail(done.stdout + done.stderr)} (check `go version` >= 1.26 and the module proxy)"
        )


def _tail(output: str, lines: int = 4) -> str:
    """The last ``lines`` non-empty lines of ``output`` on one line."""
    kept = [line.strip() for line in output.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "no output"


# ---- the broker --------------------------------------------------------------------------------


class KfakeBroker:
    """One kfake broker (node id 0) on 127.0.0.1; ``bootstrap`` is its address once started."""

    def __init__(
        self,
        *,
        port: int = 0,
        config: dict[str, object] | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        version: str = KFAKE_VERSION,
        data_dir: Path | None = None,
        sync_writes: bool = False,
    ):
        self.port, self.version = port, version
        self.data_dir, self.sync_writes = data_dir, sync_writes
        self.config = dict(config or {})
        self.ready_timeout_s = ready_timeout_s
        self.process: subprocess.Popen | None = None
        self.address: str | None = None
        self.startup_s: float | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        """``host:port`` the broker listens on (after ``start``)."""
        assert self.address is not None, "start the broker first"
        return self.address

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> KfakeBroker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> KfakeBroker:
        """Build if needed, launch, and wait for the listening line; stops itself on failure."""
        binary = build(self.version)  # before the clock starts: a cold build is not start time
        t0 = time.monotonic()
        self._launched(binary)
        self.startup_s = time.monotonic() - t0
        return self

    def _launched(self, binary: Path) -> None:
        """Launch ``binary`` and wait for its listening line; stop everything if it does not come."""
        try:
            self._launch(binary)
            self.address = self._wait_listening()
        except BaseException:
            self.stop()
            raise

    def relaunch(self) -> None:
        """SIGKILL the broker's process group (no clean shutdown: nothing saved beyond what kfake wrote as it
        went) and start it again on the same port and ``data_dir``; wait for its listening line."""
        binary = build(self.version)
        self._kill()
        self.port = int(self.bootstrap.rpartition(":")[2])
        self._launched(binary)

    def stop(self) -> None:
        """SIGKILL the broker's process group and close our pipes (what it keeps in ``data_dir`` is its
        owner's to remove). Idempotent, and safe to re-enter from a signal handler: every step is repeated,
        never skipped on a flag."""
        self._kill()
        lifecycle.release(self)

    def _kill(self) -> None:
        if self.process is not None:
            lifecycle.kill_group(self.process)
            for pipe in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()

    def command(self, binary: Path) -> list[str]:
        """The launcher's command line: port, data directory and broker configs."""
        return [
            str(binary),
            "-port",
            str(self.port),
            *(("-data-dir", str(self.data_dir)) if self.data_dir is not None else ()),
            *(("-sync-writes",) if self.sync_writes else ()),
            *(arg for k, v in self.config.items() for arg in ("-config", f"{k}={v}")),
        ]

    def stderr_tail(self, lines: int = 10) -> str:
        """The last lines the launcher wrote to stderr, on one line."""
        if self._stderr is None or self._stderr.closed:
            return "no output"
        fd = self._stderr.fileno()  # pread: the child shares this file's offset, so never move it
        return _tail(os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace"), lines)

    # -- internals
    def _launch(self, binary: Path) -> None:
        """Start the binary in its own session, registered for cleanup with signals held meanwhile."""
        self._stderr = tempfile.TemporaryFile(prefix="ktc-kfake-")
        with lifecycle.signals_deferred():
            self.process = subprocess.Popen(
                self.command(binary),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
                preexec_fn=lifecycle.child_setup,
            )
            lifecycle.keep_stopped(self)

    def _wait_listening(self) -> str:
        """Read stdout until the ``KTC_KFAKE_LISTENING host:port`` line; return the address."""
        assert self.process is not None and self.process.stdout is not None
        fd, seen = self.process.stdout.fileno(), b""
        deadline = time.monotonic() + self.ready_timeout_s
        while b"\n" not in seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise KfakeError(
                    f"kfake printed no listening line within {self.ready_timeout_s:.0f} s: {self.stderr_tail()}"
                )
            if select.select([fd], [], [], min(left, 0.5))[0]:
                chunk = os.read(fd, 4096)
                if not chunk:
                    code = self.process.wait(timeout=5)
                    raise KfakeError(f"kfake exited with code {code} before listening: {self.stderr_tail()}")
                seen += chunk
        line = seen.split(b"\n", 1)[0].decode(errors="replace").strip()
        if not line.startswith(READY_LINE):
            raise KfakeError(f"kfake printed {line!r} instead of {READY_LINE.strip()} host:port")
        return line[len(READY_LINE) :].strip()


# ---- python -m ktc.implementations.kafka.processes.kfake ------------------------------------------


def main(argv: Sequence[str] = ()) -> int:
    """Build; unless ``--build-only``, start a broker, print its bootstrap and ApiVersions, and stop."""
    try:
        t0 = time.monotonic()
        version, how = chosen_version(os.environ.get("KTC_KFAKE_VERSION", ""))
        if not built(version):  # a newcomer's terminal says what the silent minute is
            print(f"kfake: building franz-go's kfake {version} with Go (once)", file=sys.stderr)
        path = build(version)
        print(f"kfake {version} ({how}): {path} ({time.monotonic() - t0:.1f} s)")
        if "--build-only" in argv:
            return 0
        with KfakeBroker(version=version) as kfake:
            print(f"kfake on {kfake.bootstrap} (pid {kfake.pid}) ready in {kfake.startup_s:.3f} s")
            _print_api_versions(kfake.bootstrap)
    except (KfakeError, ValueError) as error:  # ValueError: a malformed KTC_KFAKE_VERSION
        print(f"kfake: {error}", file=sys.stderr)
        return 1
    return 0


def _print_api_versions(bootstrap: str) -> None:
    """Print each API key's max version, named where the ktc client knows the API."""
    from ktc.kafka.client.security import PLAINTEXT  # lazy: these load kafka-python
    from ktc.kafka.client.wire import API_KEYS, Client

    names = {key: name for name, key in API_KEYS.items()}
    with Client(bootstrap, timeout_s=5, security=PLAINTEXT) as client:
        versions = client.api_versions()
    print("ApiVersions max: " + ", ".join(f"{names.get(k, k)}={v[1]}" for k, v in sorted(versions.items())))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
