"""Judge an implementation: run it and the reference on the same histories, apply the checks.

``assert_conforms`` is what suites call.  It records per-clause statistics for the pytest plugin
(examples, verdicts, the first failure) and raises ``ClauseViolation`` with a portable,
replayable counterexample when a check fails.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ktc import checks, reference
from ktc.checks import run_check
from ktc.checks.scenario import Scenario
from ktc.checks.verdicts import Divergence, Validity, Verdict, render_mismatch
from ktc.implementations.protocol import Cut, Implementation, JudgedTrace
from ktc.judge.context import RunContext, UnderTest, context_of, under_test
from ktc.judge.contract import traces_problem
from ktc.judge.declined import unsupported
from ktc.judge.divergence import attribute, first_divergence, owned_by, same_place
from ktc.judge.features import features
from ktc.judge.frames import in_history_frame
from ktc.judge.serialize import dump_history, load_history, to_data
from ktc.judge.stats import Recorder
from ktc.judge.steering import steer
from ktc.reference.configs import effective_limits
from ktc.reference.types import (
    Crash,
    CreateTopic,
    History,
    Produce,
    Result,
    TimestampType,
    TopicConfig,
    Trace,
    clock_states,
)
from ktc.reports.schema import Counterexample, MismatchData
from ktc.specs.clauses import all_clauses
from ktc.specs.profiles import get as get_profile
from ktc.timeout import TimedOut, bulk_timeout, call_with_timeout


class ImplementationCrash(Exception):
    """The implementation under test raised: a harness ``error``, not a conformance ``fail``."""


class ContractError(ImplementationCrash):
    """``run()`` broke the plug-in contract (a wrong answer type or count) or did not return in time:
    one ``contract:`` line per implementation and run; each row it touches says so in its reason."""

    def __init__(self, implementation: str, problem: str):
        self.implementation, self.problem = implementation, problem
        super().__init__(f"contract: {implementation}.run() {problem}")

    @property
    def reason(self) -> str:
        return f"{self.implementation} broke the plug-in contract: {self.problem}"


class ClauseViolation(AssertionError):
    """One example broke one or more clauses; ``verdicts`` holds every failing one."""

    def __init__(self, verdicts: list[Verdict], history: History, implementation: str):
        self.verdicts, self.history, self.implementation = verdicts, history, implementation
        self.verdict = verdicts[0]
        super().__init__(self.describe())

    @property
    def clauses(self) -> tuple[str, ...]:
        return tuple(v.clause for v in self.verdicts)

    def describe(self, clause: str | None = None) -> str:
        verdict = self.of(clause)
        return f"{self.headline(verdict)}\ncounterexample: {json.dumps(self.counterexample(clause))}"

    def headline(self, verdict: Verdict) -> str:
        """A failure names its mismatch; an ``error`` (an answer no clause decides) names the first divergence."""
        if verdict.mismatch is not None and verdict.failed:
            return f"{verdict.clause} violated by {self.implementation}: {render_mismatch(verdict.mismatch)}"
        reason = verdict.notes[0] if verdict.notes else "not judged"
        return f"{verdict.clause} could not be judged on {self.implementation}: {reason}"

    def of(self, clause: str | None) -> Verdict:
        return next((v for v in self.verdicts if v.clause == clause), self.verdict)

    def counterexample(self, clause: str | None = None) -> Counterexample:
        verdict = self.of(clause)
        divergence = verdict.divergence
        return {
            "clause": verdict.clause,
            "implementation": self.implementation,
            "history": to_data(self.history),
            "first_divergence": divergence.as_data() if divergence is not None else None,
            "mismatch": mismatch_data(verdict),
        }


def mismatch_data(verdict: Verdict) -> MismatchData:
    """The counterexample's mismatch; an ``error`` verdict (no clause decides the answer) has none of
    its own, so its first divergence stands in."""
    mismatch, divergence = (None if verdict.validity is Validity.ERROR else verdict.mismatch), verdict.divergence
    if mismatch is None and divergence is not None:
        return {
            "op_index": divergence.op_index,
            "what": f"{divergence.op_kind}.{divergence.field} (no clause decides it)",
            "expected": repr(divergence.expected),
            "observed": repr(divergence.observed),
        }
    if mismatch is None:
        return {"op_index": None, "what": "not judged", "expected": None, "observed": None}
    return {
        "op_index": mismatch.op_index,
        "what": mismatch.what,
        "expected": repr(mismatch.expected),
        "observed": repr(mismatch.observed),
    }


def judge(
    impl: Implementation | UnderTest,
    histories: Sequence[History],
    clauses: Iterable[str],
    context: RunContext | None = None,
) -> list[list[Verdict]]:
    """Verdicts per history for the given clauses (a clause not exercised by a history is omitted)."""
    clauses, context = tuple(clauses), context or context_of(impl)
    observed = run_checked(impl, [own_copy(h) for h in histories], context)
    return [judge_one(history, trace, clauses) for history, trace in zip(histories, observed, strict=True)]


def run_checked(impl: Implementation | UnderTest, histories: list[History], context: RunContext) -> Sequence[Trace]:
    """``impl.run`` within the per-call timeout, its answer held to the plug-in contract (ktc/judge/contract.py).
    After a hang the implementation is not called again: later calls fail at once with the same line
    (the plugin shows a contract line once per run).  A contract breach is deterministic: it is found
    again on the same input, so Hypothesis replays it faithfully."""
    if impl.name in context.broken:
        raise ContractError(impl.name, context.broken[impl.name])
    context.ran.add(impl.name)
    try:
        observed: Sequence[Trace] = call_with_timeout(
            impl.run, histories, bulk_timeout(context.timeout_s, len(histories))
        )
    except TimedOut as error:
        context.broken[impl.name] = str(error)
        raise ContractError(impl.name, str(error)) from None
    except Exception as error:
        raise ImplementationCrash(f"{impl.name} raised {type(error).__name__}: {error}") from error
    problem = traces_problem(histories, observed)
    if problem:
        raise ContractError(impl.name, problem)
    return observed


def own_copy(history: History) -> History:
    """The history as the implementation gets it: rebuilt from its portable form, so it shares no object
    with the reference's (an implementation that compares timestamps by identity, or changes what it
    was given, shows up as itself)."""
    return load_history(dump_history(history))


def judge_one(history: History, trace: Sequence[Result], clauses: tuple[str, ...]) -> list[Verdict]:
    """Verdicts for one trace, root cause first (ktc/judge/divergence.py); a real broker's trace is judged at
    both ends of its clock intervals, and its first divergence used only where both ends agree."""
    trace = JudgedTrace.of(trace)
    if trace.cut is not None:
        return cut_verdicts(history, trace.cut, clauses)
    ends = trace.judged_as
    if not ends:
        return root_caused(*judged(history, tuple(trace), clauses))
    (low, low_scenario), (high, high_scenario) = both_ends(ends, clauses)
    low_div = divergence_of(low_scenario)
    high_div = low_div if high_scenario is low_scenario else divergence_of(high_scenario)
    if low_div is not None and same_place(low_div, high_div):
        owned = owns(low, low_scenario, low_div)
        low, high = attribute(low, low_div, owned), attribute(high, high_div, owned)
    undecidable = trace.undecidable or boundary_inside(ends[0][0], ends[1][0])
    low, high = in_history_frame(low, ends[0][0], history), in_history_frame(high, ends[1][0], history)
    return [interval_verdict(a, b, undecidable) for a, b in zip_by_clause(low, high)]


def judged(history: History, trace: Trace, clauses: tuple[str, ...]) -> tuple[list[Verdict], Scenario]:
    """The verdicts of the clauses this history exercises, and the scenario they were judged on."""
    scenario = Scenario(history, get_profile(history.profile), reference.run(history), trace)
    return [v for c in clauses if (v := run_check(c, scenario)) is not None], scenario


def both_ends(
    ends: tuple[tuple[History, Trace], ...], clauses: tuple[str, ...]
) -> tuple[tuple[list[Verdict], Scenario], tuple[list[Verdict], Scenario]]:
    """Each end judged; an end equal to the other (a broker on a clock ktc sets: every operation at its exact
    instant) judged once, its verdicts and scenario shared: judging is deterministic in (history, trace)."""
    (low_history, low_trace), (high_history, high_trace) = ends
    low = judged(low_history, low_trace, clauses)
    same = low_history == high_history and tuple(low_trace) == tuple(high_trace)
    return low, low if same else judged(high_history, high_trace, clauses)


def divergence_of(scenario: Scenario) -> Divergence | None:
    return first_divergence(scenario.history.ops, scenario.expected, scenario.observed)


def root_caused(verdicts: list[Verdict], scenario: Scenario) -> list[Verdict]:
    divergence = divergence_of(scenario)
    if divergence is None:
        return verdicts
    return attribute(verdicts, divergence, owns(verdicts, scenario, divergence))


def owns(verdicts: list[Verdict], scenario: Scenario, divergence: Divergence) -> bool:
    """Whether a clause holding in the profile compares the divergent answer: one of the requested
    clauses fails there, or else any registered clause's check finds a difference there."""
    holding = clauses_holding(scenario.history.profile)
    if owned_by([v for v in verdicts if v.clause in holding], divergence):
        return True
    return checks.owner_at(scenario, divergence.op_index, holding) is not None


