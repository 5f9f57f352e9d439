"""The real-time tier's windows (ktc/judge/realtime.py) on a simulated broker whose clock is ktc's to move: a
broker that runs the model's retention every check interval passes, one whose log start jumps early fails
safety, one that never shows a deletion fails liveness, and without a check interval or time enough the
verdict is unknown, never pass.  The simulated broker is the reference model at its pass instants."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktc.implementations.kafka.realtime.session import Seen
from ktc.judge import realtime, realtime_plan
from ktc.reference.model import run as model_run
from ktc.reference.types import Advance, History, ListOffsets, ListOffsetsResult, RetentionPass
from ktc.reports.verdicts import Validity

START, PROFILE = 1_800_000_000_000, "kafka-4"


class Simulated:
    """A broker that runs a retention pass at ``first_pass + k * interval`` on ktc's clock; ``shown`` is what
    it answers for a log start (the truth, or a planted fault)."""

    def __init__(self, interval_ms: int, first_pass_ms: int, shown=lambda true, history: true):
        self.interval, self.first_pass, self.shown, self.now = interval_ms, first_pass_ms, shown, START
        self.histories: list[History] = []
        self.produced: list[list[int]] = []

    def clock(self) -> int:
        return self.now

    def pause(self, ms: int) -> None:
        self.now += max(ms, 1)

    def start(self, histories):
        out = []
        for history in histories:
            times = []
            for _ in history.ops[: len(history.ops) - len([o for o in history.ops if isinstance(o, ListOffsets)])]:
                self.now += 3
                times.append(self.now)
            trace = model_run(self.at(history, times, times[-1]))
            results = [r for op, r in zip(self.at(history, times, times[-1]).ops, trace) if not isinstance(op, Advance)]
            out.append([Seen(r, t - 1, t) for r, t in zip(results, times)])
            self.histories.append(history)
            self.produced.append(times)
        return out

    def at(self, history: History, times: list[int], pass_at: int, tail=()) -> History:
        ops, clock = [], times[0]
        for op, t in zip([o for o in history.ops if not isinstance(o, ListOffsets)], times):
            ops += [Advance(t - clock), op] if t > clock else [op]
            clock = max(clock, t)
        ops += [Advance(pass_at - clock)] if pass_at > clock else []
        return replace(history, ops=(*ops, RetentionPass("t"), *tail), start_ms=times[0])

    def last_pass(self) -> int:
        return self.first_pass + max(0, (self.now - self.first_pass) // self.interval) * self.interval

    def log_starts(self):
        self.now += 2
        out = []
        for history, times in zip(self.histories, self.produced):
            at = self.last_pass() if self.last_pass() >= times[-1] else times[-1]
            true = model_run(self.at(history, times, at))[-1].log_start_offset if self.now >= self.first_pass else 0
            out.append(Seen(ListOffsetsResult(self.shown(true, history), -1), self.now - 1, self.now))
        return out

    def list_offsets(self, index: int, reads):
        history, times = self.histories[index], self.produced[index]
        self.now += 2
        return [
            Seen(model_run(self.at(history, times, self.last_pass(), (op,)))[-1], self.now - 1, self.now)
            for op in reads
        ]


def tier(broker: Simulated, interval_ms: int | None, budget_ms: int = 600_000):
    timing = realtime.Timing(interval_ms, realtime.SLACK_MS, START + budget_ms)
    due = realtime_plan.due_ms(interval_ms, budget_ms)
    planned = realtime_plan.plan(PROFILE, START, due)
    judged = realtime.run_tier(
        planned,
        broker.start,
        broker.log_starts,
        broker.list_offsets,
        timing,
        broker.clock,
        broker.pause,
        realtime_plan.FIRST_SEGMENT,
    )
    return [v for _, verdicts in judged for v in verdicts]


def words(verdicts, validity: Validity, word: str) -> list:
    return [v for v in verdicts if v.validity is validity and (v.mismatch is None or word in v.mismatch.what)]


@pytest.mark.parametrize("interval_ms", [1_000, 300_000])
def test_a_broker_running_the_models_retention_every_interval_passes_every_clause(interval_ms):
    verdicts = tier(Simulated(interval_ms, START + 30_000), interval_ms)
    assert {v.validity for v in verdicts} == {Validity.PASS}, verdicts
    assert {v.clause for v in verdicts} == set(realtime_plan.CLAUSES)


def test_a_log_start_one_past_the_brokers_fails_safety():
    verdicts = tier(Simulated(1_000, START + 30_000, lambda true, h: true + 1), 1_000)
    assert words(verdicts, Validity.FAIL, "safety") and not words(verdicts, Validity.FAIL, "liveness")


def test_a_broker_that_never_shows_a_deletion_fails_liveness():
    verdicts = tier(Simulated(1_000, START + 30_000, lambda true, h: 0), 1_000)
    assert words(verdicts, Validity.FAIL, "liveness") and not words(verdicts, Validity.FAIL, "safety")


def test_without_the_check_interval_a_hidden_deletion_is_unknown_not_pass():
    verdicts = tier(Simulated(1_000, START + 30_000, lambda true, h: 0), None)
    assert {v.validity for v in verdicts} == {Validity.UNKNOWN}, verdicts
    assert all("did not say its check interval" in v.notes[0] for v in verdicts)


def test_a_budget_that_ends_before_the_first_pass_decides_nothing():
    verdicts = tier(Simulated(300_000, START + 290_000), 300_000, budget_ms=60_000)
    assert {v.validity for v in verdicts} == {Validity.UNKNOWN}, verdicts


def test_a_read_answered_otherwise_than_the_model_fails_the_read_clause_only():
    broker = Simulated(1_000, START + 30_000)
    answer = broker.list_offsets
    broker.list_offsets = lambda i, reads: [replace(s, result=ListOffsetsResult(0, -1)) for s in answer(i, reads)]
    verdicts = tier(broker, 1_000)
    failed = {v.clause for v in verdicts if v.validity is Validity.FAIL}
    assert failed == {realtime_plan.FIRST_SEGMENT}


def test_without_the_option_the_clauses_say_it_and_with_it_only_the_tiers_tests_judge_them():
    from ktc.implementations.kafka.judge.capabilities import broker_capabilities

    off, on = broker_capabilities(PROFILE), broker_capabilities(PROFILE, real_time=True)
    for clause in realtime_plan.CLAUSES:
        assert "--real-time" in off.reason_unsupported(clause, True)
        assert on.reason_unsupported(clause, True) is None
        assert "real-time tier" in on.reason_unsupported(clause)
    for clause in ("KIP-33.time-index-running-max", "KIP-33.time-index-strictly-increasing"):
        assert on.reason_unsupported(clause, True) == off.reason_unsupported(clause)


@pytest.mark.parametrize("given, seconds", [("12m", 720.0), ("90s", 90.0), ("1h", 3600.0), ("45", 45.0), ("", None)])
def test_a_budget_reads_as_seconds(given, seconds):
    from ktc.implementations.kafka.settings import budget_s

    assert budget_s(given) == seconds


@pytest.mark.parametrize("given", ["0", "-3m", "twelve", "12x"])
def test_a_budget_that_is_no_duration_is_refused_in_one_line(given):
    from ktc.implementations.kafka.settings import BudgetError, budget_s

    with pytest.raises(BudgetError, match="--real-time"):
        budget_s(given)
