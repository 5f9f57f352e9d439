"""Histories whose broker clock only moves forward run together on one clock (implementations/kafka/judge/
lockstep.py): each runs as drawn (every operation at its history's time), and is judged as when it
runs alone, the clock following it: the same pass and fail verdicts, history for history, on a real
broker ktc started on its clock.  A history either run cuts (``unknown``: an answer lost on a loaded
machine) is compared on nothing, and at least half must be decided both ways.

The corpus is drawn with a fixed seed and must hold what lockstep changes: histories that move the
clock, retention passes, and more than one history due at some clock settings.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.judge import clocked, lockstep  # noqa: E402
from ktc.judge import bulk, harness  # noqa: E402
from ktc.reference.types import Advance, RetentionPass, StepClock  # noqa: E402
from ktc.strategies import histories  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-lockstep")  # the module on one worker: its fixtures once
SEED, DRAWN, KEPT = 20261126, 400, 12


@pytest.fixture(scope="module")
def kafka(clocked_kafka):
    return clocked_kafka


def moving_corpus(profile: str) -> list:
    """Seeded histories whose clock moves forward only (lockstep's), retention passes first."""
    drawn = bulk.corpus(histories(profile=profile, max_ops=10), DRAWN, SEED)
    moving = [h for h in drawn if clocked.moves_its_clock(h) and lockstep.forward_only(h)]
    return sorted(moving, key=lambda h: -sum(isinstance(op, RetentionPass) for op in h.ops))[:KEPT]


def op_times(history) -> list[int]:
    """When each operation other than a clock move runs, after the history's start."""
    due = lockstep.due_offsets(history)
    return [at for op, at in zip(history.ops, due) if not isinstance(op, (Advance, StepClock))]


def test_histories_run_in_lockstep_run_as_drawn_and_are_judged_as_each_run_alone(kafka):
    profile = kafka.profile()
    corpus, clauses = moving_corpus(profile), harness.clauses_holding(profile)
    assert len(corpus) == KEPT and any(isinstance(op, RetentionPass) for h in corpus for op in h.ops)
    traces = kafka.run(corpus)  # one lockstep run
    ran = [(h, t) for h, t in zip(corpus, traces) if t.cut is None]
    assert len(ran) > KEPT // 2, [t.cut for t in traces]
    assert all(op_times(t.judged_as[0][0]) == op_times(h) for h, t in ran)
    together = [harness.judge_one(h, t, clauses) for h, t in zip(corpus, traces)]
    alone = [harness.judge(kafka, [h], clauses)[0] for h in corpus]  # the clock follows each history alone
    both = [(a, b) for a, b in zip(together, alone) if decided(a) and decided(b)]
    assert len(both) >= KEPT // 2, [t.cut for t in traces]
    assert [seen(a) for a, _ in both] == [seen(b) for _, b in both]


def decided(verdicts) -> bool:
    return bool(verdicts) and all(v.validity.value in ("pass", "fail") for v in verdicts)


def seen(verdicts) -> list[tuple[str, str]]:
    return [(v.clause, v.validity.value) for v in verdicts]
