"""The pipelined broker run (implementations/kafka/judge/pipeline.py): same answers as one history at a
time, failures still shrink through it, and the echoed clock is read only when unambiguous.

Needs a broker for all but the echo tests; runs for the broker implementations, the others skip.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.judge.observe import JudgedTrace, echoed_now, produce_observed  # noqa: E402
from ktc.judge import bulk, harness  # noqa: E402
from ktc.judge.bulk_intervals import clauses_for  # noqa: E402
from ktc.judge.context import RunContext, UnderTest  # noqa: E402
from ktc.kafka.client.messages import ProduceOutcome  # noqa: E402
from ktc.reference.types import (  # noqa: E402
    Batch,
    CreateTopic,
    Fetch,
    FetchResult,
    History,
    ListOffsets,
    Produce,
    Record,
    RecordError,
    RetentionPass,
    TopicConfig,
)
from ktc.strategies import histories  # noqa: E402
from ktc.suites.broker.test_bulk_agreement import skip_unless_a_broker  # noqa: E402

CLAUSE = "KIP-32.create-time-kept"
TEXT = "Timestamp 5 of message with offset 0 is out of range. The timestamp should be within [{}, {}]"


def rejected(low: int, high: int) -> ProduceOutcome:
    return ProduceOutcome(87, None, (RecordError(0, TEXT.format(low, high)),), -1, -1, -1, 0, 0)


MAX = 2**63 - 1
DEFAULTS_3_9 = {"before": MAX, "after": MAX, "difference": MAX}
NOW = 1_795_343_129_358


def test_the_echoed_now_is_the_only_candidate_inside_the_interval():
    config = TopicConfig(before_max_ms=1, after_max_ms=52_833, difference_max_ms=0)
    assert echoed_now(rejected(NOW - 1, NOW + 52_833), config, (NOW - 9, NOW + 9), DEFAULTS_3_9) == NOW


def test_a_topic_setting_overrides_the_brokers_default_limit():
    """Seed 1 of test_bulk_agreement: with the defaults as candidates too, before = Long.MAX (a
    default the topic overrides) and after = 0 (its difference) would also fit, one ms later."""
    config = TopicConfig(before_max_ms=MAX - 1, after_max_ms=1, difference_max_ms=0)
    text = rejected(NOW - (MAX - 1), NOW + 1)
    assert echoed_now(text, config, (NOW - 2, NOW + 2), DEFAULTS_3_9) == NOW


def test_an_ambiguous_range_text_pins_nothing_and_makes_the_history_undecidable():
    config = TopicConfig(before_max_ms=2, after_max_ms=0, difference_max_ms=1)  # (2, 0) or (1, 1): now or now - 1
    text = rejected(NOW - 2, NOW)
    assert echoed_now(text, config, (NOW - 9, NOW + 9), DEFAULTS_3_9) is None
    assert produce_observed(text, config, NOW - 9, NOW + 9, DEFAULTS_3_9).ambiguous
    assert echoed_now(text, config, (NOW - 9, NOW - 1), DEFAULTS_3_9) == NOW - 1  # the interval decides
    assert echoed_now(text, config, (NOW - 9, NOW + 9), None) is None  # defaults unknown


def test_a_wrapped_upper_bound_still_pins_now():
    config = TopicConfig(before_max_ms=0, after_max_ms=MAX, difference_max_ms=MAX)
    wrapped = NOW + MAX - 2**64
    assert echoed_now(rejected(NOW, wrapped), config, (NOW - 50, NOW + 50), {"before": MAX}) == NOW


def test_pipelined_and_sequential_runs_agree_on_whole_histories(impl):
    skip_unless_a_broker(impl)
    profile = impl.profile()
    whole = histories(profile=profile, max_ops=8).map(without_retention)  # a retention pass makes all unknown
    corpus = bulk.corpus(whole, 40, seed=4)
    corpus += [late_and_repeated_creates(profile)]
    clauses = tuple(clauses_for(impl, profile))
    pipelined = [harness.judge_one(h, t, clauses) for h, t in zip(corpus, impl.run(corpus), strict=True)]
    one_by_one = impl.executor.run_sequential(corpus)
    sequential = [harness.judge_one(h, t, clauses) for h, t in zip(corpus, one_by_one, strict=True)]
    for history, a, b in zip(corpus, pipelined, sequential):
        assert not [v for v in a + b if v.failed], history
        decided = {v.clause: v.validity for v in b if v.validity.value != "unknown"}
        assert all(decided.get(v.clause, v.validity) is v.validity for v in a if v.validity.value != "unknown")
    verdicts = [v for found in pipelined for v in found]
    assert sum(v.validity.value == "pass" for v in verdicts) > len(verdicts) / 2


def without_retention(history: History) -> History:
    return replace(history, ops=tuple(op for op in history.ops if not isinstance(op, RetentionPass)))


def late_and_repeated_creates(profile: str) -> History:
    """A produce before its topic exists, a CreateTopic in mid-history, and one repeated."""
    batch = Batch((Record(1_700_000_000_000),))
    ops = (
        Produce("t", batch),
        CreateTopic("t", TopicConfig()),
        Produce("t", batch),
        CreateTopic("t", TopicConfig()),
        Fetch("t"),
        ListOffsets("t", -1),
    )
    return History(profile, ops)


def test_the_results_of_the_late_creates_are_the_brokers(impl):
    skip_unless_a_broker(impl)
    history = late_and_repeated_creates(impl.profile())
    (trace,) = impl.run([history])
    assert [type(r).__name__ for r in trace][:4] == [
        "ProduceResult",
        "CreateTopicResult",
        "ProduceResult",
        "CreateTopicResult",
    ]
    assert (trace[0].error_code, trace[1].error_code, trace[2].error_code, trace[3].error_code) == (3, 0, 0, 36)


class Tampered:
    """The broker with one deliberate bug: every fetched record's timestamp one ms late."""

    def __init__(self, impl):
        self.impl, self.name, self.bulk, self.calls = impl, f"tampered-{impl.name}", True, []

    def capabilities(self):
        return self.impl.capabilities()

    def run(self, batch):
        self.calls.append(len(batch))
        return [tampered(trace) for trace in self.impl.run(batch)]


