"""A Docker engine for the container tier: the user's own, or a ``dockerd`` ktc starts for the run.

``obtain`` prefers the user's engine -- ``DOCKER_HOST`` when set, else the default socket -- and never
starts, stops or configures it.  When none answers and this process can start one (root, Debian's
``docker.io`` installed: ``./run`` installs it), it starts a ``dockerd`` of its own:

* its home is ``<cache>/docker/<pid>-<random>/`` (``$KTC_CACHE``, default ``~/.cache/ktc``): the data root
  (images, containers) and its log live there; the socket and the exec root (containerd's sockets, pid
  files) too, unless the path is too long for a unix socket's 108 bytes -- then they live in
  ``/tmp/ktcd-<pid>-<random>/`` and the home names that directory in its file ``state``;
* ``--bridge=none --iptables=false``: no bridge, no NAT rules; containers use the host's network;
* it dies with the process that started it (``PR_SET_PDEATHSIG`` = SIGTERM: dockerd's own shutdown
  stops its containers), and ``stop`` removes its home and state, every leftover process (found by
  those paths on their command lines), container (``runc delete --force``) and mount included.  A home
  whose process is gone (the run was SIGKILLed) is what ``ktc clean --containers`` removes (clean.py).

A fresh home per run: two runs on one machine never share an engine, and a run leaves no data root.
The image is cached outside it (image.py), so a run's engine imports it in a second or two.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ktc.kafka.processes import provision
from ktc.kafka.processes.lifecycle import signals_deferred

DEFAULT_URL = "unix:///var/run/docker.sock"
ENGINES = "docker"  # under the cache root: one home per engine ktc started
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
# AF_UNIX paths hold 107 bytes; the longest dockerd makes under its exec root is containerd's debug socket.
SOCKET_ROOM = 107 - len("/exec/containerd/containerd-debug.sock")


class EngineError(RuntimeError):
    """No Docker engine answers and ktc cannot start one; the message says why, in one line."""


def engines_root() -> Path:
    return provision.cache_root() / ENGINES


def user_url(environ=os.environ) -> str:
    return environ.get("DOCKER_HOST") or DEFAULT_URL


def answers(url: str, timeout_s: float = 5.0) -> str | None:
    """None when the engine at ``url`` answers a ping; otherwise why not, in one line."""
    try:
        import docker
    except ImportError:
        return "the docker package is not installed (pip install -e '.[broker]')"
    try:
        client = docker.DockerClient(base_url=url, timeout=timeout_s)
        try:
            client.ping()
        finally:
            client.close()
        return None
    except Exception as error:  # docker raises several unrelated types for "no engine"
        return (str(error).splitlines() or [type(error).__name__])[0][:160]


def cannot_start() -> str | None:
    """Why this process cannot start a ``dockerd`` of its own, or None."""
    missing = [name for name in ("dockerd", "containerd", "runc") if shutil.which(name) is None]
    if missing:
        return f"{', '.join(missing)} not on PATH (apt-get install docker.io; ./run does it as root)"
    if os.geteuid() != 0:
        return "starting dockerd needs root (or start a Docker engine and set DOCKER_HOST)"
    return None


def problem(environ=os.environ) -> str | None:
    """None when ``obtain`` can give an engine (one answers, or ktc can start one); else why not."""
    url = user_url(environ)
    why = answers(url)
    if why is None:
        return None
    own = cannot_start()
    return None if own is None else f"no Docker engine answers at {url} ({why}), and ktc cannot start one: {own}"


class Engine:
    """A Docker engine to talk to: the user's (``own`` None, never touched) or a dockerd ktc started."""

    def __init__(self, url: str, own: OwnDockerd | None = None):
        self.url, self.own = url, own

    def client(self, timeout_s: float = 120.0):
        import docker

        return docker.DockerClient(base_url=self.url, timeout=timeout_s)

    def client_settings(self) -> dict:
        """testcontainers' ``docker_client_kw``: this engine, whatever DOCKER_HOST says."""
        return {"environment": {"DOCKER_HOST": self.url}}

    def describe(self) -> str:
        return f"ktc's own dockerd ({self.own.home})" if self.own else f"the Docker engine at {self.url}"

    def stop(self) -> None:
        if self.own is not None:
            self.own.stop()


def obtain(environ=os.environ) -> Engine:
    """The user's engine when one answers; else a dockerd ktc starts now (EngineError when it cannot)."""
    url = user_url(environ)
    why = answers(url)
    if why is None:
        return Engine(url)
    own = cannot_start()
    if own is not None:
        raise EngineError(f"no Docker engine answers at {url} ({why}), and ktc cannot start one: {own}")
    own_engine = OwnDockerd.make()
    return Engine(own_engine.url, own_engine)


