"""Record requests of many operations in one request (ktc/kafka/client/combine.py) and histories that share a
topic (implementations/kafka/judge/sharing.py): what may go together, and that each operation reads of a
combined answer exactly what the answer to its own request would have said."""

import socket
import struct
import threading
from collections import Counter

import pytest

from ktc.implementations.kafka.judge import creation, sharing
from ktc.implementations.kafka.judge.history_run import HistoryRun
from ktc.kafka.client import combine, messages
from ktc.kafka.client.multiplex import MAX_RESENDS, Lost, Multiplexer
from ktc.kafka.client.records import encode_batch
from ktc.reference.types import Batch, CreateTopic, Fetch, History, ListOffsets, Produce, Record, TopicConfig

pytest.importorskip("kafka")
from kafka.protocol.consumer import ListOffsetsResponse  # noqa: E402
from kafka.protocol.producer import ProduceResponse  # noqa: E402

PLAIN = encode_batch(Batch((Record(1_700_000_000_000),)))


def produce_response(answers: dict[tuple[str, int], int]):
    """A Produce v8 answer giving each (topic, partition) its own base offset, error code = partition."""
    cls = ProduceResponse[8]
    topics: dict[str, list] = {}
    for (topic, partition), offset in answers.items():
        topics.setdefault(topic, []).append(
            cls.TopicProduceResponse.PartitionProduceResponse(
                index=partition, error_code=partition, base_offset=offset, log_append_time_ms=-1, log_start_offset=0
            )
        )
    names = [cls.TopicProduceResponse(name=name, partition_responses=parts) for name, parts in topics.items()]
    return cls(responses=names, throttle_time_ms=0)


def test_each_operation_reads_its_own_partition_of_a_combined_produce_answer():
    calls = [messages.produce("a", PLAIN), messages.produce("b", PLAIN), messages.produce("a", PLAIN, partition=3)]
    merged = combine.merged(calls)
    sent = {(t.name, p.index) for t in merged.fields["topic_data"] for p in t.partition_data}
    assert sent == {("a", 0), ("b", 0), ("a", 3)}
    assert len(merged.fields["topic_data"]) == 2  # one entry per topic, its partitions together
    answer = produce_response({("a", 0): 10, ("b", 0): 20, ("a", 3): 30})
    for call, part, (topic, partition, offset) in zip(
        calls, combine.parts(calls, answer), [("a", 0, 10), ("b", 0, 20), ("a", 3, 30)], strict=True
    ):
        alone = produce_response({(topic, partition): offset})
        assert call.parse(part) == call.parse(alone)


def test_each_operation_reads_only_its_own_partitions_of_a_combined_list_offsets_answer():
    calls = [messages.list_offsets([("a", 0, -1), ("a", 1, -2)]), messages.list_offsets([("b", 2, -3)])]
    cls = ListOffsetsResponse[7]
    parts = lambda keys: [  # noqa: E731
        cls.ListOffsetsTopicResponse(
            name=topic,
            partitions=[
                cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                    partition_index=p, error_code=0, timestamp=-1, offset=p * 7, leader_epoch=0
                )
            ],
        )
        for topic, p in keys
    ]
    answer = cls(throttle_time_ms=0, topics=parts([("a", 0), ("b", 2), ("a", 1)]))
    first, second = (call.parse(part) for call, part in zip(calls, combine.parts(calls, answer), strict=True))
    assert set(first) == {("a", 0), ("a", 1)} and first[("a", 1)].offset == 7
    assert set(second) == {("b", 2)} and second[("b", 2)].offset == 14


def test_requests_go_together_only_with_the_same_fields_and_never_with_the_same_partition_twice():
    same = [messages.list_offsets([("a", 0, -1)]), messages.list_offsets([("a", 0, -2)])]
    assert combine.groups(same) == [[0], [1]]  # one partition twice: two requests
    many = [messages.list_offsets([("a", p, -1)]) for p in range(combine.SHAPES["ListOffsets"].most + 1)]
    assert [len(g) for g in combine.groups(many)] == [combine.SHAPES["ListOffsets"].most, 1]
    assert combine.key(messages.list_offsets([("a", 0, -1)], version=7)) != combine.key(
        messages.list_offsets([("a", 0, -1)], version=8)
    )
    assert combine.key(messages.list_offsets([("a", 0, -1)], 1)) != combine.key(messages.list_offsets([("a", 0, -1)]))


