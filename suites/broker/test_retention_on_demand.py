"""RetentionPass on a broker ktc started on its clock: the broker's own retention thread, at the history's now
(implementations/kafka/judge/retention.py).

Each history runs on a real broker; the model runs the same history as the broker ran it (its clock
rebased); the broker must delete exactly the segments the model deletes -- and the model must delete
some, so the test cannot pass by nothing happening.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.reference import model  # noqa: E402
from ktc.reference.types import (  # noqa: E402
    Advance,
    Batch,
    CreateTopic,
    DescribeLog,
    History,
    ListOffsets,
    Produce,
    Record,
    RetentionPass,
    TopicConfig,
)

pytestmark = pytest.mark.xdist_group("broker-retention-on-demand")  # the module on one worker: its fixtures once
NOW, SEGMENT_MS, RETENTION_MS = 1_795_000_000_000, 60_000, 600_000
CONFIG = TopicConfig(segment_ms=SEGMENT_MS, retention_ms=RETENTION_MS)


@pytest.fixture(scope="module")
def kafka(clocked_kafka):
    return clocked_kafka


def produce(ts: int) -> Produce:
    return Produce("t", Batch((Record(ts),)))


def history(*middle) -> History:
    ops = (CreateTopic("t", CONFIG), *middle, RetentionPass("t"), DescribeLog("t"), ListOffsets("t", -2))
    return History("kafka-3.6", ops, NOW)


def broker_and_model(kafka, h: History, op_type=RetentionPass):
    """The broker's answer to the history's first ``op_type`` and the model's, on the history as run
    (its clock ops replaced by the broker clock's moves)."""
    trace = kafka.run([h])[0]
    assert trace.cut is None, trace.cut
    as_run, answers = trace.judged_as[0]
    index = next(i for i, op in enumerate(as_run.ops) if isinstance(op, op_type))
    return answers[index], model.run(as_run)[index]


def test_a_segment_whose_max_is_older_than_retention_ms_is_deleted_and_the_next_one_kept(kafka):
    h = history(produce(NOW), Advance(SEGMENT_MS + 1), produce(NOW + SEGMENT_MS + 1), Advance(RETENTION_MS))
    observed, expected = broker_and_model(kafka, h)
    assert expected.deleted_base_offsets, "the model must delete a segment here"
    assert observed == expected


def test_a_segment_of_records_without_timestamps_is_deleted_by_its_file_mtime(kafka):
    h = history(produce(-1), Advance(RETENTION_MS + 1))
    observed, expected = broker_and_model(kafka, h)
    assert expected.deleted_base_offsets, "the model must delete the segment by its mtime here"
    assert observed == expected


@pytest.mark.parametrize("age", [RETENTION_MS, RETENTION_MS + 1])
def test_retention_measures_strictly_more_than_retention_ms(kafka, age):
    h = history(produce(NOW), Advance(SEGMENT_MS + 1), produce(NOW + SEGMENT_MS + 1), Advance(age - SEGMENT_MS - 1))
    observed, expected = broker_and_model(kafka, h)
    assert observed == expected


def test_a_held_topic_keeps_its_segments_while_time_passes_without_a_retention_pass(kafka):
    h = History(
        "kafka-3.6",
        (
            CreateTopic("t", CONFIG),
            produce(NOW),
            Advance(SEGMENT_MS + 1),
            produce(NOW + SEGMENT_MS + 1),
            Advance(10 * RETENTION_MS),
            DescribeLog("t"),
        ),
        NOW,
    )
    observed, expected = broker_and_model(kafka, h, DescribeLog)
    segments = lambda answer: [(g.base_offset, g.next_offset, g.max_timestamp) for g in answer.segments]
    assert len(expected.segments) == 2 and segments(observed) == segments(expected)  # the index lags: KIP-33


def test_a_pass_of_a_partition_that_does_not_exist_deletes_nothing_anywhere(kafka):
    """Found by the generated histories: Kafka's retention.ms is per topic, so a pass asked for a stray
    partition must not set it (it deleted partition 1's segment one operation early)."""
    config = TopicConfig(retention_ms=32, partitions=3)
    h = History(
        "kafka-3.6",
        (
            CreateTopic("t", config),
            Produce("t", Batch((Record(0),)), partition=1),
            RetentionPass("t", -1),
            RetentionPass("t", 1),
        ),
        NOW,
    )
    trace = kafka.run([h])[0]
    as_run, answers = trace.judged_as[0]
    expected = model.run(as_run)
    passes = [i for i, op in enumerate(as_run.ops) if isinstance(op, RetentionPass)]
    assert expected[passes[1]].deleted_base_offsets, "the model must delete partition 1's segment at the second pass"
    assert [answers[i] for i in passes] == [expected[i] for i in passes]


def test_a_pass_that_deletes_another_partitions_segments_ends_the_history_unknown(kafka):
    config = TopicConfig(retention_ms=32, partitions=2)
    h = History(
        "kafka-3.6",
        (
            CreateTopic("t", config),
            *(Produce("t", Batch((Record(0),)), partition=p) for p in (0, 1)),
            RetentionPass("t", 0),
        ),
        NOW,
    )
    cut = kafka.run([h])[0].cut
    assert cut is not None and cut.validity == "unknown" and "partition(s) [1]" in cut.reason
