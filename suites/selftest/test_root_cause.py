"""Root causes (ktc/judge/divergence.py): a comparison that fails after a history's first divergence is
explained by it (unknown, with a pointer); an invariant of the observation alone still fails.

The implementation is the mutant whose LogAppendTime is plain now (suites/selftest/mutants.py); the
history moves leadership to a slower clock, so its first divergence is the produce after the move.
"""

from ktc.checks.verdicts import Validity
from ktc.judge.harness import judge
from ktc.reference.types import CreateTopic, ElectLeader, Fetch, History, Produce, TopicConfig
from ktc.suites._support import LAT, NOW, batch
from ktc.suites.selftest.mutants import CATALOGUE

PLAIN_NOW = next(m for m in CATALOGUE if m.name == "log_append_time_plain_now")
SKEW = 150_000
CLAUSES = (
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-assigned",
    "KIP-32.log-append-time-never-backwards",
)


def move_to_a_slower_clock() -> History:
    ops = (
        CreateTopic("t", TopicConfig(timestamp_type=LAT)),
        Produce("t", batch(NOW)),
        ElectLeader("t", 1),
        Produce("t", batch(NOW)),
        Fetch("t"),
    )
    return History("kip", ops, start_ms=NOW, clock_offsets=(SKEW, -SKEW))


def verdicts() -> dict:
    [found] = judge(PLAIN_NOW, [move_to_a_slower_clock()], CLAUSES)
    return {v.clause: v for v in found}


def test_the_first_wrong_answer_fails_its_own_clause():
    leader_max = verdicts()["KIP-32.log-append-time-leader-max"]
    assert leader_max.validity is Validity.FAIL
    assert leader_max.mismatch.op_index == 3


def test_a_later_comparison_is_explained_by_the_first_divergence():
    assigned = verdicts()["KIP-32.log-append-time-assigned"]
    assert assigned.validity is Validity.UNKNOWN
    assert "explained by an earlier divergence" in assigned.notes[0]


def test_a_broken_invariant_of_the_observation_still_fails_after_the_divergence():
    backwards = verdicts()["KIP-32.log-append-time-never-backwards"]
    assert backwards.validity is Validity.FAIL
    assert backwards.mismatch.invariant and backwards.mismatch.op_index == 4
    assert any("first divergence" in note for note in backwards.notes)
