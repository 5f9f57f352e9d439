"""Requests about a partition reach its leader (client/routing.py, judge/history_run.py), no broker.

A fake three-broker cluster answers each request where it is addressed (``Call.to``, else the bootstrap): only
the partition's leader answers Produce, Fetch and ListOffsets for it, any other broker NOT_LEADER_OR_FOLLOWER,
and Metadata says who leads, possibly late.  Operations are driven as the blocking client drives them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kafka", reason="the broker client needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.judge import logstart  # noqa: E402
from ktc.implementations.kafka.judge.history_run import ELSEWHERE, HistoryRun  # noqa: E402
from ktc.implementations.kafka.judge.operations import operation  # noqa: E402
from ktc.implementations.kafka.judge.pipeline import Pipeline  # noqa: E402
from ktc.kafka.client import messages, routing  # noqa: E402
from ktc.kafka.client.admin import ClusterView, NewTopic  # noqa: E402
from ktc.kafka.client.multiplex import Slot  # noqa: E402
from ktc.reference.types import Advance, Batch, CreateTopic, Fetch, History, ListOffsets, Produce, Record  # noqa: E402

BROKERS = {1: ("127.0.0.1", 9001), 2: ("127.0.0.1", 9002), 3: ("127.0.0.1", 9003)}
BOOTSTRAP = BROKERS[1]
TOPIC = "ktc-t"
UNKNOWN_TOPIC_OR_PARTITION = 3


class FakeCluster:
    """One partition, ``TOPIC``-0, led by node ``leader`` once created; Metadata names ``said`` (the leader unless
    told otherwise: a broker whose metadata lags).  Every request is logged as (api, node it reached)."""

    def __init__(self, leader: int = 2):
        self.leader, self.said, self.created = leader, None, False
        self.log: list[tuple[str, int]] = []
        self.records = 0

    def answer(self, call: messages.Call):
        node = next(n for n, address in BROKERS.items() if address == (call.to or BOOTSTRAP))
        self.log.append((call.api, node))
        leads = node == self.leader
        code = (0 if leads else messages.NOT_LEADER_OR_FOLLOWER) if self.created else UNKNOWN_TOPIC_OR_PARTITION
        if call.api == "CreateTopics":
            self.created = True
            return {TOPIC: (0, None)}
        if call.api == "Metadata":
            said = self.leader if self.said is None else self.said
            return ClusterView(dict(BROKERS), 1, {TOPIC: (0, {0: said})} if self.created else {TOPIC: (3, {})})
        if call.api == "Produce":
            self.records += leads
            return messages.ProduceOutcome(code, None, (), self.records - 1 if leads else -1, -1, 0, 0, 0)
        if call.api == "ListOffsets":
            return {(TOPIC, 0): messages.ListOffsetsOutcome(code, -1, self.records if leads else -1, 0)}
        if call.api == "Fetch":
            return messages.FetchOutcome(code, self.records if leads else -1, 0, ())
        raise AssertionError(f"unexpected {call.api}")

    def sent(self, api: str) -> list[int]:
        return [node for name, node in self.log if name == api]


def drive(steps, cluster):
    """Run an operation to its result, as wire.Client.perform does (its pauses not waited); ``cluster``: a
    FakeCluster, or a function answering a call."""
    ask = cluster.answer if isinstance(cluster, FakeCluster) else cluster
    answer = None
    try:
        while True:
            step = steps.send(answer)
            answer = None if isinstance(step, messages.Pause) else ask(step)
    except StopIteration as done:
        return done.value


def produced(cluster: FakeCluster, leaders: routing.Leaders):
    op = Produce("t", Batch((Record(1, b"k", b"v"),)))
    return drive(operation(op, TOPIC, leaders=leaders), cluster)


@pytest.fixture
def cluster() -> FakeCluster:
    fake = FakeCluster()
    fake.created = True
    return fake


def test_a_partition_whose_leader_is_not_known_is_asked_of_metadata_then_sent_to_its_leader(cluster):
    result, _out = produced(cluster, routing.Leaders())
    assert result.error_code == 0 and cluster.records == 1
    assert cluster.log == [("Metadata", 1), ("Produce", 2)]


def test_a_leader_that_moved_is_found_again_and_the_request_sent_to_it(cluster):
    leaders = routing.Leaders()
    assert produced(cluster, leaders)[0].error_code == 0
    cluster.leader = 3
    result, _out = produced(cluster, leaders)
    assert result.error_code == 0 and cluster.records == 2
    assert cluster.sent("Produce") == [2, 2, 3] and cluster.sent("Metadata") == [1, 1]


@pytest.mark.parametrize("op", [Fetch("t"), ListOffsets("t", messages.LATEST_TIMESTAMP)], ids=["fetch", "list-offsets"])
def test_reads_follow_the_leader_too(cluster, op):
    leaders = routing.Leaders()
    leaders.learn(ClusterView(dict(BROKERS), 1, {TOPIC: (0, {0: 3})}))  # stale: node 2 leads
    result, _ = drive(operation(op, TOPIC, leaders=leaders), cluster)
    assert result.error_code == 0
    assert cluster.sent(op.__class__.__name__) == [3, 2]


def test_a_broker_that_keeps_answering_not_leader_is_reported_as_it_answered_after_the_bound(cluster):
    cluster.said = 3  # Metadata names node 3, which never leads
    result, _out = produced(cluster, routing.Leaders())
    assert result.error_code == messages.NOT_LEADER_OR_FOLLOWER and cluster.records == 0
    assert cluster.sent("Produce") == [3] * routing.ATTEMPTS


def test_an_error_that_is_not_about_leadership_is_the_answer_at_once():
    cluster = FakeCluster()  # the topic was never created: Metadata knows no leader, the bootstrap answers
    result, _ = drive(operation(Fetch("t"), TOPIC, leaders=routing.Leaders()), cluster)
    assert result.error_code == UNKNOWN_TOPIC_OR_PARTITION
    assert cluster.log == [("Metadata", 1), ("Fetch", 1)]


def test_a_created_topic_is_ready_when_its_leader_answers_not_the_bootstrap():
    cluster, leaders = FakeCluster(), routing.Leaders()
    results = drive(routing.create_and_wait([NewTopic(TOPIC)], 5.0, leaders=leaders), cluster)
    assert results == {TOPIC: (0, None)} and leaders.address((TOPIC, 0)) == BROKERS[2]
    assert cluster.sent("ListOffsets") == [2]


def test_the_log_start_probe_reads_each_partition_on_its_leader(cluster):
    leaders = routing.Leaders()
    leaders.learn(ClusterView(dict(BROKERS), 1, {TOPIC: (0, {0: 1})}))  # stale
    answers = drive(logstart.probe([(TOPIC, 0)], leaders), cluster)
    assert answers[(TOPIC, 0)].error_code == 0 and cluster.sent("ListOffsets") == [1, 2]


def test_partitions_led_by_different_brokers_are_each_read_on_their_leader():
    """Two partitions, led by nodes 2 and 3: one ListOffsets to each, none to the bootstrap (which leads neither,
    and would answer a leader error that a log start probe takes as no evidence)."""
    led = {0: 2, 1: 3}
    leaders, asked = routing.Leaders(), []
    leaders.learn(ClusterView(dict(BROKERS), 1, {TOPIC: (0, led)}))

    def answer(call):
        node = next(n for n, address in BROKERS.items() if address == (call.to or BOOTSTRAP))
        keys = [(t.name, p.partition_index) for t in call.fields["topics"] for p in t.partitions]
        asked.append((node, keys))
        return {key: messages.ListOffsetsOutcome(0 if led[key[1]] == node else 6, -1, 7, 0) for key in keys}

    answers = drive(routing.list_offsets_on_leaders([(TOPIC, 0, -2), (TOPIC, 1, -2)], leaders), answer)
    assert {key: a.error_code for key, a in answers.items()} == {(TOPIC, 0): 0, (TOPIC, 1): 0}
    assert sorted(asked) == [(2, [(TOPIC, 0)]), (3, [(TOPIC, 1)])]


def test_a_history_whose_next_request_is_for_another_broker_waits_for_a_slot_there():
    """After local operations (an Advance), the next request's broker is found again: the slot the history was
    queued on was chosen for the Advance."""
    history = History("kafka-4", (CreateTopic("t"), Advance(0), Fetch("t")))
    leaders = routing.Leaders()
    leaders.learn(ClusterView(dict(BROKERS), 1, {TOPIC: (0, {0: 2})}))
    run = HistoryRun(history, {"t": TOPIC}, BOOTSTRAP, leaders)
    run.created({TOPIC: (0, None)}, 0, 0)
    pipeline, started = Pipeline(BOOTSTRAP, None), []
    pipeline.start = lambda steps, slot, done: started.append(slot.address)
    slot = lambda address: Slot(address, 1.0, None, 1.0, 1.0)  # noqa: E731
    assert run.address() == BOOTSTRAP  # the Advance is next
    assert run.step(pipeline, slot(BOOTSTRAP), lambda run: None) == ELSEWHERE
    assert len(run.observed) == 2 and run.address() == BROKERS[2] and started == []
    assert run.step(pipeline, slot(BROKERS[2]), lambda run: None) is True and started == [BROKERS[2]]
