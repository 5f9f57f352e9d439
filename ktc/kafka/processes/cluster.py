"""A 3-node KRaft Apache Kafka cluster on loopback, each node's wall clock offset with libfaketime.

    with LocalCluster("3.9.2", offsets_s=(0, 150, -150)) as cluster:
        topic = cluster.create_topic("t", [[1, 2, 0]], {"message.timestamp.type": "LogAppendTime"})
        leader = cluster.leader("t")                 # node index 1: first in the assignment
        cluster.client(leader).produce("t", batch)
        cluster.halt(leader)                         # controlled shutdown: the leadership moves
        cluster.wait_leader("t", 0, want=2)

Every node is a combined broker+controller (``LocalBroker`` with ``node_id`` i + 1, the shared
cluster id and a static quorum of all three), started side by side: the three storage formats
run at once, then the three JVMs.  The cluster is ready when every node answers and Metadata
lists three brokers; then each clock offset is verified by observation (``verify_offsets``):
each node leads a LogAppendTime topic of its own, and the LogAppendTime it echoes must lie in
[request sent, response received] of the host clock shifted by the configured offset (within a
small tolerance), or the start fails.  Cleanup is LocalBroker's, per node (context exit, atexit,
SIGINT/SIGTERM, PDEATHSIG, process groups).

Node indexes (0, 1, 2) are used everywhere; Kafka's broker ids are index + 1.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from ktc.reference.types import Batch, Record

from ..client import wire
from ..client.security import PLAINTEXT
from . import provision
from .broker import BrokerError, LocalBroker, free_ports, random_cluster_id
from .skew import DEFAULT_OFFSETS_S, fastest_then_slowest, offsets_ms

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

METADATA_VERSION = 9  # flexible, names topics; inside the ranges of 3.9 and 4.x (4.0 dropped v0-3)
OFFSET_TOLERANCE_MS = 20
WAIT_S = 60.0
# Faster fencing of a node that dies without a controlled shutdown; the model's retention is on demand only.
CLUSTER_CONFIG = {
    "broker.heartbeat.interval.ms": 500,
    "broker.session.timeout.ms": 3000,
    "log.retention.check.interval.ms": 3_600_000,
    "log.initial.task.delay.ms": 3_600_000,
}


class ClusterError(RuntimeError):
    """The cluster could not be started, verified or steered (the message says which node and why)."""


@dataclass(frozen=True)
class PartitionState:
    leader: int  # node index, -1 when there is none
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error_code: int


class LocalCluster:
    def __init__(
        self,
        version: str = provision.DEFAULT_VERSIONS[0],
        offsets_s: Sequence[float] = DEFAULT_OFFSETS_S,
        *,
        config: Mapping[str, object] | None = None,
        verify: bool = True,
    ):
        self.version = version
        self.offsets_s = tuple(offsets_s)
        self.config = {**CLUSTER_CONFIG, **dict(config or {})}
        self.verify = verify
        self.nodes: list[LocalBroker] = []
        self.halted: set[int] = set()
        self.startup_s: float | None = None
        self.measured_offsets_ms: list[int] = []
        self._clients: dict[int, wire.Client] = {}

    @property
    def offsets_ms(self) -> tuple[int, ...]:
        return offsets_ms(self.offsets_s)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- start and stop
    def start(self) -> LocalCluster:
        lib = provision.lib_dir(self.version)  # a cold Maven cache is not start time
        t0 = time.monotonic()
        try:
            self._start_nodes(lib)
            self.wait_brokers(len(self.nodes))
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        if self.verify:
            self.verify_offsets()
        return self

    def _start_nodes(self, lib) -> None:
        for attempt in range(2):  # a freed port can be taken before a JVM binds it: retry once
            self._make_nodes()
            try:
                self._launch_all(lib)
                return
            except BrokerError as error:
                if attempt or "Address already in use" not in str(error):
                    raise
                self.stop()

    def _make_nodes(self) -> None:
        flat = free_ports(2 * len(self.offsets_s))
        ports = list(zip(flat[::2], flat[1::2]))
        voters = ",".join(f"{i + 1}@127.0.0.1:{c}" for i, (_p, c) in enumerate(ports))
        cluster_id = random_cluster_id()
        self.nodes = [
            LocalBroker(
                self.version,
                node_id=i + 1,
                cluster_id=cluster_id,
                ports=ports[i],
                faketime_offset_s=offset,
                config={**self.config, "controller.quorum.voters": voters},
            )
            for i, offset in enumerate(self.offsets_s)
        ]

    def _launch_all(self, lib) -> None:
        for node in self.nodes:
            node.open()  # registered for cleanup before anything of it exists
        formats = [node.prepare(lib) for node in self.nodes]
        for node, proc in zip(self.nodes, formats):
            node.format_done(proc)
        for node in self.nodes:
            node.launch(lib)
        for node in self.nodes:
            node.wait_ready()

    def stop(self) -> None:
        for index in list(self._clients):
            self._drop_client(index)
        for node in self.nodes:
            node.stop()

    # -- clients and metadata
    def client(self, index: int) -> wire.Client:
        """A connection to node ``index`` (bootstrap = that node), opened on first use."""
        if index in self.halted:
            raise ClusterError(f"node {index} is halted")
        if index not in self._clients:
            self._clients[index] = wire.Client(self.nodes[index].bootstrap, security=PLAINTEXT)
        return self._clients[index]

    def _drop_client(self, index: int) -> None:
        client = self._clients.pop(index, None)
        if client is not None:
            client.close()

    def live(self) -> list[int]:
        return [i for i in range(len(self.nodes)) if i not in self.halted]

    def metadata(self, topics: Sequence[str] | None = None, via: int | None = None):
        """Kafka's MetadataResponse (v9) as one node sees it (``via``; default the first live node)."""
        index = self.live()[0] if via is None else via
        request_topics = (
            None if topics is None else [MetadataRequest[METADATA_VERSION].MetadataRequestTopic(name=t) for t in topics]
        )
        return self.client(index).request(
            MetadataRequest,
            MetadataResponse,
            METADATA_VERSION,
            topics=request_topics,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )

    def partition(self, topic: str, partition: int = 0, via: int | None = None) -> PartitionState:
        found = [t for t in self.metadata([topic], via).topics if t.name == topic]
        parts = [p for t in found for p in t.partitions if p.partition_index == partition]
        if not parts:
            code = found[0].error_code if found else -1
            return PartitionState(-1, (), (), code or 3)
        p = parts[0]
        return PartitionState(
            p.leader_id - 1 if p.leader_id >= 0 else -1,
            tuple(r - 1 for r in p.replica_nodes),
            tuple(r - 1 for r in p.isr_nodes),
            p.error_code,
        )

    def leader(self, topic: str, partition: int = 0) -> int:
        return self.partition(topic, partition).leader

    def wait_brokers(self, count: int, timeout_s: float = WAIT_S) -> None:
        """Until every live node's Metadata lists ``count`` live brokers."""
        deadline = time.monotonic() + timeout_s
        for index in self.live():
            while len(self.metadata(via=index).brokers) < count:
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"node {index} sees {len(self.metadata(via=index).brokers)} brokers, "
                        f"not {count}, after {timeout_s:.0f} s:\n{self.nodes[index].log_tail()}"
                    )
                time.sleep(0.05)

    # -- topics
    def create_topic(
        self,
        name: str,
        assignment: Sequence[Sequence[int]],
        configs: Mapping[str, object] = {},
        timeout_s: float = WAIT_S,
    ) -> tuple[int, str | None]:
        """CreateTopics with an explicit replica assignment (one list of node indexes per partition,
        the first is the preferred leader); on success, wait until each partition's leader is the
        first live node of its list and answers ListOffsets."""
        code, message = create_assigned(self.client(self.live()[0]), name, assignment, configs)
        if code == 0:
            for partition, replicas in enumerate(assignment):
                self.wait_leader(name, partition, next(r for r in replicas if r not in self.halted), timeout_s)
        return code, message

    def wait_leader(self, topic: str, partition: int, want: int, timeout_s: float = WAIT_S) -> float:
        """Until node ``want`` leads the partition in its own metadata and answers ListOffsets for it
        (then it has applied the change); the seconds it took."""
        t0 = time.monotonic()
        while not self._leads(topic, partition, want):
            if time.monotonic() - t0 > timeout_s:
                state = self.partition(topic, partition)
                raise ClusterError(
                    f"{topic}-{partition}: node {want} is not the leader {timeout_s:.0f} s on "
                    f"(leader {state.leader}, isr {state.isr})"
                )
            time.sleep(0.02)
        return time.monotonic() - t0

    def _leads(self, topic: str, partition: int, want: int) -> bool:
        if self.partition(topic, partition, via=want).leader != want:
            return False
        return self.client(want).list_offsets(topic, wire.LATEST_TIMESTAMP, partition=partition).error_code == 0

    # -- leader changes
    def halt(self, index: int) -> None:
        """Stop node ``index`` (controlled shutdown; its data stays for ``restart``)."""
        self._drop_client(index)
        self.halted.add(index)
        self.nodes[index].halt()

    def restart(self, index: int) -> None:
        self.nodes[index].relaunch()
        self.halted.discard(index)
        self.wait_brokers(len(self.nodes))

    def restart_halted(self) -> None:
        for index in sorted(self.halted):
            self.restart(index)

    # -- clocks
    def verify_offsets(self) -> list[int]:
        """Each node's clock offset as observed; ClusterError when one is not the configured offset."""
        self.measured_offsets_ms = [self._observe_offset(i) for i in range(len(self.nodes))]
        return self.measured_offsets_ms

    def _observe_offset(self, index: int) -> int:
        topic = f"ktc-clock-{index}-{time.time_ns()}"
        code, message = self.create_topic(topic, [[index]], {"message.timestamp.type": "LogAppendTime"})
        if code:
            raise ClusterError(f"cannot create {topic} on node {index}: error {code} {message}")
        out = self.client(index).produce(topic, Batch((Record(0),)))
        if out.error_code or out.log_append_time < 0:
            raise ClusterError(f"node {index}: produce to {topic} failed: {out}")
        return checked_offset(index, out, self.offsets_ms[index])


