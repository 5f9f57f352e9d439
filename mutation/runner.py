"""Running the reference-tier suites against each mutant, in parallel, each in a fresh forked child.

Each worker process owns a copy of the rule modules (mutation/subject.py) and has pytest, Hypothesis
and ktc imported once.  Per mutant it writes the mutated module, forks, and the child runs the
reference-tier suites against ``MutantImplementation`` with ``-x`` (first failure ends it); the parent
restores the module.  The child imports the copy afresh, so nothing of one mutant reaches the next.
Results are data (``Outcome``); mutation/report.py renders them.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .subject import ROOT, copy_into

if TYPE_CHECKING:  # only a type here: the kill table (suites/selftest) forks with run_all without cosmic-ray
    from .mutants import Mutant

# Fast, decisive suites first: pinned tables and deviations, then the KIPs' properties, then histories.
SUITES = ("pinned", "deviations", "kip937", "kip228", "kip32", "kip33", "kip870", "stateful")
IMPL = "mutation.subject:MutantImplementation"
# A few examples per property first (most mutants die there in seconds); a mutant that survives them
# is run again under the ci profile's example count, which decides it.  Profiles: conftest.py.
PHASES = ("mutation-quick", "mutation")


@dataclass(frozen=True)
class Outcome:
    key: str
    status: str  # killed | survived | timeout | error | no-op
    seconds: float
    phase: str = ""  # the Hypothesis profile that decided it
    test: str | None = None  # the first failing test (killed)
    clauses: tuple[str, ...] = ()  # the clauses that test cites
    cpu: float = 0.0  # CPU seconds of its pytest runs (what the timeout counts: load does not)


def pytest_args(seed: int) -> list[str]:
    return [
        *(str(ROOT / "suites" / s) for s in SUITES),
        "--rootdir",
        str(ROOT),
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        f"--impl={IMPL}",
        f"--hypothesis-seed={seed}",
    ]


class FirstFailure:
    """A pytest plugin that notes the first failing test and the clauses it cites."""

    def __init__(self, out: Path):
        self.out, self.clauses = out, {}

    def pytest_collection_modifyitems(self, items):
        from ktc.plugin.plan import cited  # the plugin's own reading of @pytest.mark.clause

        self.clauses = {i.nodeid: list(cited(i)) for i in items}

    def pytest_runtest_logreport(self, report):
        if report.failed and not self.out.exists():
            self.out.write_text("\n".join([report.nodeid, *self.clauses.get(report.nodeid, [])]))


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """PR_SET_PDEATHSIG: the kernel sends ``signum`` to this process when its parent dies (Ctrl-C, a kill)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signum))
    except (OSError, AttributeError):  # not Linux: a killed worker may leave its child to finish
        pass


def run_child(args: list[str], plugin, log: Path) -> None:
    """In the forked child: run pytest quietly (its output in ``log``) and exit with its code."""
    import pytest

    die_with_parent()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        code = int(pytest.main(args, plugins=[plugin] if plugin is not None else []))
    except BaseException:
        code = 3
    os._exit(code)


def forked(args: list[str], scratch: Path, timeout_s: float, profile: str) -> tuple[str, str | None, tuple, float]:
    """(status, first failing test, its clauses, CPU seconds) of one pytest run in a forked child."""
    out, log = scratch / "first-failure", scratch / "pytest.log"
    out.unlink(missing_ok=True)
    code, cpu = in_child(args, FirstFailure(out), log, timeout_s, profile)
    lines = out.read_text().splitlines() if out.exists() else []
    if code is None:
        return "timeout", None, (), cpu
    if code == 0:
        return "survived", None, (), cpu
    if code == 1 and lines:
        return "killed", lines[0], tuple(lines[1:]), cpu
    return "error", f"pytest exit {code}: see {log}", (), cpu


