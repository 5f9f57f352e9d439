"""A broker wall clock ktc sets: its JVM reads the instant from a file ktc rewrites in place.

The JVM of a broker ktc starts with a ``ControlledClock`` runs with ktc's own preload
(clock_c/ktcclock.c, built by clock_shim.py) and ``KTC_CLOCK_FILE``: every wall-clock read in the
JVM (``System.currentTimeMillis``, so Kafka's ``Time.SYSTEM.milliseconds()``) returns the int64
of epoch milliseconds in that file, frozen, with one atomic load from a shared mapping.  ktc
writes the 8 bytes in place through its own mapping; the next clock read sees them.  Monotonic
time is not touched, so Kafka's schedulers (retention checks, request timeouts, heartbeats) keep
running.  File mtimes follow the clock too: after each write to a regular file the preload sets its
mtime to the clock's instant, so Kafka's mtime fallback (a segment without timestamps, in retention
and ListOffsets) reads the broker's clock at the last append, as the model does -- measured: without
it, a ListOffsets after a one-minute Advance found offset 1 where the model finds none (the segment's
real-time mtime lay before the broker's clock).  One broker setting makes a frozen wall clock
workable: ``controller.quorum.append.linger.ms=0`` (the KRaft log's linger timer reads the wall
clock; frozen, the metadata log never flushes and the broker never finishes starting -- measured on
3.9.2).

Why not libfaketime (which the skewed-clock cluster uses for fixed offsets): with its timestamp
file re-read on every clock read (``FAKETIME_NO_CACHE=1``) the non-MT build races between JVM
threads (measured on 4.3.1: a setting echoed 1 ms late, another 4 minutes early, and a broker
hung past a 300 s bound), its MT build serialises every read behind a lock and a file parse
(bulk scenarios/s 0.70x of the host clock's), and its fraction is parsed as a double (``.249``
read as 248.999... ms: one setting in three echoed 1 ms early).

Every setting is verified by observation before it is trusted (``verify``: a LogAppendTime echo),
and the time it took to be seen is measured.  The broker's ``now`` is then known exactly, and an
operation is judged at that point instead of over [sent, received].  ``HostClock`` is the same
interface for a broker whose clock ktc does not control: the host's wall clock, judged over intervals.
"""

from __future__ import annotations

import contextlib
import mmap
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

# The broker settings a frozen wall clock needs.  controller.quorum.append.linger.ms: see the module docstring.
# broker.session.timeout.ms: a heartbeat in flight when the clock jumps is timed out on the wall clock and its
# channel reconnects only once the clock moves again (seen in broker logs: "name=heartbeat] Disconnecting from
# node 1 due to request timeout" at a one-hour jump); the controller fences a broker after this long without a
# heartbeat, counted in real time, and a fenced single broker leads nothing.  An hour outlasts any freeze.
FROZEN_CLOCK_CONFIG = {"controller.quorum.append.linger.ms": 0, "broker.session.timeout.ms": 3_600_000}
# While a broker restarts, or recovers from a stall, its clock runs with real time in steps of TICK_S.
TICK_S = 0.02
# Epoch milliseconds a Kafka record can carry as a wall-clock time: not before 1970, not past year 9999.
EARLIEST_MS, LATEST_MS = 0, 253_402_300_799_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ClockError(RuntimeError):
    """A clock setting ktc cannot make, or one the broker does not echo."""


class HostClock:
    """The host's wall clock: a broker ktc cannot set.  Operations are judged over [sent, received]."""

    exact = False

    def now(self) -> int:
        return now_ms()

    def stamp(self, observed_ms: int) -> int:
        return observed_ms

    def describe(self) -> str:
        return "the host's"