def checked_offset(index: int, out: wire.ProduceOutcome, configured_ms: int) -> int:
    """The observed offset (LogAppendTime - interval midpoint), or ClusterError when it cannot be
    the configured one: |observed - configured| > half the interval + OFFSET_TOLERANCE_MS."""
    middle = (out.sent_ms + out.received_ms) // 2
    observed = out.log_append_time - middle
    slack = (out.received_ms - out.sent_ms) // 2 + OFFSET_TOLERANCE_MS
    if abs(observed - configured_ms) > slack:
        raise ClusterError(
            f"node {index}'s clock is {observed} ms off the host, not the configured {configured_ms} ms "
            f"(+-{slack} ms): is libfaketime working for the JVM?"
        )
    return observed


def create_assigned(
    client: wire.Client, name: str, assignment: Sequence[Sequence[int]], configs: Mapping[str, object] = {}
) -> tuple[int, str | None]:
    """CreateTopics v5 with one replica list (node indexes) per partition."""
    req = CreateTopicsRequest[5]
    topic = req.CreatableTopic(
        name=name,
        num_partitions=-1,
        replication_factor=-1,
        assignments=[
            req.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=[r + 1 for r in replicas])
            for p, replicas in enumerate(assignment)
        ],
        configs=[req.CreatableTopic.CreatableTopicConfig(name=k, value=str(v)) for k, v in dict(configs).items()],
    )
    response = client.request(
        CreateTopicsRequest, CreateTopicsResponse, 5, topics=[topic], timeout_ms=30_000, validate_only=False
    )
    result = response.topics[0]
    return result.error_code, result.error_message


