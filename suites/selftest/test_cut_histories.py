"""A history an implementation could not run to its end is judged unknown or error, never pass or fail."""

from __future__ import annotations

import pytest

from ktc import reference
from ktc.checks.verdicts import Validity
from ktc.implementations.protocol import Cut, JudgedTrace
from ktc.judge import harness
from ktc.reference.types import Batch, CreateTopic, Fetch, History, Produce, Record, TopicConfig

NOW = 1_700_000_000_000
CLAUSES = ("KIP-32.create-time-kept", "KIP-937.after-bound", "KIP-32.offsets-contiguous")


def history() -> History:
    batch = Batch((Record(NOW), Record(NOW + 7_200_000)))
    ops = (CreateTopic("t", TopicConfig(after_max_ms=3_600_000)), Produce("t", batch), Fetch("t"))
    return History("kafka-3.6", ops, NOW)


def cut_trace(validity: str) -> JudgedTrace:
    """What a broker adapter returns for a history it could not run to its end (implementations/protocol.py)."""
    trace = JudgedTrace(tuple(reference.run(history()))[:1])  # the results up to the cut
    trace.cut = Cut(
        validity, 1, "op #1 (Produce): connection lost after send; Produce may or may not have been applied"
    )
    return trace


@pytest.mark.parametrize("validity, expected", [("unknown", Validity.UNKNOWN), ("error", Validity.ERROR)])
def test_a_cut_history_gives_every_exercised_clause_the_cuts_validity_and_reason(validity, expected):
    verdicts = harness.judge_one(history(), cut_trace(validity), CLAUSES)
    assert {v.clause for v in verdicts} == {
        v.clause for v in harness.judge_one(history(), tuple(reference.run(history())), CLAUSES)
    }
    assert verdicts and all(v.validity is expected and "may or may not" in v.notes[0] for v in verdicts)


def test_the_same_history_run_whole_is_decided():
    verdicts = harness.judge_one(history(), tuple(reference.run(history())), CLAUSES)
    assert verdicts and all(v.validity is Validity.PASS for v in verdicts)