class ControlledClock:
    """A frozen broker wall clock, moved only by ``set``.  ``exact``: every stamp is the clock."""

    exact = True

    def __init__(self, library: Path, directory: Path | None = None, start_ms: int | None = None):
        self.library = library
        self._where = directory
        # (directory, mmap, cell): made once a broker needs it, so a clock only planned leaves none
        self._file: tuple[Path, mmap.mmap, memoryview] | None = None
        self.settings, self.highest = 0, EARLIEST_MS
        self.recoveries, self.stalled = 0, ""  # stalls the broker came out of with its clock running; one it did not
        self.observe: Callable[[], int] | None = None  # the broker's now as it echoes it (LogAppendTime), once it runs
        self.verification = Verification()
        self.set(now_ms() if start_ms is None else start_ms)

    @property
    def directory(self) -> Path:
        """The directory of the clock file the broker's preload maps (made on first use, again after ``remove``)."""
        return self._opened()[0]

    @property
    def path(self) -> Path:
        return self.directory / "now_ms"

    def _opened(self) -> tuple[Path, mmap.mmap, memoryview]:
        if self._file is None:
            directory = Path(self._where or tempfile.mkdtemp(prefix="ktc-clock-"))
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "now_ms").write_bytes(bytes(8))
            with open(directory / "now_ms", "r+b") as file:
                mapped = mmap.mmap(file.fileno(), 8)
            cell = memoryview(mapped).cast("q")  # one aligned int64: one store a setting
            cell[0] = self._now
            self._file = (directory, mapped, cell)
        return self._file

    def now(self) -> int:
        return self._now

    def stamp(self, observed_ms: int) -> int:
        """What the broker's clock read when something was observed: the setting, whatever the host says."""
        return self._now

    def describe(self) -> str:
        """Where the clock stands, against the host's (for a run that did not return)."""
        ahead_s = (self._now - now_ms()) / 1000
        instant = datetime.fromtimestamp(self._now / 1000, UTC).isoformat(timespec="milliseconds")
        return f"set by ktc to {instant} ({abs(ahead_s):.0f} s {'ahead of' if ahead_s >= 0 else 'behind'} the host's)"

    def set(self, ms: int) -> None:
        """Set the broker's clock to ``ms`` (epoch milliseconds), seen by its next clock read."""
        if not EARLIEST_MS <= ms <= LATEST_MS:
            raise ClockError(f"cannot set a broker clock to {ms} ms: outside years 1970..9999")
        if self._file is not None:
            self._file[2][0] = ms
        self._now, self.settings, self.highest = ms, self.settings + 1, max(self.highest, ms)
        if self.observe is not None:
            self.verify(ms, self.observe)

    def resume(self) -> None:
        """Set the clock to the host's now or, if a history left it later, to the latest setting so far.

        Never back between histories: a broker whose wall clock jumps back waits out deadlines it
        computed before the jump (Kafka's NetworkClient to the controller keeps reconnect backoffs and
        request deadlines on the wall clock) -- the likely cause of a run on 4.3.1 hanging past 300 s
        when every history started at the host's now.  Within a history a StepClock back is the point.

        A broker that does not echo the setting (``ClockError``) gets its clock running with real time until it
        echoes again (``recover``): between histories no verdict rests on the instant."""
        if self.stalled:
            raise ClockError(self.stalled)
        try:
            self.set(max(now_ms(), self.highest))
        except ClockError as error:
            if self.observe is None:
                raise
            self.recover(error)

    def recover(self, error: ClockError) -> None:
        """Let the clock run until the broker echoes it, once more for its patience; then set it where it stands.
        Kafka keeps some deadlines of the broker's channel to its controller on the wall clock: on a frozen clock a
        channel that had to reconnect never does, and a broker cut off from its controller leads nothing (its
        LogAppendTime echo answers NOT_LEADER_OR_FOLLOWER).  A broker that stays silent is ``stalled``: later
        resumes fail at once with the same line, not after another wait each."""
        observe = self.observe
        assert observe is not None
        try:
            with self.running():
                observe()
        except ClockError as again:
            self.stalled = f"{again} (also with its clock running, after: {error})"
            raise ClockError(self.stalled) from None
        self.recoveries += 1

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The clock runs with real time from where it stands (a setting every TICK_S, none echoed), then is set,
        and verified, where it got to."""
        observe, self.observe = self.observe, None
        start, began, stop = self._now, time.monotonic(), threading.Event()
        now = lambda: start + int((time.monotonic() - began) * 1000)  # noqa: E731

        def tick() -> None:
            while not stop.wait(TICK_S):
                self.set(now())

        ticker = threading.Thread(target=tick, name="ktc-running-clock", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()
            self.observe = observe
        self.set(now())

    def verify(self, ms: int, observe: Callable[[], int]) -> None:
        """Trust a setting only once the broker echoes it (``observe``); how long that took is measured."""
        started = time.monotonic()
        echoed = observe()
        self.verification.record(ms, echoed, started)
        if echoed != ms:
            raise ClockError(
                f"the broker's clock was set to {ms} but it echoes {echoed}: "
                f"is the broker running with ktc's clock preload ({self.library.name})?"
            )

    def environment(self) -> dict[str, str]:
        """The JVM's environment that makes it read this clock."""
        return {"LD_PRELOAD": str(self.library), "KTC_CLOCK_FILE": str(self.path)}

    def remove(self) -> None:
        """Remove the clock file and its directory, if made (a later use makes them again)."""
        if self._file is None:
            return
        (directory, mapped, cell), self._file = self._file, None
        cell.release()
        mapped.close()
        (directory / "now_ms").unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            directory.rmdir()


class ClockChecks(TypedDict):
    """How the settings of a run were verified (a broker adapter's clock description carries it)."""

    checks: int
    failures: int  # settings the broker echoed otherwise
    median_seen_ms: float | None  # from a setting to its echo; None before any
    max_seen_ms: float | None


class Verification:
    """Clock settings checked by observation: each a (set, echoed) pair and the time it took to be seen."""

    def __init__(self) -> None:
        self.checks: list[tuple[int, int, float]] = []  # (set ms, echoed ms, seconds until seen)

    def record(self, wanted: int, echoed: int, started: float) -> None:
        self.checks.append((wanted, echoed, time.monotonic() - started))

    @property
    def failures(self) -> list[tuple[int, int]]:
        return [(wanted, echoed) for wanted, echoed, _ in self.checks if wanted != echoed]

    def summary(self) -> ClockChecks:
        seen = sorted(s for _, _, s in self.checks)
        median = seen[len(seen) // 2] * 1000 if seen else None
        return {
            "checks": len(self.checks),
            "failures": len(self.failures),
            "median_seen_ms": median,
            "max_seen_ms": seen[-1] * 1000 if seen else None,
        }
