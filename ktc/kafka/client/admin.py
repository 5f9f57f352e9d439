"""Kafka's admin requests as data (``messages.Call``): what the broker speaks (ApiVersions), the cluster
(Metadata), topics (CreateTopics, DeleteTopics; routing.py's ``create_and_wait`` waits until every partition's
leader answers) and configs (DescribeConfigs, IncrementalAlterConfigs).  messages.py holds the Call itself and the
record requests (Produce, Fetch, ListOffsets); error codes stay data here too."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .messages import VERSIONS, Call
from .records import WireError

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.admin import CreateTopicsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest
    from kafka.protocol.metadata import MetadataRequest

TOPIC_ALREADY_EXISTS = 36
CONFIG_SET, CONFIG_DELETE = 0, 1  # IncrementalAlterConfigs operations
RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4


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
