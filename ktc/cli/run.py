"""``ktc run`` as a process: where its report goes, the checks made before any work, and the pytest
child it supervises.

Each run writes its own directory ``<report root>/<UTC time>-<id>/`` (default root ``./ktc-report``)
and moves ``<root>/latest`` to it only once pytest has finished; nothing an earlier run wrote is
touched.  The child runs in its own process group: SIGINT and SIGTERM given to ``ktc`` are passed on
to that whole group (pytest, its xdist workers, and through their handlers the brokers and Spark
they started), and a group that has not exited ``GRACE_S`` later is killed.  If ktc itself is
killed outright (SIGKILL), the kernel sends the child SIGTERM (``die_with_parent``) and the child
passes it on to its group.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ktc.cli.common import UsageError

GRACE_S = 60.0
FINISHED = (0, 1)  # pytest's exit codes of a run that ran: all passed / some failed


def new_run_directory(root: Path) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    directory = root / f"{stamp}-{secrets.token_hex(3)}"
    try:
        directory.mkdir(parents=True)
    except OSError as error:
        raise UsageError(
            f"--report {root}: cannot create {directory.name} there ({error.strerror}); give a writable directory"
        ) from None
    return directory


def point_latest(root: Path, run: Path) -> None:
    """Move ``root/latest`` to ``run`` atomically (a new link renamed over the old one)."""
    link = root / f".latest.{os.getpid()}"
    link.symlink_to(run.name)
    os.replace(link, root / "latest")


MAX_DEFAULT_WORKERS = 8


def default_workers(targets: int) -> str:
    """pytest-xdist workers when ``--workers`` is not given: one more than the targets (each target that is not
    the reference is one xdist group, run whole on one worker), one more than the machine has cores, at most
    eight.  A worker spends part of its time waiting on what it started (a broker's answer, a JVM starting,
    Kafka 3.7's first retention pass): on two cores a third worker fills those waits (ktc's own CI, 46 groups:
    683 s -> 617 s of pytest in the same half hour; benchmarks/README.md); a fourth only adds contention."""
    return str(min(targets + 1, (os.cpu_count() or 1) + 1, MAX_DEFAULT_WORKERS))


def workers(value: str) -> str:
    if not value.isdigit() and value != "auto":
        raise UsageError(f"--workers {value!r}: expected a whole number of pytest-xdist workers (0 for none) or 'auto'")
    return value


def timeout_arg(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):  # also refuses nan
        raise UsageError(f"--impl-timeout {value!r}: expected seconds >= 0 (0 for no bound)")
    return seconds


def seed_arg(value: str) -> int:
    """``--seed``: the run's Hypothesis seed, a whole number >= 0 (as pytest's ``--hypothesis-seed`` takes it)."""
    if not value.isdigit():
        raise UsageError(f"--seed {value!r}: expected a whole number >= 0 (the seed a run printed: 'seed N')")
    return int(value)


def check_pytest_args(args: list[str]) -> None:
    """Let pytest parse the extra arguments now (collect-only, plus an empty directory so that it never
    collects the current one on its own): an argument it refuses is one line and exit 2 before the run."""
    if not args:
        return
    with tempfile.TemporaryDirectory(prefix="ktc-args-") as empty:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", empty, *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
    if done.returncode in (3, 4):  # internal error / usage error
        said = [line for line in done.stderr.splitlines() if "error" in line.lower()] or done.stderr.splitlines()
        raise UsageError(
            "pytest refused the arguments after --: "
            + (said[-1].split("error:", 1)[-1].strip() if said else f"exit {done.returncode}")
        )


PROGRESS_FD = "KTC_PROGRESS_FD"  # ktc/plugin/progress.py writes its events there
SUPERVISED = "KTC_SUPERVISED"  # tells the pytest child to pass a SIGTERM on to its whole group


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when ktc dies, even by SIGKILL (Linux prctl PR_SET_PDEATHSIG);
    the child passes it on to its group (ktc/plugin), so nothing of the run outlives ktc."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the signal forwarding below still covers SIGINT/SIGTERM
        pass


class Child:
    """The pytest child, in its own process group; signals given to us are passed to that group.

    With ``log``, everything the child and what it starts print (pytest, Spark, the JVMs) goes to that
    file, not to the terminal; with ``watcher`` (ktc/cli/progress.py) its progress events reach us
    through a pipe."""

    def __init__(self, argv: list[str], env: dict, log: Path | None = None, watcher=None):
        env = {**env, SUPERVISED: "1"}
        fds = (watcher.write_fd,) if watcher is not None else ()
        if watcher is not None:
            env[PROGRESS_FD] = str(watcher.write_fd)
        with open(log, "ab") if log is not None else contextlib.nullcontext() as sink:
            self.process = subprocess.Popen(
                argv,
                env=env,
                start_new_session=True,
                preexec_fn=die_with_parent,
                pass_fds=fds,
                stdout=sink,
                stderr=subprocess.STDOUT if sink else None,
            )
        if watcher is not None:
            watcher.start()
        self.signalled: int | None = None
        self.deadline: float | None = None

    def forward(self, signum, frame) -> None:
        self.signalled, self.deadline = signum, time.monotonic() + GRACE_S
        self.kill_group(signum)

    def kill_group(self, signum) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def wait(self) -> int:
        handlers = {s: signal.signal(s, self.forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            return self.wait_bounded()
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            self.kill_group(signal.SIGKILL)  # whatever is left of the group (nothing, normally)

    def wait_bounded(self) -> int:
        while True:
            try:
                code = self.process.wait(timeout=0.5)
                return 128 + self.signalled if self.signalled else code
            except subprocess.TimeoutExpired:
                if self.deadline is not None and time.monotonic() > self.deadline:
                    self.kill_group(signal.SIGKILL)
