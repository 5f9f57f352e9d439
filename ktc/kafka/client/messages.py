"""Kafka requests as data: what to send (kafka-python's framing) and how to read the answer.

A ``Call`` names an API, its request fields and a parser that turns the response into plain
outcomes; Kafka error codes are data, never exceptions.  Operations that take several requests
(create topics and wait until they answer, read a whole partition) are generators that yield
``Call`` and ``Pause`` and receive each parsed answer, so the blocking ``wire.Client`` and the
pipelined connections (pipeline.py) run exactly the same steps.

This module holds the Call, the one table of the APIs and versions ktc speaks, and the record requests
(Produce, Fetch, ListOffsets; ``fetch_all``); the admin requests (topics, configs, Metadata, ApiVersions)
are admin.py's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ktc.reference.types import LIST_OFFSETS_MAX_VERSION, RecordError

from .records import DecodedBatch, WireError, decode_batches

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.admin import (
        CreateTopicsRequest,
        CreateTopicsResponse,
        DeleteTopicsRequest,
        DeleteTopicsResponse,
        DescribeConfigsRequest,
        DescribeConfigsResponse,
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse,
    )
    from kafka.protocol.consumer import FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

# The versions this client speaks: inside the ranges of both 3.9 and 4.x brokers (4.0 removed
# Produce v0-2, Fetch v0-3, ListOffsets v0, CreateTopics v0-1, DescribeConfigs v0, DeleteTopics v0 - KIP-896).
VERSIONS = {
    "ApiVersions": 3,
    "Produce": 8,  # first version with record_errors + error_message (KIP-467)
    "Fetch": 11,  # last non-flexible version that names topics (13+ uses topic ids)
    "ListOffsets": 7,  # MAX_TIMESTAMP (-3) needs v7 (KIP-734); judged histories ask for up to LIST_OFFSETS_MAX
    "CreateTopics": 5,
    "DeleteTopics": 4,  # first flexible version; still by name (6 adds topic ids)
    "DescribeConfigs": 4,
    "Metadata": 9,  # flexible, names topics; inside the ranges of 3.9 and 4.x (4.0 dropped v0-3)
    "IncrementalAlterConfigs": 1,
}
API_KEYS = {
    "Produce": 0,
    "Fetch": 1,
    "ListOffsets": 2,
    "ApiVersions": 18,
    "CreateTopics": 19,
    "DeleteTopics": 20,
    "DescribeConfigs": 32,
    "Metadata": 3,
    "IncrementalAlterConfigs": 44,
}
MESSAGES = {
    "Produce": (ProduceRequest, ProduceResponse),
    "Fetch": (FetchRequest, FetchResponse),
    "ListOffsets": (ListOffsetsRequest, ListOffsetsResponse),
    "ApiVersions": (ApiVersionsRequest, ApiVersionsResponse),
    "CreateTopics": (CreateTopicsRequest, CreateTopicsResponse),
    "DeleteTopics": (DeleteTopicsRequest, DeleteTopicsResponse),
    "DescribeConfigs": (DescribeConfigsRequest, DescribeConfigsResponse),
    "Metadata": (MetadataRequest, MetadataResponse),
    "IncrementalAlterConfigs": (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
}
LIST_OFFSETS_MAX = LIST_OFFSETS_MAX_VERSION  # the newest ListOffsets version ktc sends (v11: KIP-1023)
LATEST_TIMESTAMP, EARLIEST_TIMESTAMP, MAX_TIMESTAMP = -1, -2, -3
OFFSET_OUT_OF_RANGE = 1
LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER = 5, 6
# Answers about a partition asked of a broker that does not lead it (now): the request was not applied, and Kafka's
# own clients refresh their metadata and send it again (routing.py).
LEADER_ERRORS = frozenset({LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER})
# Requests that may be sent again after a connection broke mid-request: reads, and admin requests
# whose repeat is recognisable (TOPIC_ALREADY_EXISTS / UNKNOWN_TOPIC_OR_PARTITION on our own names),
# and setting a config (twice is the same as once).
RETRY_SAFE = frozenset(
    {
        "ApiVersions",
        "Metadata",
        "DescribeCluster",
        "DescribeConfigs",
        "Fetch",
        "ListOffsets",
        "CreateTopics",
        "DeleteTopics",
        "IncrementalAlterConfigs",
    }
)


# ---- responses as plain data ---------------------------------------------------------------


@dataclass(frozen=True)
class ProduceOutcome:
    error_code: int
    error_message: str | None
    record_errors: tuple[RecordError, ...]
    base_offset: int
    log_append_time: int
    log_start_offset: int
    sent_ms: int  # wall clock just before the request left
    received_ms: int  # wall clock just after the response arrived


@dataclass(frozen=True)
class FetchOutcome:
    error_code: int
    high_watermark: int
    log_start_offset: int
    batches: tuple[DecodedBatch, ...]


@dataclass(frozen=True)
class ListOffsetsOutcome:
    error_code: int
    timestamp: int
    offset: int
    leader_epoch: int


# ---- calls -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request for any connection: the API, its fields, and how to read its response."""

    api: str
    fields: dict
    parse: Callable[[Any], object]  # reads kafka-python's response object (untyped: its fields are Any)
    at: int | None = None  # the request version, when not the one VERSIONS gives
    to: tuple[str, int] | None = None  # the broker it must reach (a partition's leader); None: the connection's own

    @property
    def version(self) -> int:
        return VERSIONS[self.api] if self.at is None else self.at

    @property
    def retry_safe(self) -> bool:
        """Whether sending it twice is harmless (a Produce is not: it may be appended twice)."""
        return self.api in RETRY_SAFE

    def request(self, correlation_id: int, client_id: str) -> bytes:
        request = MESSAGES[self.api][0][self.version](**self.fields)
        request.with_header(correlation_id=correlation_id, client_id=client_id)
        return request.encode(header=True, framed=True)

    def response(self, data: bytes):
        """The decoded response (header included) of a frame without its size prefix."""
        return MESSAGES[self.api][1][self.version].decode(data, header=True)


