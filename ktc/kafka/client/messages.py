"""Kafka requests as data: what to send (kafka-python's framing) and how to read the answer.

A ``Call`` names an API, its request fields and a parser that turns the response into plain
outcomes; Kafka error codes are data, never exceptions.  Operations that take several requests
(create topics and wait until they answer, read a whole partition) are generators that yield
``Call`` and ``Pause`` and receive each parsed answer, so the blocking ``wire.Client`` and the
pipelined connections (pipeline.py) run exactly the same steps.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

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
TOPIC_ALREADY_EXISTS, OFFSET_OUT_OF_RANGE = 36, 1
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
CONFIG_SET, CONFIG_DELETE = 0, 1  # IncrementalAlterConfigs operations
RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4


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


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    source: int
    read_only: bool
    synonyms: tuple[tuple[str, str | None, int], ...]


@dataclass(frozen=True)
class ClusterView:
    """What Metadata says: brokers by node id, the controller, and each asked topic's partition leaders."""

    brokers: dict[int, tuple[str, int]]
    controller: int
    topics: dict[str, tuple[int, dict[int, int]]]  # name -> (error code, {partition: leader node id})


class NewTopic(NamedTuple):
    name: str
    configs: Mapping[str, object] = {}
    partitions: int = 1
    replication_factor: int = 1


# ---- calls -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request for any connection: the API, its fields, and how to read its response."""

    api: str
    fields: dict
    parse: Callable[[Any], object]  # reads kafka-python's response object (untyped: its fields are Any)
    at: int | None = None  # the request version, when not the one VERSIONS gives

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


def api_versions() -> Call:
    return Call("ApiVersions", dict(client_software_name="ktc", client_software_version="0"), parse_api_versions)


def parse_api_versions(response) -> dict[int, tuple[int, int]]:
    if response.error_code:
        raise WireError(f"ApiVersions error {response.error_code}")
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def create_topics(topics: Sequence[NewTopic], timeout_ms: int = 30_000) -> Call:
    req = CreateTopicsRequest[VERSIONS["CreateTopics"]]
    creatable = [
        req.CreatableTopic(
            name=t.name,
            num_partitions=t.partitions,
            replication_factor=t.replication_factor,
            assignments=[],
            configs=[req.CreatableTopic.CreatableTopicConfig(name=k, value=str(v)) for k, v in dict(t.configs).items()],
        )
        for t in topics
    ]
    return Call(
        "CreateTopics",
        dict(topics=creatable, timeout_ms=timeout_ms, validate_only=False),
        lambda response: {t.name: (t.error_code, t.error_message) for t in response.topics},
    )


def delete_topics(names: Iterable[str], timeout_ms: int = 30_000) -> Call:
    return Call(
        "DeleteTopics",
        dict(topic_names=list(names), timeout_ms=timeout_ms),
        lambda response: {r.name: r.error_code for r in response.responses},
    )


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


def metadata(topics: Sequence[str] | None = None) -> Call:
    """Metadata for ``topics`` (None: every topic), never creating one."""
    req = MetadataRequest[VERSIONS["Metadata"]]
    asked = None if topics is None else [req.MetadataRequestTopic(name=t) for t in topics]
    return Call(
        "Metadata",
        dict(topics=asked, allow_auto_topic_creation=False, include_topic_authorized_operations=False),
        parse_metadata,
    )


def parse_metadata(response) -> ClusterView:
    brokers = {b.node_id: (b.host, b.port) for b in response.brokers}
    topics = {t.name: (t.error_code, {p.partition_index: p.leader_id for p in t.partitions}) for t in response.topics}
    return ClusterView(brokers, response.controller_id, topics)


def describe_configs(resource_type: int, name: str, keys: Sequence[str] | None = None) -> Call:
    req = DescribeConfigsRequest[VERSIONS["DescribeConfigs"]]
    resource = req.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=None if keys is None else list(keys)
    )
    return Call(
        "DescribeConfigs",
        dict(resources=[resource], include_synonyms=True, include_documentation=False),
        parse_describe_configs,
    )