# The experiment's raw numbers: both LogAppendTimes, their difference, what the new leader stores, the seconds taken
LeaderChange = TypedDict(
    "LeaderChange",
    {"L1": int, "L2": int, "L2-L1": int, "stored": list[int], "change_s": float, "election_wait_s": float},
)


def leader_change_experiment(cluster: LocalCluster) -> LeaderChange:
    """LogAppendTime across one leader change, raw (the suites judge it: suites/kip32/
    test_leader_change_on_skewed_clocks.py): produce on the fastest clock, halt it, produce on the
    slowest, fetch everything from the new leader."""
    fast, slow, *_ = assignment = fastest_then_slowest(cluster.offsets_s)
    topic = f"ktc-leader-change-{time.time_ns()}"
    cluster.create_topic(topic, [assignment], {"message.timestamp.type": "LogAppendTime", "min.insync.replicas": 2})
    first = cluster.client(fast).produce(topic, Batch((Record(wire.now_ms()),)))
    t0 = time.monotonic()
    cluster.halt(fast)
    election_s = cluster.wait_leader(topic, 0, slow)
    second = cluster.client(slow).produce(topic, Batch((Record(wire.now_ms()),)))
    stored = [r.timestamp for b in cluster.client(slow).fetch_all(topic).batches for r in b.records]
    return {
        "L1": first.log_append_time,
        "L2": second.log_append_time,
        "L2-L1": second.log_append_time - first.log_append_time,
        "stored": stored,
        "change_s": round(time.monotonic() - t0, 2),
        "election_wait_s": round(election_s, 2),
    }


if __name__ == "__main__":  # python -m ktc.kafka.processes.cluster [VERSION]: start, verify, experiment, stop
    import sys

    with LocalCluster(sys.argv[1] if len(sys.argv) > 1 else provision.DEFAULT_VERSIONS[0]) as c:
        print(
            f"Kafka {c.version}: 3 nodes ready in {c.startup_s:.2f} s; offsets configured {list(c.offsets_ms)} ms, "
            f"observed {c.measured_offsets_ms} ms"
        )
        print(leader_change_experiment(c))