@dataclass(frozen=True)
class Pause:
    """A step of a multi-request operation: wait this long before the next request."""

    seconds: float


def produce(
    topic: str,
    records: bytes,
    *,
    partition: int = 0,
    acks: int = -1,
    timeout_ms: int = 30_000,
    transactional_id: str | None = None,
) -> Call:
    req = ProduceRequest[VERSIONS["Produce"]]
    data = req.TopicProduceData(
        name=topic, partition_data=[req.TopicProduceData.PartitionProduceData(index=partition, records=records)]
    )
    return Call(
        "Produce",
        dict(transactional_id=transactional_id, acks=acks, timeout_ms=timeout_ms, topic_data=[data]),
        parse_produce,
    )


def parse_produce(response) -> ProduceOutcome:
    """The outcome with sent_ms = received_ms = 0: the sender knows when it sent and received."""
    p = response.responses[0].partition_responses[0]
    return ProduceOutcome(
        error_code=p.error_code,
        error_message=p.error_message,
        record_errors=tuple(RecordError(e.batch_index, e.batch_index_error_message) for e in p.record_errors),
        base_offset=p.base_offset,
        log_append_time=p.log_append_time_ms,
        log_start_offset=p.log_start_offset,
        sent_ms=0,
        received_ms=0,
    )


def fetch(
    topic: str,
    *,
    partition: int = 0,
    offset: int = 0,
    max_bytes: int = 64 << 20,
    max_wait_ms: int = 0,
    isolation_level: int = 0,
) -> Call:
    req = FetchRequest[VERSIONS["Fetch"]]
    part = req.FetchTopic.FetchPartition(
        partition=partition,
        current_leader_epoch=-1,
        fetch_offset=offset,
        log_start_offset=-1,
        partition_max_bytes=max_bytes,
    )
    return Call(
        "Fetch",
        dict(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=0,
            max_bytes=max_bytes,
            isolation_level=isolation_level,
            session_id=0,
            session_epoch=-1,
            topics=[req.FetchTopic(topic=topic, partitions=[part])],
            forgotten_topics_data=[],
            rack_id="",
        ),
        parse_fetch,
    )


def parse_fetch(response) -> FetchOutcome:
    if response.error_code:
        return FetchOutcome(response.error_code, -1, -1, ())
    if not response.responses or not response.responses[0].partitions:
        raise WireError("the Fetch answer names no partition")
    p = response.responses[0].partitions[0]
    return FetchOutcome(
        p.error_code, p.high_watermark, p.log_start_offset, tuple(decode_batches(bytes(p.records or b"")))
    )


def list_offsets(targets: Sequence[tuple[str, int, int]], isolation_level: int = 0, version: int | None = None) -> Call:
    """ListOffsets for (topic, partition, target) triples, all in one request; parsed by (topic, partition).
    ``version``: the request version (default VERSIONS'); ``isolation_level`` 1 reads committed (v2+)."""
    if version is not None and not 1 <= version <= LIST_OFFSETS_MAX:
        raise ValueError(f"ListOffsets v{version}: ktc sends v1 to v{LIST_OFFSETS_MAX}")
    req = ListOffsetsRequest[VERSIONS["ListOffsets"] if version is None else version]
    by_topic: dict[str, list] = {}
    for topic, partition, target in targets:
        by_topic.setdefault(topic, []).append(
            req.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=partition, current_leader_epoch=-1, timestamp=target
            )
        )
    topics = [req.ListOffsetsTopic(name=name, partitions=parts) for name, parts in by_topic.items()]
    return Call(
        "ListOffsets", dict(replica_id=-1, isolation_level=isolation_level, topics=topics), parse_list_offsets, version
    )


def parse_list_offsets(response) -> dict[tuple[str, int], ListOffsetsOutcome]:
    return {
        (t.name, p.partition_index): ListOffsetsOutcome(p.error_code, p.timestamp, p.offset, p.leader_epoch)
        for t in response.topics
        for p in t.partitions
    }


# ---- operations of several requests (generators: yield Call or Pause, receive the parsed answer) ---


def fetch_all(topic: str, partition: int = 0, max_wait_ms: int = 0):
    """Every batch from the log start to the high watermark (several Fetches if needed)."""
    first = yield fetch(topic, partition=partition, offset=0, max_wait_ms=max_wait_ms)
    if first.error_code == OFFSET_OUT_OF_RANGE:  # the log starts later: retention deleted its first segments
        start = (yield list_offsets([(topic, partition, EARLIEST_TIMESTAMP)]))[(topic, partition)]
        first = (
            first
            if start.error_code
            else (yield fetch(topic, partition=partition, offset=start.offset, max_wait_ms=max_wait_ms))
        )
    if first.error_code:
        return first
    batches = list(first.batches)
    offset = next_offset(batches) if batches else first.high_watermark
    while batches and offset < first.high_watermark:
        more = yield fetch(topic, partition=partition, offset=offset, max_wait_ms=max_wait_ms)
        if more.error_code in LEADER_ERRORS:  # leadership moved mid-read: the whole read is asked again (routing.py)
            return more
        if more.error_code or not more.batches:
            break
        batches += more.batches
        offset = next_offset(more.batches)
    return FetchOutcome(first.error_code, first.high_watermark, first.log_start_offset, tuple(batches))


def next_offset(batches: Sequence[DecodedBatch]) -> int:
    return batches[-1].base_offset + batches[-1].last_offset_delta + 1
