"""The RetentionPass protocol of judge/retention.py, driven offline with a scripted broker.

The order is what makes the answer exact: the history's retention.ms in force (seen), two passes
of the broker's retention thread after it (each a canary batch gone), the log read, the hold back.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kafka", reason="the broker client needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.judge import retention  # noqa: E402
from ktc.kafka.client.messages import ListOffsetsOutcome, Pause, ProduceOutcome  # noqa: E402
from ktc.reference.types import RetentionResult, TopicConfig  # noqa: E402

TOPIC, CANARY, NOW = "ktc-t", "ktc-canary", 1_795_000_000_000


class ScriptedBroker:
    """Answers each request as a broker whose retention thread deletes a canary batch on the second poll."""

    def __init__(self, log_dir, alter_error: int = 0, earliest: int = 1, deletes_beside: bool = False):
        self.log_dir, self.alter_error, self.earliest = log_dir, alter_error, earliest
        self.deletes_beside = deletes_beside  # retention.ms is per topic: partition 1 loses its segment too
        self.retention, self.canary_end, self.polls, self.seen = "-1", 0, 0, []

    def answer(self, call):
        self.seen.append(describe(call))
        return getattr(self, call.api)(call.fields)

    def IncrementalAlterConfigs(self, fields):
        entry = fields["resources"][0].configs[0]
        self.retention = entry.value if self.alter_error == 0 else self.retention
        return self.alter_error, None

    def DescribeConfigs(self, fields):
        return {TOPIC: (0, {retention.RETENTION: self.retention})}

    def Produce(self, fields):
        self.canary_end += 1
        return ProduceOutcome(0, None, (), self.canary_end - 1, -1, 0, NOW, NOW)

    def ListOffsets(self, fields):
        topic = fields["topics"][0].name
        if topic == TOPIC:
            self.log_dir.bases = [1] if self.retention != "-1" else self.log_dir.bases
            self.log_dir.other = [] if self.deletes_beside else self.log_dir.other
            partition = fields["topics"][0].partitions[0].partition_index
            code = 0 if partition in self.log_dir.partition_bases(TOPIC) else 3
            return {(TOPIC, partition): ListOffsetsOutcome(code, -1, self.earliest if code == 0 else -1, 0)}
        self.polls += 1
        return {(CANARY, 0): ListOffsetsOutcome(0, -1, self.canary_end if self.polls % 2 == 0 else 0, 0)}


class FakeLogDir:
    def __init__(self, other_partition=(0,)):
        self.bases, self.other = [0, 1], list(other_partition)

    def partition_bases(self, topic):
        return {0: list(self.bases), 1: list(self.other)} if self.bases else {}


class FakeClock:
    def now(self):
        return NOW


def describe(call) -> str:
    if call.api == "IncrementalAlterConfigs":
        return f"set {call.fields['resources'][0].configs[0].value}"
    return f"{call.api} {getattr(call.fields.get('topics', [None])[0], 'name', '')}".strip()


def drive(steps, broker: ScriptedBroker):
    answer = None
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        answer = None if isinstance(step, Pause) else broker.answer(step)


def canary(broker) -> retention.Canary:
    made = retention.Canary.__new__(retention.Canary)
    made.topic = CANARY
    return made


@pytest.mark.parametrize(
    ("config", "held"),
    [
        (TopicConfig(retention_ms=600_000), {"retention.ms": -1}),
        (TopicConfig(), {"retention.ms": -1}),
        (TopicConfig(retention_ms=-1), {"retention.ms": -1}),
        (TopicConfig(retention_ms=-2), {}),
    ],
)
def test_topics_are_created_held_unless_their_retention_is_one_the_broker_must_refuse(config, held):
    assert retention.held_configs(config) == held


def test_a_pass_sets_the_history_value_waits_two_canary_passes_reads_the_log_then_holds_again():
    log_dir = FakeLogDir()
    broker = ScriptedBroker(log_dir)
    passes = retention.Retention(canary(broker), log_dir, FakeClock())
    result, produced = drive(passes.steps(TOPIC, 0, TopicConfig(retention_ms=600_000)), broker)
    assert (result, produced) == (RetentionResult((0,), 1), None)
    assert broker.seen == [
        "set 600000",
        "DescribeConfigs",
        "Produce",
        f"ListOffsets {CANARY}",
        f"ListOffsets {CANARY}",
        "Produce",
        f"ListOffsets {CANARY}",
        f"ListOffsets {CANARY}",
        f"ListOffsets {TOPIC}",
        "set -1",
        "DescribeConfigs",
    ]
    assert len(passes.summary()) == 3 and passes.summary()["retention_passes"] == 1


def test_a_topic_without_its_own_retention_gets_the_broker_default_for_the_pass():
    log_dir = FakeLogDir()
    broker = ScriptedBroker(log_dir)
    drive(retention.Retention(canary(broker), log_dir, FakeClock()).steps(TOPIC, 0, TopicConfig()), broker)
    assert broker.seen[0] == "set None"  # IncrementalAlterConfigs DELETE: the topic's own value dropped


def test_a_topic_the_broker_does_not_know_answers_with_its_error_and_waits_for_no_pass():
    log_dir = FakeLogDir()
    broker = ScriptedBroker(log_dir, alter_error=3)
    result, _ = drive(retention.Retention(canary(broker), log_dir, FakeClock()).steps(TOPIC, 0, None), broker)
    assert result == RetentionResult((), -1, 3) and broker.seen == ["set None"]


def test_a_partition_the_log_directory_lacks_is_answered_by_the_broker_without_touching_the_topic():
    log_dir = FakeLogDir()
    broker = ScriptedBroker(log_dir)
    result, cut = drive(retention.Retention(canary(broker), log_dir, FakeClock()).steps(TOPIC, 7, None), broker)
    assert (result, cut) == (RetentionResult((), -1, 3), None) and broker.seen == [f"ListOffsets {TOPIC}"]


def test_a_pass_that_also_deletes_another_partitions_segments_cuts_the_history_as_unknown():
    log_dir = FakeLogDir()
    broker = ScriptedBroker(log_dir, deletes_beside=True)
    result, cut = drive(
        retention.Retention(canary(broker), log_dir, FakeClock()).steps(TOPIC, 0, TopicConfig()), broker
    )
    assert result == RetentionResult((0,), 1)
    assert cut.validity == "unknown" and "also deleted segments of partition(s) [1]" in cut.reason


class CreatingClient:
    def __init__(self):
        self.created = []

    def create_topic(self, topic, configs):
        self.created.append(topic)
        return 0, None


class KeepsEveryBatch(ScriptedBroker):
    """A broker whose retention thread never deletes the canary's batch (stamped ahead of its clock)."""

    def ListOffsets(self, fields):
        return {(fields["topics"][0].name, 0): ListOffsetsOutcome(0, -1, 0, 0)}


def test_a_canary_batch_the_broker_keeps_fails_that_pass_and_a_fresh_canary_serves_the_next():
    client = CreatingClient()
    made = retention.Canary(client, CANARY)
    made.patience_s = 0.0
    with pytest.raises(retention.WireError, match="delete the canary batch"):
        drive(made.one_pass(NOW), KeepsEveryBatch(FakeLogDir()))
    assert client.created == [CANARY, f"{CANARY}-1"] and made.topic == f"{CANARY}-1"
