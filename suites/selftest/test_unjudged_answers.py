"""An answer no clause decides fails the test that saw it (``error``), naming the first divergence.

Before, such a history made every verdict ``error`` and the test passed: a wrong answer that no check
compares (the LogAppendTime of a refused produce) went unnoticed.  The implementation here is the
reference with that one answer changed; the history refuses one batch.
"""

import json
from dataclasses import replace

import pytest

from ktc.judge.harness import ClauseViolation, assert_conforms
from ktc.reference.model import Model
from ktc.reference.types import CreateTopic, Fetch, History, Produce, TopicConfig
from ktc.suites._support import NOW, batch
from ktc.suites.selftest.mutants import Mutant

CLAUSE = "KIP-937.error-code-32"
WINDOW = TopicConfig(before_max_ms=1000, after_max_ms=1000)


class RefusalStamped(Model):
    """A refused batch's response carries a LogAppendTime of 1 instead of -1."""

    def op_Produce(self, cluster, op):
        result = super().op_Produce(cluster, op)
        return result if result.error_code == 0 else replace(result, log_append_time=1)


STAMPED = Mutant("refusal_stamped", CLAUSE, ("kafka-3.6",), RefusalStamped)


def refused_once() -> History:
    ops = (CreateTopic("t", WINDOW), Produce("t", batch(NOW + 1000 + 1)), Fetch("t"))
    return History("kafka-3.6", ops, start_ms=NOW)


def test_an_answer_no_clause_decides_fails_the_test_with_its_first_divergence():
    with pytest.raises(ClauseViolation) as raised:
        assert_conforms(STAMPED, refused_once(), CLAUSE)
    assert "could not be judged" in str(raised.value) and "Produce.log_append_time" in str(raised.value)
    mismatch = json.loads(str(raised.value).split("counterexample: ", 1)[1])["mismatch"]
    assert (mismatch["op_index"], mismatch["expected"], mismatch["observed"]) == (1, "-1", "1")


def test_the_same_history_passes_on_the_reference_model():
    reference = Mutant("reference_model", CLAUSE, ("kafka-3.6",), Model)
    assert [v.validity.value for v in assert_conforms(reference, refused_once(), CLAUSE)] == ["pass"]