def parse_describe_configs(response) -> tuple[int, str | None, dict[str, ConfigEntry]]:
    r = response.results[0]
    entries = {
        c.name: ConfigEntry(
            c.name,
            c.value,
            c.config_source,
            c.read_only,
            tuple((s.name, s.value, s.source) for s in (c.synonyms or ())),
        )
        for c in r.configs
    }
    return r.error_code, r.error_message, entries


def describe_topics_configs(topics: Sequence[tuple[str, Sequence[str] | None]]) -> Call:
    """DescribeConfigs for several topics at once, each for the keys given (None: all); parsed as
    {topic: (error code, {key: value})}."""
    req = DescribeConfigsRequest[VERSIONS["DescribeConfigs"]]
    resources = [
        req.DescribeConfigsResource(
            resource_type=RESOURCE_TOPIC, resource_name=name, configuration_keys=None if keys is None else list(keys)
        )
        for name, keys in topics
    ]
    return Call(
        "DescribeConfigs",
        dict(resources=resources, include_synonyms=False, include_documentation=False),
        lambda response: {
            r.resource_name: (r.error_code, {c.name: c.value for c in r.configs}) for r in response.results
        },
    )


def alter_topic_config(topic: str, key: str, value: object | None) -> Call:
    """IncrementalAlterConfigs of one topic key: set it to ``value``, or drop the topic's own value
    (None: the broker default applies).  Parsed as (error code, error message)."""
    req = IncrementalAlterConfigsRequest[VERSIONS["IncrementalAlterConfigs"]]
    entry = req.AlterConfigsResource.AlterableConfig(
        name=key,
        config_operation=CONFIG_DELETE if value is None else CONFIG_SET,
        value=None if value is None else str(value),
    )
    resource = req.AlterConfigsResource(resource_type=RESOURCE_TOPIC, resource_name=topic, configs=[entry])
    return Call(
        "IncrementalAlterConfigs",
        dict(resources=[resource], validate_only=False),
        lambda response: (response.responses[0].error_code, response.responses[0].error_message),
    )


# ---- operations of several requests (generators: yield Call or Pause, receive the parsed answer) ---


def create_and_wait(
    topics: Sequence[NewTopic], wait_s: float = 10.0, timeout_ms: int = 30_000, exists_ok: bool = False
):
    """CreateTopics for all ``topics`` in one request; then, for those created, ListOffsets on every
    partition until all answer (up to ``wait_s``): CreateTopics returns when the controller has
    committed a topic, which can be before the broker has applied it (a Produce then gets
    UNKNOWN_TOPIC_OR_PARTITION).  Returns {name: (error_code, error_message)}.  ``exists_ok``: the
    name is ours alone, so TOPIC_ALREADY_EXISTS can only mean our own earlier attempt (a request
    resent after its connection broke) got through: it counts as created."""
    results = yield create_topics(topics, timeout_ms)
    if exists_ok:
        results = {
            name: (0, None) if code == TOPIC_ALREADY_EXISTS else (code, message)
            for name, (code, message) in results.items()
        }
    pending = [(t.name, p, LATEST_TIMESTAMP) for t in topics if results[t.name][0] == 0 for p in range(t.partitions)]
    deadline = time.monotonic() + wait_s
    while pending and wait_s > 0:
        answers = yield list_offsets(pending)
        pending = [k for k in pending if answers[k[:2]].error_code != 0]
        if pending and time.monotonic() > deadline:
            raise WireError(
                f"topic {pending[0][0]!r} partition {pending[0][1]} not ready {wait_s} s after CreateTopics"
            )
        if pending:
            yield Pause(0.01)
    return results


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
        if more.error_code or not more.batches:
            break
        batches += more.batches
        offset = next_offset(more.batches)
    return FetchOutcome(first.error_code, first.high_watermark, first.log_start_offset, tuple(batches))


def next_offset(batches: Sequence[DecodedBatch]) -> int:
    return batches[-1].base_offset + batches[-1].last_offset_delta + 1