@functools.cache
def clauses_holding(profile: str) -> tuple[str, ...]:
    """Every clause with a check that holds in ``profile`` (read off the registry once per profile)."""
    registry = all_clauses()
    return tuple(c for c in checks.CHECKS if c in registry and registry[c].holds_in(profile))


def cut_verdicts(history: History, cut: Cut, clauses: tuple[str, ...]) -> list[Verdict]:
    """A history the implementation could not run to its end (a request lost with its connection, an
    answer it could not read): every clause the history exercises is ``unknown`` or ``error``, with
    the reason; never pass, never fail.  Which clauses it exercises: those whose checks have something
    to compare when the reference's own trace stands in for the observation."""
    validity = Validity(cut.validity)
    exercised, _ = judged(history, tuple(reference.run(history)), clauses)
    return [Verdict(v.clause, validity, 0, None, (cut.reason,)) for v in exercised]


def produce_clocks(history: History) -> list[tuple[Produce, TopicConfig | None, int]]:
    """(Produce op, its topic config, the leader clock it ran at), in order."""
    configs = {op.topic: op.config for op in history.ops if isinstance(op, CreateTopic)}
    return [
        (op, configs.get(op.topic), state.leader_now(op.topic, op.partition))
        for op, state in zip(history.ops, clock_states(history))
        if isinstance(op, Produce)
    ]