def tampered(trace: JudgedTrace) -> JudgedTrace:
    out = JudgedTrace(trace)
    out.judged_as = tuple((history, tuple(map(late, results))) for history, results in trace.judged_as)
    out.undecidable = trace.undecidable
    return out


def late(result):
    if not isinstance(result, FetchResult):
        return result
    batches = [
        replace(b, records=tuple(replace(r, timestamp=r.timestamp + 1) for r in b.records)) for b in result.batches
    ]
    return replace(result, batches=tuple(batches))


def test_a_disagreement_found_in_bulk_shrinks_through_the_pipelined_run(impl):
    skip_unless_a_broker(impl)
    profile = impl.profile()
    now = 1_700_000_000_000
    records = Batch(tuple(Record(now - 1000 * i) for i in range(4)))
    ops = (
        CreateTopic("t", TopicConfig()),
        Produce("t", records),
        ListOffsets("t", -1),
        Produce("t", records),
        Fetch("t"),
    )
    buggy = Tampered(impl)
    context = RunContext(bulk_active=True, pending=[(History(profile, ops, now), (CLAUSE,))])
    with pytest.raises(harness.ClauseViolation) as caught:
        harness.flush_bulk(UnderTest(buggy, context))
    smallest = caught.value.history
    assert [type(op).__name__ for op in smallest.ops] == ["CreateTopic", "Produce", "Fetch"]
    assert len(smallest.ops[1].batch.records) == 1
    assert buggy.calls[0] == 1 and len(buggy.calls) >= 3  # the bulk run, then one run per shrink round
