"""A Crash on a broker ktc started: its JVM is killed (SIGKILL of its process group: no clean shutdown, no
flush, no index trimmed) and started again on the same log directory, ports and clock; the history goes on once
each of its partitions answers ListOffsets on the restarted broker.

What Kafka does on that start is the model's to say (reference/segments.py, ``recover``): the acknowledged
appends are in the log files (the killed process leaves the page cache, and ktc's log directory is in RAM),
the segments above the recovery point are recovered and their time indexes rebuilt.  A history with a Crash
runs alone (judge/clocked.py): the restart breaks every connection to the broker.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence

from ktc.kafka.client import wire
from ktc.kafka.processes.broker import BrokerError
from ktc.reference.types import Crash, History

PATIENCE_S, POLL_S = 120.0, 0.05
WHY_NOT = "ktc cannot stop this broker uncleanly and start it again on its log directory"


def crashes(history: History) -> bool:
    return any(isinstance(op, Crash) for op in history.ops)


def declining_crashes(why: str, cannot_run: Callable[[History], str | None] | None):
    """A ``Capabilities.cannot_run`` that declines histories with a Crash (saying ``why``), and what
    ``cannot_run`` declines."""

    def decline(history: History) -> str | None:
        if crashes(history):
            return f"the history crashes the broker: {why}"
        return cannot_run(history) if cannot_run is not None else None

    return decline


def running(clock) -> contextlib.AbstractContextManager:
    """On a clock ktc sets, the broker's clock runs with real time while it restarts, as time passes in a
    crash: frozen, a restarted KRaft node never gets past its own registration (measured on 4.4.0: retries of
    DUPLICATE_BROKER_REGISTRATION, all at one instant, for over 60 s).  Settings are verified again after."""
    return clock.running() if clock.exact else contextlib.nullcontext()


class Restart:
    """``__call__(partitions)``: kill the broker, start it on the same data, wait until ``partitions``
    ((topic, partition) pairs) answer ListOffsets LATEST without an error; the broker's clock runs meanwhile
    (``running``).  A broker that ``forgets`` (why it comes back without its data, e.g. memory storage) is
    waited for until it answers at all: its partitions are gone, and what it answers of them is judged.
    ``restarts`` counts them, ``seconds`` their wall time."""

    def __init__(
        self,
        relaunch: Callable[[], None],
        bootstrap: str,
        security,
        clock,
        patience_s: float = PATIENCE_S,
        forgets: str | None = None,
    ):
        self.relaunch, self.bootstrap, self.security, self.clock = relaunch, bootstrap, security, clock
        self.patience_s, self.forgets, self.restarts, self.seconds = patience_s, forgets, 0, 0.0

    def __call__(self, partitions: Sequence[tuple[str, int]]) -> None:
        started = time.monotonic()
        with running(self.clock):
            self.relaunch()
            self.wait_led(partitions)
        self.restarts += 1
        self.seconds += time.monotonic() - started

    def wait_led(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Until every partition answers on the restarted broker (its log loaded, its leadership back)."""
        deadline = time.monotonic() + self.patience_s
        waiting, last = list(partitions), "no answer yet"
        while waiting:
            try:
                with wire.Client(self.bootstrap, timeout_s=5, security=self.security) as client:
                    answers = {key: client.list_offsets(key[0], -1, partition=key[1]).error_code for key in waiting}
                waiting = [key for key, code in answers.items() if code != 0 and self.forgets is None]
                last = ", ".join(f"{t}-{p}: error {answers[(t, p)]}" for t, p in waiting)
            except (OSError, wire.WireError) as error:
                last = f"{type(error).__name__}: {error}"
            if waiting and time.monotonic() > deadline:
                raise BrokerError(f"after a restart, partitions did not answer within {self.patience_s:.0f} s ({last})")
            if waiting:
                time.sleep(POLL_S)