def test_a_combined_fetch_may_return_as_many_bytes_as_its_parts_together():
    calls = [messages.fetch("a", partition=p) for p in range(3)]
    merged = combine.merged(calls)
    assert merged.fields["max_bytes"] == 3 * calls[0].fields["max_bytes"]
    assert combine.merged([messages.fetch("a", partition=p) for p in range(40)]).fields["max_bytes"] == 2**31 - 1


def test_only_plain_record_batches_share_a_produce():
    assert combine.combinable(messages.produce("a", PLAIN))
    transactional = encode_batch(Batch((Record(1),), transactional=True), producer_id=5)
    idempotent = encode_batch(Batch((Record(1),)), producer_id=5, producer_epoch=0, base_sequence=0)
    for records in (transactional, idempotent, b"", PLAIN[:-1], PLAIN + PLAIN):
        assert not combine.combinable(messages.produce("a", records))
    assert combine.combinable(messages.fetch("a")) and not combine.combinable(messages.Call("Metadata", {}, id))


CONFIG = TopicConfig(partitions=2)


def history(*ops, config: TopicConfig = CONFIG) -> History:
    return History("kafka-4", (CreateTopic("t", config), *ops))


def test_a_history_shares_a_topic_only_when_it_acts_on_its_own_partitions_of_its_one_topic():
    produce = Produce("t", Batch((Record(1),)), partition=1)
    assert sharing.shareable(history(produce, Fetch("t", 1), ListOffsets("t", -1, 0))) is not None
    assert sharing.shareable(history(Produce("t", Batch((Record(1),)), partition=2))) is None  # no such partition
    assert sharing.shareable(history(produce, CreateTopic("t", CONFIG))) is None
    assert sharing.shareable(History("kafka-4", (produce,))) is None


def test_histories_of_one_config_get_blocks_of_one_topic_and_are_judged_on_their_own_numbers():
    produce = Produce("t", Batch((Record(1),)), partition=1)
    bootstrap = ("127.0.0.1", 9092)
    runs = [HistoryRun(history(produce), {"t": f"topic-{i}"}, bootstrap) for i in range(2)]
    runs.append(HistoryRun(history(config=TopicConfig(partitions=1)), {"t": "topic-2"}, bootstrap))
    holders: Counter = Counter()
    sharing.share(runs, holders)
    assert [run.at("t", 1) for run in runs[:2]] == [("topic-0", 1), ("topic-0", 3)]
    assert runs[2].at("t", 0) == ("topic-2", 0)
    assert holders == {"topic-0": 2, "topic-2": 1}
    assert runs[1].on_wire(produce).partition == 3 and runs[0].on_wire(produce) is produce
    assert runs[1].probe == [("topic-0", 3)]
    created = creation.new_topics(runs, lambda config: {})
    assert [(t.name, t.partitions) for t in created] == [("topic-0", 4), ("topic-2", 1)]


def test_a_combined_request_lost_with_its_connection_is_each_operations_loss_and_resent_together():
    """A listener that reads one request per connection and closes it: both reads went out as one request each
    time (resent together, as reads are safe to repeat) and each operation ends Lost on its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    frames: list[int] = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                size = struct.unpack(">i", conn.recv(4, socket.MSG_WAITALL))[0]
                conn.recv(size, socket.MSG_WAITALL)
                frames.append(size)

    threading.Thread(target=serve, daemon=True).start()
    pipeline = Multiplexer(listener.getsockname(), connections=2, depth=1)
    pipeline.combining = True
    outcomes: dict[int, object] = {}
    for partition in (0, 1):
        call = messages.list_offsets([("a", partition, -1)])
        slot = pipeline.free(listener.getsockname())
        pipeline.start(iter_one(call), slot, lambda answer, received, p=partition: outcomes.__setitem__(p, answer))
    try:
        pipeline.wait(lambda: len(outcomes) == 2)
    finally:
        pipeline.close()
        listener.close()
    assert all(isinstance(outcome, Lost) for outcome in outcomes.values())
    assert len(frames) == MAX_RESENDS + 1  # one request for both, each time
    single = len(messages.list_offsets([("a", 0, -1)]).request(1, "ktc"))
    assert all(size + 4 > single for size in frames)  # each names both partitions


def iter_one(call):
    answer = yield call
    return answer
