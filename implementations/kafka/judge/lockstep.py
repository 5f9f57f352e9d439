"""Histories whose broker clock moves, run together on one clock that only moves forward.

A history whose clock moves (an Advance, a StepClock of broker 0) runs on a broker whose clock ktc
sets to follow it.  One at a time, each such history costs its round trips and its retention passes in
sequence: most of a broker's test time.  Histories whose clock never steps back share the clock
instead.  Every one starts at the same broker time ``t0``; each operation is due at ``t0`` plus its
history's time since its start; the clock moves to the earliest due time only once nothing is in flight,
and every operation due then runs, concurrently.

Each history sees its own times in order, as alone.  Between them its topic sees only times passing, as
a topic does on any broker: time-based rolls happen on its own appends, and retention acts on its topic
only during its own RetentionPass (every topic is held at ``retention.ms = -1`` otherwise,
retention.py).  A history that steps its clock back runs alone (clocked.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from ktc.reference.types import History, clock_states

from .history_run import HistoryRun
from .pipeline import Session


def due_offsets(history: History) -> list[int]:
    """For each operation, how long after the history's start (on broker 0's clock) it is due."""
    start = history.start_ms + history.clock_offsets[0]
    return [state.real_ms + state.offsets[0] - start for state in clock_states(history)]


def forward_only(history: History) -> bool:
    """Whether the history's broker-0 clock never steps back (so it can share a forward-only clock)."""
    due = due_offsets(history)
    return all(later >= earlier for earlier, later in zip([0, *due], due))


def run(pipeline, histories: Sequence[History]) -> list:
    """The histories (each ``forward_only``) on ``pipeline``'s ControlledClock, traces in input order."""
    traces = LockstepSession(pipeline, histories).run()
    pipeline.wait(pipeline.idle)  # the last DeleteTopics
    return traces


class LockstepRun(HistoryRun):
    """A history whose operations wait for the shared clock to reach their due time."""

    def __init__(self, history: History, names: dict, bootstrap, t0: int, leaders=None):
        super().__init__(history, names, bootstrap, leaders)
        self.due_at = [t0 + offset for offset in due_offsets(history)]
        self.clock_shift = t0 - (history.start_ms + history.clock_offsets[0])

    def next_due(self) -> int:
        return self.due_at[min(len(self.observed), len(self.due_at) - 1)]

    def due(self, clock) -> bool:
        return len(self.observed) == len(self.due_at) or self.next_due() <= clock.now()


class LockstepSession(Session):
    """A Session (pipeline.py) of LockstepRuns, created in one batch, whose clock moves when all wait."""

    def __init__(self, pipeline, histories: Sequence[History]):
        self.t0 = pipeline.clock.now()
        super().__init__(pipeline, histories, max(1, len(histories)))
        self.started: set[int] = set()

    def new_run(self, history: History) -> LockstepRun:
        names = self.pipeline.namer.names(history)
        return LockstepRun(history, names, self.pipeline.bootstrap, self.t0, self.pipeline.leaders)

    def released(self, runs: list) -> None:
        self.started.update(id(run) for run in runs)
        super().released(runs)

    def pump(self) -> None:
        super().pump()
        while self.all_waiting():
            self.advance()
            super().pump()

    def describe(self) -> str:
        return f"{super().describe()}; {len(self.started)} of {len(self.runs)} started on the shared clock"

    def all_waiting(self) -> bool:
        """Every history created, none in flight, queued for a slot or awaiting its log start probe, no DeleteTopics
        in flight, and some waiting for the clock.  A request the broker forwards to its controller must not be in
        flight when the clock jumps: Kafka's forwarding channel times it out on the wall clock, then waits out a
        reconnect backoff on the same frozen clock, so the next CreateTopics or IncrementalAlterConfigs
        (a RetentionPass) is never answered (measured on 4.4.0: a DeleteTopics in flight at a jump of five
        days, "Disconnecting from node 1 due to request timeout", the run hung past 300 s)."""
        return (
            bool(self.parked)
            and self.inflight == 0
            and self.deleting == 0
            and len(self.started) == len(self.runs)
            and not any(self.ready.values())
            and not any(self.probing.values())  # a finished history's log start is read at its own last clock
        )

    def advance(self) -> None:
        """Set the clock to the earliest due time; queue every history due then."""
        due = min(run.next_due() for run in self.parked)
        self.pipeline.clock.set(due)
        now = [run for run in self.parked if run.next_due() <= due]
        self.parked = [run for run in self.parked if run.next_due() > due]
        for run in now:
            self.wait_for_slot(run)