def boundary_inside(low: History, high: History) -> bool:
    """Whether a record's accept/reject boundary (now = ts + before, now = ts - after) falls inside the
    clock interval its produce ran in: then no verdict can be trusted for that history."""
    profile = get_profile(low.profile)
    for (op, config, start), (_op, _config, end) in zip(produce_clocks(low), produce_clocks(high)):
        if config is None or config.timestamp_type is not TimestampType.CREATE_TIME or start == end:
            continue
        before, after = effective_limits(config, profile)
        if any(start <= edge <= end for r in op.batch.records for edge in (r.timestamp + before, r.timestamp - after)):
            return True
    return False


def zip_by_clause(low: list[Verdict], high: list[Verdict]) -> list[tuple[Verdict, Verdict]]:
    by_clause = {v.clause: v for v in high}
    return [(v, by_clause[v.clause]) for v in low if v.clause in by_clause]


def interval_verdict(low: Verdict, high: Verdict, undecidable: bool) -> Verdict:
    """Both ends agree: that verdict.  They differ, or a boundary lies inside an interval: unknown."""
    if low.validity is high.validity and not undecidable:
        return low
    return Verdict(
        low.clause,
        Validity.UNKNOWN,
        low.compared,
        low.mismatch or high.mismatch,
        ("the broker's clock interval cannot decide this example",),
    )


