"""Moving a partition's leadership: the cluster's brokers and a partition's replicas (Metadata),
AlterPartitionReassignments and ElectLeaders PREFERRED.  Both of the latter are forwarded to the KRaft controller
and need ALTER on CLUSTER; a reassignment that only reorders the replica list moves no data.  Error codes stay
data: every function returns what the broker said.

    brokers = cluster(client).brokers                       # {node id: (host, port)}
    reorder(client, topic, 0, [3, 1, 2])                     # node 3 becomes the preferred leader
    elect_preferred(client, topic, [0])                      # {0: (0, None)}: node 3 leads
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from . import wire

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.admin import (
        AlterPartitionReassignmentsRequest,
        AlterPartitionReassignmentsResponse,
        CreateTopicsRequest,
        CreateTopicsResponse,
        ElectLeadersRequest,
        ElectLeadersResponse,
    )
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

METADATA_VERSION = 9  # flexible, names topics, lists replicas and the ISR
REASSIGN_KEY, ELECT_KEY = 45, 43
REASSIGN_VERSION, ELECT_VERSION = 0, 2  # inside the ranges of 3.x and 4.x; ElectLeaders v1+ carries the type
PREFERRED = 0
CLUSTER_AUTHORIZATION_FAILED = 31
ELECTION_NOT_NEEDED = 84
ERROR_NAMES = {
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    41: "NOT_CONTROLLER",
    80: "PREFERRED_LEADER_NOT_AVAILABLE",
    84: "ELECTION_NOT_NEEDED",
    85: "NO_REASSIGNMENT_IN_PROGRESS",
}


class MoveError(RuntimeError):
    """Leadership did not move as asked (the message says which partition and what the broker answered)."""


@dataclass(frozen=True)
class Partition:
    leader: int  # node id, -1 without one
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error_code: int


@dataclass(frozen=True)
class Cluster:
    brokers: dict[int, tuple[str, int]]
    partitions: dict[tuple[str, int], Partition]


def named(code: int) -> str:
    return f"{ERROR_NAMES.get(code, 'error')} ({code})"


def offers(client: wire.Client) -> str | None:
    """Why the broker cannot move leadership (it does not offer the requests at the versions ktc speaks), or None."""
    versions = client.supported_versions()
    for name, key, version in (
        ("AlterPartitionReassignments", REASSIGN_KEY, REASSIGN_VERSION),
        ("ElectLeaders", ELECT_KEY, ELECT_VERSION),
    ):
        low, high = versions.get(key, (1, 0))
        if not low <= version <= high:
            return f"the broker does not offer {name} v{version} (ApiVersions: {versions.get(key)})"
    return None


def cluster(client: wire.Client, topics: Sequence[str] = ()) -> Cluster:
    """The brokers, and each named topic's partitions (leader, replicas, ISR), as this broker sees them."""
    asked = [MetadataRequest[METADATA_VERSION].MetadataRequestTopic(name=t) for t in topics]
    response = client.request(
        MetadataRequest,
        MetadataResponse,
        METADATA_VERSION,
        topics=asked,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    partitions = {
        (t.name, p.partition_index): Partition(
            p.leader_id, tuple(p.replica_nodes), tuple(p.isr_nodes), p.error_code or t.error_code
        )
        for t in response.topics
        for p in t.partitions
    }
    return Cluster({b.node_id: (b.host, b.port) for b in response.brokers}, partitions)


def reorder(client: wire.Client, topic: str, partition: int, replicas: Sequence[int]) -> tuple[int, str | None]:
    """AlterPartitionReassignments of one partition to ``replicas``: the top-level error, else the partition's."""
    req = AlterPartitionReassignmentsRequest[REASSIGN_VERSION]
    moved = req.ReassignableTopic(
        name=topic,
        partitions=[req.ReassignableTopic.ReassignablePartition(partition_index=partition, replicas=list(replicas))],
    )
    response = client.request(
        AlterPartitionReassignmentsRequest,
        AlterPartitionReassignmentsResponse,
        REASSIGN_VERSION,
        timeout_ms=30_000,
        topics=[moved],
    )
    if response.error_code:
        return response.error_code, response.error_message
    answer = response.responses[0].partitions[0]
    return answer.error_code, answer.error_message


def elect_preferred(
    client: wire.Client, topic: str, partitions: Sequence[int]
) -> tuple[int, dict[int, tuple[int, str | None]]]:
    """ElectLeaders PREFERRED: the top-level error and each partition's (error code, message)."""
    req = ElectLeadersRequest[ELECT_VERSION]
    response = client.request(
        ElectLeadersRequest,
        ElectLeadersResponse,
        ELECT_VERSION,
        election_type=PREFERRED,
        topic_partitions=[req.TopicPartitions(topic=topic, partitions=list(partitions))],
        timeout_ms=30_000,
    )
    out = {
        p.partition_id: (p.error_code, p.error_message)
        for result in response.replica_election_results
        for p in result.partition_result
    }
    return response.error_code, out


def permitted(client: wire.Client, absent_topic: str) -> str | None:
    """Whether this principal may move leadership, asked without moving anything: both requests on a topic that
    does not exist are refused CLUSTER_AUTHORIZATION_FAILED without ALTER on CLUSTER, and otherwise answer
    UNKNOWN_TOPIC_OR_PARTITION for it.  Why not, in words, or None."""
    code, message = reorder(client, absent_topic, 0, [0])
    if code == CLUSTER_AUTHORIZATION_FAILED:
        said = f": {message}" if message else ""
        return f"AlterPartitionReassignments refused: {named(code)}{said} (needs ALTER on CLUSTER)"
    top, parts = elect_preferred(client, absent_topic, [0])
    code = top or next((c for c, _ in parts.values() if c == CLUSTER_AUTHORIZATION_FAILED), 0)
    if code == CLUSTER_AUTHORIZATION_FAILED:
        return f"ElectLeaders refused: {named(code)} (needs ALTER on CLUSTER)"
    return None


def create_assigned(
    client: wire.Client, name: str, assignment: Sequence[Sequence[int]], configs: dict
) -> tuple[int, str | None]:
    """CreateTopics v5 with one replica list (node ids, the preferred leader first) per partition."""
    req = CreateTopicsRequest[5]
    topic = req.CreatableTopic(
        name=name,
        num_partitions=-1,
        replication_factor=-1,
        assignments=[
            req.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=list(replicas))
            for p, replicas in enumerate(assignment)
        ],
        configs=[req.CreatableTopic.CreatableTopicConfig(name=k, value=str(v)) for k, v in configs.items()],
    )
    response = client.request(
        CreateTopicsRequest, CreateTopicsResponse, 5, topics=[topic], timeout_ms=30_000, validate_only=False
    )
    return response.topics[0].error_code, response.topics[0].error_message
