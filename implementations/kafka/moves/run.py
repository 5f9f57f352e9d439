"""The executor of a broker by address with ``--move-leaders`` (the bootstrap target's ``runs``): a history
with a leader change runs on the cluster's own brokers, one request at a time, its ``ElectLeader`` ops realised
by moving the leadership of its own topic (move.py); every other history runs on the pipeline, as without the
option (running.py).

History broker b runs on node ``nodes[b % len(nodes)]`` (the survey's node ids, in order).  The history's clock
offsets cannot be realised on brokers whose clocks ktc does not set: the history is judged on the clocks the
cluster has.  Each node's offset lies in a window measured from the LogAppendTime echoes (clocks.py): this
history's own echoes on that node, else every echo seen on it so far.  The history is placed twice, as any
operation on a broker ktc did not start is judged over [sent, received]: every operation at its sent time and
every node at the low end of its window, then at received and the high end.  An echoed operation stands at
``echo - offset``, inside its own interval at either end.  A node whose own echoes no one offset explains (its
clock stepped during the history) leaves the history undecidable: never pass, never fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ktc.implementations.protocol import Capabilities, JudgedTrace
from ktc.reference.types import Advance, ElectLeader, History, StepClock, clock_states

from ..judge.capabilities import Found
from ..judge.observe import Observed, on_real_time
from ..running import PipelineRuns
from . import clocks
from .move import Move
from .survey import LEADER_CLAUSES, Survey, survey


def executor(adapter):
    """The declaration's ``runs``: leader moves when --move-leaders was given, else the pipeline alone."""
    return MovingLeaders(adapter) if getattr(adapter.settings, "move_leaders", False) else PipelineRuns(adapter)


class MovingLeaders:
    def __init__(self, adapter):
        self.adapter, self.pipeline = adapter, PipelineRuns(adapter)
        self.windows: dict[int, clocks.Window] = {}  # node id -> its offset window, over every echo of the run
        self.moves = self.histories = 0
        self.seen: dict[History, tuple] = {}
        self._survey: Survey | None = None

    def survey(self) -> Survey:
        if self._survey is None:
            self._survey = survey(self.adapter)
            self.windows = clocks.merged(self.windows, self._survey.windows)
        return self._survey

    def moving(self, history: History) -> bool:
        """Whether it runs here: it changes a leader, steps no clock, and leadership can move on this cluster."""
        ops = history.ops
        return (
            any(isinstance(op, ElectLeader) for op in ops)
            and not any(isinstance(op, StepClock) for op in ops)
            and self.survey().refused is None
        )

    def run(self, histories) -> list[JudgedTrace]:
        histories = list(histories)
        rest = [i for i, h in enumerate(histories) if not self.moving(h)]
        out: dict[int, JudgedTrace] = dict(zip(rest, self.pipeline.run([histories[i] for i in rest]) if rest else ()))
        return [out[i] if i in out else self.run_one(h) for i, h in enumerate(histories)]

    def run_one(self, history: History) -> JudgedTrace:
        key = replace(history, profile="")  # the broker never sees the profile: one observation, judged per profile
        if key not in self.seen:
            move = Move(self.adapter, self.survey(), history)
            self.seen[key] = move.execute()
            self.moves, self.histories = self.moves + move.moves, self.histories + 1
            self.windows = clocks.merged(self.windows, echo_windows(*self.seen[key][1:]))
        executed, observed, nodes, cut = self.seen[key]
        if cut is not None:
            trace = JudgedTrace(o.result for o in observed)
            trace.cut = cut
            return trace
        return judged(replace(executed, profile=history.profile), observed, nodes, self.windows, self.survey().nodes)

    def shape(self, caps: Capabilities) -> Capabilities:
        caps = self.pipeline.shape(caps)
        return replace(caps, unsupported=LeaderClauses(caps.unsupported, lambda: self.survey().refused))

    def stall(self) -> str:
        return f"a history moving leaders, or {self.pipeline.stall()}"

    def ignored_configs(self) -> set[str]:
        return self.pipeline.ignored_configs()

    def clock_summary(self) -> dict:
        refused = self.survey().refused if self._survey is not None else "not asked: no history needed it"
        moves = {"refused": refused, "moves": self.moves, "histories": self.histories, **clocks.summary(self.windows)}
        return {**self.pipeline.clock_summary(), "leader_moves": moves}

    def close(self) -> None:
        self.pipeline.close()


def echo_windows(observed: Sequence[Observed], nodes: Sequence[int | None], *_) -> dict[int, clocks.Window]:
    """Each node's window from this history's echoes (an operation's node: the leader it was sent to)."""
    return clocks.measured(
        (node, seen.exact_now, seen.sent, seen.received)
        for node, seen in zip(nodes, observed)
        if node is not None and seen.exact_now is not None
    )


def judged(
    history: History,
    observed: list[Observed],
    nodes: list[int | None],
    run_windows: Mapping[int, clocks.Window],
    cluster: tuple[int, ...],
) -> JudgedTrace:
    """The trace with the history placed at both ends; undecidable when a node's own echoes contradict one another,
    or a node that leads in it was never measured (then placed as if on ktc's clock, never judged on that)."""
    trace = JudgedTrace(o.result for o in observed)
    own = echo_windows(observed, nodes)
    windows = {**run_windows, **own}
    brokers = [cluster[b % len(cluster)] for b in range(len(history.clock_offsets))]
    unmeasured = any(brokers[b] not in windows for b in leaders(history))
    trace.undecidable = unmeasured or any(not w.consistent for w in own.values())
    bounds = [sorted((windows[n].low, windows[n].high)) if n in windows else (0, 0) for n in brokers]
    trace.judged_as = tuple(
        placed(history, observed, tuple(bound[end] for bound in bounds), when)
        for end, when in ((0, "sent"), (1, "received"))
    )
    return trace


def placed(history: History, observed: list[Observed], offsets: tuple[int, ...], end: str) -> tuple:
    """The history on the measured clocks: each operation at ``end`` of its interval, or at its echo minus its
    leader's offset; the elections kept, the history's own clock ops replaced by the real time between operations."""
    steps = [
        (op, seen.result, getattr(seen, end) if seen.exact_now is None else seen.exact_now - offsets[leader(op, state)])
        for op, state, seen in zip(history.ops, clock_states(history), observed)
        if not isinstance(op, (Advance, StepClock)) and not seen.skipped
    ]
    ops, results, start = on_real_time(steps)
    return replace(
        history, ops=ops, clock_offsets=offsets, start_ms=history.start_ms if start is None else start
    ), results


def leaders(history: History) -> set[int]:
    """The history brokers that lead a partition at some operation."""
    return {leader(op, state) for op, state in zip(history.ops, clock_states(history)) if hasattr(op, "partition")}


def leader(op, state) -> int:
    return state.leader(op.topic, op.partition)


class LeaderClauses(Found):
    """The target's unsupported clauses, with the three leader-change clauses as the survey says: judged when
    leadership can move, else unsupported with the survey's line.  Lazy: asked on first use, like the probe."""

    def __init__(self, declared: Mapping[str, str], refused):
        self.declared, self.refused, self.found = declared, refused, None

    def everything(self) -> dict[str, str]:
        if self.found is None:
            why = self.refused()
            rest = {k: v for k, v in self.declared.items() if k not in LEADER_CLAUSES}
            self.found = {**rest, **({c: why for c in LEADER_CLAUSES} if why else {})}
        return self.found
