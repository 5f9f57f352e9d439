"""The search: rounds of Hypothesis (nightly-like settings, the example database in the report directory)
until the budget is spent or a failure nothing explains turns up.  Each example is judged in-process by
the harness (``ktc.judge.harness.judge``) on every clause the target supports under the drawn profile;
explained failures are counted and the search goes on; an unexplained one is shrunk by Hypothesis (for a
bulk target, by ktc/judge/shrink.py) and returned as the finding."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky, Unsatisfiable

from ktc import reference
from ktc.checks import CHECKS
from ktc.hunt import signals
from ktc.hunt.explain import Explainer
from ktc.implementations.protocol import Implementation
from ktc.judge.context import RunContext
from ktc.judge.features import features
from ktc.judge.harness import ImplementationCrash, judge
from ktc.judge.shrink import shrink
from ktc.reference.types import CreateTopic
from ktc.specs.clauses import all_clauses
from ktc.strategies import batches, histories, leader_change_histories

ROUND_S = 60.0  # a round aims at this long, from the rate measured so far
SHRINK_S = 300.0  # ktc's own shrinking of a finding: no round begins after this (a 3.9.2 hunt spent 28 min)
MAX_CRASHES = 5  # the target raised this many times in a row: the hunt stops
IDLE_ROUNDS = 1  # a round (hundreds of draws) in which the target could run no history: the hunt stops


class Finding(Exception):
    """A failure nothing explains, on the history Hypothesis last ran (after shrinking: the minimal one)."""

    def __init__(self, verdicts, history):
        self.verdicts, self.history = sorted(verdicts, key=first_wrong), history
        super().__init__(", ".join(sorted({v.clause for v in verdicts})))


def first_wrong(verdict) -> tuple:
    """A failure before an error, the earliest wrong answer first: the reproducers are written for it."""
    where = verdict.mismatch.op_index if verdict.mismatch is not None else 1 << 30
    return (verdict.validity.value != "fail", where)


@dataclass
class Tally:
    seen: set = field(default_factory=set)
    coverage: Counter = field(default_factory=Counter)
    verdicts: dict = field(default_factory=dict)  # (clause, profile) -> Counter of validities
    features: dict = field(default_factory=dict)  # (clause, profile) -> Counter of features
    explained: Counter = field(default_factory=Counter)  # (clause, profile, why) -> examples
    crashes: list = field(default_factory=list)
    in_a_row: int = 0
    rounds: int = 0

    @property
    def examples(self) -> int:
        return len(self.seen)

    def add(self, history, verdicts, explained) -> None:
        if history in self.seen:
            return
        self.seen.add(history)
        self.coverage.update(signals.covered(history, reference.run(history)))
        carried = features(history)
        for v in verdicts:
            key = (v.clause, history.profile)
            self.verdicts.setdefault(key, Counter())[v.validity.value] += 1
            self.features.setdefault(key, Counter()).update(carried)
        for v, why in explained:
            self.explained[(v.clause, history.profile, why)] += 1


@dataclass
class Hunt:
    impl: Implementation
    profiles: tuple
    explainer: Explainer
    deadline: float
    seed: int
    database: ExampleDatabase | None
    brokers: int = 1
    max_ops: int = 16
    context: RunContext = field(default_factory=RunContext)
    tally: Tally = field(default_factory=Tally)
    rate: float = 1.0  # examples per second, as measured
    failing: bool = False  # a failure nothing explains was seen: Hypothesis is shrinking it

    def clauses(self, profile: str) -> tuple:
        registry, caps = all_clauses(), self.impl.capabilities()
        return tuple(
            c for c in registry if c in CHECKS and registry[c].holds_in(profile) and not caps.reason_unsupported(c)
        )


@dataclass
class Outcome:
    finding: Finding | None = None
    stopped: str = "budget spent"
    flaky: bool = False
    idle: bool = False  # the target could run none of the histories drawn


def run(hunt: Hunt) -> Outcome:
    """Rounds until the budget is spent, a finding, Ctrl-C (KeyboardInterrupt, caught by the caller after
    this returns nothing) or a target that keeps crashing."""
    while time.monotonic() < hunt.deadline:
        if len(hunt.tally.crashes) and hunt.tally.in_a_row >= MAX_CRASHES:
            return Outcome(stopped=f"the target raised {MAX_CRASHES} times in a row: {hunt.tally.crashes[-1]}")
        outcome = one_round(hunt)
        if outcome is not None:
            return outcome
        if hunt.tally.examples == 0 and hunt.tally.rounds >= IDLE_ROUNDS:
            return Outcome(
                stopped=f"nothing judged: {hunt.impl.name} could run none of the histories drawn in "
                f"{IDLE_ROUNDS} round(s) (its capabilities refuse them; try other --brokers or "
                f"--profile)",
                idle=True,
            )
    return Outcome()


def one_round(hunt: Hunt) -> Outcome | None:
    started, before = time.monotonic(), hunt.tally.examples
    try:
        probe(hunt, round_size(hunt))()
    except Finding as finding:
        return Outcome(minimal(hunt, finding), stopped="a failure nothing explains")
    except Flaky as error:
        replayed = next((e for e in getattr(error, "exceptions", ()) if isinstance(e, Finding)), None)
        if replayed is not None:
            return Outcome(replayed, stopped="a failure nothing explains (it did not fail again on replay)", flaky=True)
    except Unsatisfiable:
        pass
    hunt.tally.rounds += 1
    spent = time.monotonic() - started
    hunt.rate = max(0.05, (hunt.tally.examples - before) / spent) if spent > 0 else hunt.rate
    return None


def round_size(hunt: Hunt) -> int:
    left = max(0.0, hunt.deadline - time.monotonic())
    return max(5, min(3000, int(hunt.rate * min(ROUND_S, left)) or 5))


def minimal(hunt: Hunt, finding: Finding) -> Finding:
    """Hypothesis has shrunk it (not for a bulk target: one job per step); ktc/judge/shrink.py then proposes
    every one-step reduction, judged in one run per round, and topics nothing uses are dropped."""
    wanted = {v.clause for v in finding.verdicts}

    def still_fails(candidates):
        return [
            bool(wanted & {v.clause for v in unexplained(hunt, c, found)})
            for c, found in zip(
                candidates, judge(hunt.impl, candidates, hunt.clauses(finding.history.profile), hunt.context)
            )
        ]

    smallest, _rounds = shrink(finding.history, still_fails, time.monotonic() + SHRINK_S)
    leaner = without_unused_topics(smallest)
    if leaner != smallest and still_fails([leaner])[0]:
        smallest = leaner
    found = judge(hunt.impl, [smallest], hunt.clauses(smallest.profile), hunt.context)[0]
    return Finding(unexplained(hunt, smallest, found) or finding.verdicts, smallest)


def without_unused_topics(history):
    used = {op.topic for op in history.ops if not isinstance(op, CreateTopic) and hasattr(op, "topic")}
    return replace(history, ops=tuple(op for op in history.ops if not isinstance(op, CreateTopic) or op.topic in used))


def unexplained(hunt: Hunt, history, verdicts) -> list:
    return [v for v in verdicts if v.bad and not hunt.explainer.why(v.clause, history)]


def phases(hunt: Hunt) -> list:
    shrink = [] if getattr(hunt.impl, "bulk", False) else [Phase.shrink]
    return [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, *shrink]


def edgy(timestamps):
    """Batches that may carry the LogAppendTime attribute bit or a header max that disagrees with their records."""
    return batches(timestamps=timestamps, log_append_time_attribute=True, bad_header=True)


def probe(hunt: Hunt, examples: int):
    # @settings above @seed: @seed alone drops the example database, which --resume continues from
    @settings(
        max_examples=examples,
        database=hunt.database,
        deadline=None,
        phases=phases(hunt),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @hypothesis_seed(hunt.seed + hunt.tally.rounds)
    @given(st.data())
    def search(data):
        if time.monotonic() >= hunt.deadline and not hunt.failing:
            reject()  # the budget is spent; a failure being shrunk is finished first
        profile = data.draw(st.sampled_from(hunt.profiles), label="profile")
        examine(hunt, data.draw(scenarios(hunt, profile), label="history"))

    return search


def scenarios(hunt: Hunt, profile: str):
    """Histories on the target's own fixed clocks, with a leader change, where it has them; else any."""
    fixed = hunt.impl.capabilities().clock_offsets
    if fixed:
        return leader_change_histories(profile=profile, clock_offsets=fixed, max_ops=hunt.max_ops // 2, batches=edgy)
    return histories(
        profile=profile,
        brokers=hunt.brokers,
        max_ops=hunt.max_ops,
        batches=edgy,
        skew_ms=120_000 if hunt.brokers > 1 else 0,
    )


def examine(hunt: Hunt, history) -> None:
    """Judge one history; steer; count; raise ``Finding`` on a failure nothing explains."""
    caps = hunt.impl.capabilities()
    if caps.cannot_run is not None and caps.cannot_run(history):
        reject()
    try:
        verdicts = judge(hunt.impl, [history], hunt.clauses(history.profile), hunt.context)[0]
    except ImplementationCrash as error:
        hunt.tally.crashes.append(str(error))
        hunt.tally.in_a_row += 1
        reject()
    hunt.tally.in_a_row = 0
    signals.steer(history, reference.run(history))
    explained = [(v, why) for v in verdicts if v.bad and (why := hunt.explainer.why(v.clause, history))]
    if not hunt.failing:  # the examples the shrinker tries are not counted
        hunt.tally.add(history, verdicts, explained)
    found = unexplained(hunt, history, verdicts)
    if found:
        hunt.failing = True
        raise Finding(found, history)