class OwnDockerd:
    """A dockerd ktc started, with its home (data root, log) and state (exec root, socket)."""

    def __init__(self, home: Path):
        self.home, self.process = home, None
        self.state = state_of(home)

    @classmethod
    def make(cls) -> OwnDockerd:
        with signals_deferred():
            root = engines_root()
            root.mkdir(parents=True, exist_ok=True)
            home = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))
            if len(str(home)) > SOCKET_ROOM:  # a long cache path: the sockets go to a short one
                state = Path(tempfile.mkdtemp(prefix=f"ktcd-{home.name}-", dir="/tmp"))
                (home / "state").write_text(str(state))
            own = cls(home)
        own.start()
        return own

    @property
    def url(self) -> str:
        return f"unix://{self.state / 'docker.sock'}"

    def command(self) -> list[str]:
        return [
            "dockerd",
            "--data-root",
            str(self.home / "root"),
            "--exec-root",
            str(self.state / "exec"),
            "-H",
            self.url,
            "--pidfile",
            str(self.state / "exec" / "docker.pid"),
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
            "--ip-masq=false",
        ]

    def start(self) -> None:
        try:
            with open(self.home / "dockerd.log", "ab") as log, signals_deferred():
                self.process = subprocess.Popen(
                    self.command(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=die_with_parent,
                )
            self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EngineError(f"dockerd exited with code {self.process.returncode}: {self.log_tail()}")
            if answers(self.url, timeout_s=2) is None:
                return
            time.sleep(0.1)
        raise EngineError(f"dockerd did not answer on {self.url} within {START_TIMEOUT_S:.0f} s: {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        with contextlib.suppress(OSError):
            text = (self.home / "dockerd.log").read_text(errors="replace").strip().splitlines()
            return " | ".join(text[-lines:])[-600:]
        return "no log"

    def stop(self) -> None:
        """dockerd's own shutdown (SIGTERM), then everything left under its paths goes.  Idempotent."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT_S)
        purge(self.home)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)


# ---- what an engine ktc started leaves, and its removal ---------------------------------------


def state_of(home: Path) -> Path:
    with contextlib.suppress(OSError):
        return Path((home / "state").read_text().strip())
    return home


def purge(home: Path) -> None:
    """Remove an engine's containers, processes, mounts, state and home (nothing of it survives)."""
    state = state_of(home)
    delete_runc_containers(state / "exec" / "runtime-runc" / "moby")
    kill_referencing({str(home), str(state)})
    unmount_under({home, state})
    for path in {home, state}:
        shutil.rmtree(path, ignore_errors=True)


def delete_runc_containers(runc_root: Path) -> None:
    """Kill and delete every container runc knows under ``runc_root`` (its shim may be gone)."""
    if not runc_root.is_dir() or shutil.which("runc") is None:
        return
    listed = subprocess.run(
        ["runc", "--root", str(runc_root), "list", "-q"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    for cid in listed.stdout.split():
        subprocess.run(
            ["runc", "--root", str(runc_root), "delete", "--force", cid],
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )


def referencing(paths: set[str]) -> list[int]:
    """Processes whose command line names one of ``paths`` (dockerd, containerd, its shims)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            line = (entry / "cmdline").read_bytes().decode(errors="replace")
            if any(path in line for path in paths):
                found.append(int(entry.name))
    return found


def kill_referencing(paths: set[str], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while (pids := referencing(paths)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        for pid in pids:  # our own children (dockerd) are reaped here; others' by their parent or init
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def mounts_under(roots: set[Path]) -> list[str]:
    prefixes = {str(root) for root in roots}
    with open("/proc/self/mountinfo") as table:
        points = [line.split()[4] for line in table]
    return [p for p in points if any(p == r or p.startswith(r + "/") for r in prefixes)]


def unmount_under(roots: set[Path]) -> None:
    for point in sorted(mounts_under(roots), key=len, reverse=True):
        _umount(point)


def _umount(point: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(point.encode(), 2)  # MNT_DETACH: the mount goes even while something still holds it


_PRCTL = ctypes.CDLL(None).prctl  # loaded now: dlopen between fork and exec can deadlock


def die_with_parent() -> None:  # runs in dockerd's process between fork and exec
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _PRCTL(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG: dockerd shuts down (and stops its containers) with us