def in_child(args: list[str], plugin, log: Path, timeout_s: float, profile: str) -> tuple[int | None, float]:
    """(pytest's exit code or None on timeout, CPU seconds) of ``pytest.main(args)`` in a forked child."""
    pid = os.fork()
    if pid == 0:
        os.environ["HYPOTHESIS_PROFILE"] = profile  # read when the child imports the root conftest.py
        run_child(args, plugin, log)
    try:
        return wait_for(pid, timeout_s)
    except BaseException:  # stopped (Ctrl-C, SIGTERM): the child goes first, so nothing writes after cleanup
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise


def wait_for(pid: int, timeout_s: float) -> tuple[int | None, float]:
    """(exit code, CPU seconds) of the child, or (None, ...) after killing it once it has used
    ``timeout_s`` of CPU (a looping mutant) or ten times that of wall clock (a stuck one)."""
    deadline = time.monotonic() + 10 * timeout_s
    while time.monotonic() < deadline:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime
        if cpu_seconds(pid) > timeout_s:
            break
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    _, _, usage = os.wait4(pid, 0)
    return None, usage.ru_utime + usage.ru_stime


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc; 0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker(jobs, results, seed: int, timeout_s: float, task=None) -> None:
    """One worker process: its own copy, warm imports, then mutants until it reads None."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the work directory is removed
    die_with_parent(signal.SIGTERM)  # a killed `python -m mutation` takes its workers with it
    workdir = Path(tempfile.mkdtemp(prefix="ktc-mutate-"))
    try:
        copy_into(workdir)
        sys.path.insert(0, str(workdir))
        os.chdir(ROOT)
        import hypothesis  # noqa: E401,F401  warm once, shared by every fork

        for job in iter(jobs.get, None):
            results.put((task or run_one)(job, workdir, seed, timeout_s))
    except KeyboardInterrupt:
        pass
    finally:  # a second signal (Ctrl-C, then PDEATHSIG as the parent exits) must not cut the cleanup short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        shutil.rmtree(workdir, ignore_errors=True)


def run_one(mutant: Mutant, workdir: Path, seed: int, timeout_s: float) -> Outcome:
    mutated = mutant.mutated_source()
    if mutated is None:
        return Outcome(mutant.key, "no-op", 0.0)
    started, cpu = time.monotonic(), 0.0
    with applied(mutant, mutated, workdir):
        for phase in PHASES:
            status, test, clauses, used = forked(pytest_args(seed), workdir, timeout_s, phase)
            cpu += used
            if status != "survived":
                break
    return Outcome(mutant.key, status, round(time.monotonic() - started, 2), phase, test, clauses, round(cpu, 2))


@contextlib.contextmanager
def applied(mutant: Mutant, mutated: str, workdir: Path):
    """The worker's copy with this one mutant in it, restored afterwards."""
    target = workdir / "mutref" / Path(mutant.path).name
    original = target.read_text()
    try:
        target.write_text(mutated)
        yield
    finally:
        target.write_text(original)


def run_all(
    mutants: list, workers: int, seed: int, timeout_s: float, progress: Callable[[Outcome, int, int], None], task=None
) -> list:
    """Every mutant's outcome; ``progress(outcome, done, total)`` after each.  ``task(job, workdir, seed,
    timeout_s)`` (a module-level function) replaces ``run_one`` for other measurements."""
    context = multiprocessing.get_context("spawn")
    jobs, results = context.Queue(), context.Queue()
    for queue in (jobs, results):  # an interrupted run exits with jobs unread: its feeder must not wait for a reader
        queue.cancel_join_thread()
    for mutant in mutants:
        jobs.put(mutant)
    processes = [
        context.Process(target=worker, args=(jobs, results, seed, timeout_s, task), daemon=True) for _ in range(workers)
    ]
    for p in processes:
        jobs.put(None)
        p.start()
    outcomes = []
    try:
        for done in range(1, len(mutants) + 1):
            outcomes.append(results.get())
            progress(outcomes[-1], done, len(mutants))
    except KeyboardInterrupt:
        for p in processes:
            p.join(5)  # they saw the same Ctrl-C; their forked children die with them
        raise
    finally:
        for p in processes:
            p.terminate()
    return outcomes