def assert_conforms(impl: Implementation | UnderTest, history: History, *clauses: str) -> list[Verdict]:
    """Run one history; record every verdict; raise ClauseViolation on the first failing clause.

    Without explicit ``clauses`` the clauses the running test cites (``@pytest.mark.clause``) are checked.
    """
    tested = under_test(impl)
    context = tested.context
    clauses = clauses or context.cited
    if not clauses:
        raise ValueError("assert_conforms needs clause ids: cite them with @pytest.mark.clause(...)")
    steer(history)
    decline_if_cannot_run(tested, history)
    if tested.bulk and context.bulk_active:
        context.pending.append((history, clauses))
        return []
    verdicts = judge(tested, [history], clauses, context)[0]
    failed = record(context.recorder, history, verdicts)
    if failed:
        raise ClauseViolation(failed, history, tested.name)
    return verdicts


def decline_if_cannot_run(impl: Implementation | UnderTest, history: History) -> None:
    """An implementation that declares it cannot run this history (``Capabilities.cannot_run``): the test is
    ``unsupported``, with that reason (ktc/judge/declined.py)."""
    cannot_run = impl.capabilities().cannot_run
    why = cannot_run(history) if cannot_run is not None else None
    if why:
        raise unsupported(why)


@dataclass
class BulkBatch:
    """One test's buffered histories (under one profile), the recorder its rows read, and what it raised:
    its own body's exception, or after judging its smallest clause violation."""

    pending: list[tuple[History, tuple[str, ...]]]
    recorder: Recorder
    error: BaseException | None = None


def take_batch(context: RunContext) -> BulkBatch:
    """What the running test buffered for a bulk implementation; the context buffers no more."""
    pending, context.pending, context.bulk_active = list(dict.fromkeys(context.pending)), [], False
    return BulkBatch(pending, context.recorder)


def flush_bulk(impl: Implementation | UnderTest) -> None:
    """Judge every buffered history in one run; shrink the first disagreement in bulk and raise it
    (every clause that history fails, as ``assert_conforms`` raises them)."""
    batch = take_batch(context_of(impl))
    flush_batches(impl, [batch])
    if batch.error is not None:
        raise batch.error


def flush_batches(impl: Implementation | UnderTest, batches: list[BulkBatch]) -> None:
    """Judge the histories of several tests (or one test under several profiles) in one run: each
    batch's recorder gets its verdicts, and a batch whose history failed gets its smallest violation."""
    flat = [(batch, history, clauses) for batch in batches for history, clauses in batch.pending]
    if not flat:
        return
    verdicts = judge(impl, [h for _, h, _ in flat], sorted({c for *_, cs in flat for c in cs}), context_of(impl))
    first: dict[int, tuple[History, list[Verdict]]] = {}
    for (batch, history, clauses), found in zip(flat, verdicts):
        failed = record(batch.recorder, history, [v for v in found if v.clause in clauses])
        if failed and id(batch) not in first:
            first[id(batch)] = (history, failed)
    for batch in batches:
        if id(batch) in first:
            batch.error = minimal_violation(impl, *first[id(batch)])


def record(recorder: Recorder, history: History, verdicts: list[Verdict]) -> list[Verdict]:
    """Add one history's verdicts to a test's statistics; return the failing ones."""
    carried = features(history)
    for verdict in verdicts:
        recorder.add(verdict, carried)
    return [v for v in verdicts if v.bad]


def minimal_violation(impl: Implementation | UnderTest, history: History, seen: list[Verdict]) -> ClauseViolation:
    """The smallest history on which every clause of the ``seen`` failures still fails.  A real
    broker's failure can depend on its clock: one that does not fail again when re-run is reported
    on the history and verdicts it was first seen with.  A history with a Crash is reported as it was: each
    candidate would restart the broker (a JVM start on Kafka), and a round proposes dozens."""
    from ktc.judge.shrink import shrink

    if any(isinstance(op, Crash) for op in history.ops):
        return ClauseViolation(list(seen), history, impl.name)
    clauses = sorted({v.clause for v in seen})

    def still_fails(candidates: list[History]) -> list[bool]:
        return [{v.clause for v in found if v.bad} >= set(clauses) for found in judge(impl, candidates, clauses)]

    smallest, _rounds = shrink(history, still_fails)
    failed = [v for v in judge(impl, [smallest], clauses)[0] if v.bad]
    if not failed:
        smallest, failed = history, list(seen)
    return ClauseViolation(failed, smallest, impl.name)
