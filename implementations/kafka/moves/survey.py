"""Whether leadership can move on a broker ktc did not start, asked once before the first history that needs it,
and each node's clock measured on a scratch topic of ktc's own.

Leadership cannot move on a single broker, on a broker that does not offer AlterPartitionReassignments and
ElectLeaders, or for a principal without ALTER on CLUSTER (asked on a topic name that does not exist: nothing
moves).  Any of these is one line, and the leader-change clauses stay unsupported with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ktc.kafka.client import leadership, wire
from ktc.reference.types import Batch, CreateTopic, History, Record

from . import clocks

LEADER_CLAUSES = (
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
)
CALIBRATION_ECHOES = 3  # produces per node on the scratch topic
WAIT_S = 30.0


@dataclass(frozen=True)
class Survey:
    """The cluster's node ids (in order), their addresses, why leadership cannot move (None: it can), and each
    node's clock window from the scratch topic."""

    nodes: tuple[int, ...]
    addresses: dict[int, str]
    refused: str | None
    windows: dict[int, clocks.Window] = field(default_factory=dict)


def survey(adapter) -> Survey:
    """Asked once; a cluster that cannot answer it (a lost connection, a scratch topic it refuses) is a refusal."""
    try:
        return asked(adapter)
    except (leadership.MoveError, wire.WireError, OSError) as error:
        return Survey((), {}, f"the survey of the cluster failed: {error}")


def asked(adapter) -> Survey:
    client = adapter.client()
    view = leadership.cluster(client)
    nodes = tuple(sorted(view.brokers))
    addresses = {n: f"{host}:{port}" for n, (host, port) in view.brokers.items()}
    absent = scratch(adapter, "absent")
    why = refusal(client, nodes, absent)
    if why is not None:
        return Survey(nodes, addresses, why)
    with Nodes(addresses, adapter.launcher.security) as connections:
        return Survey(nodes, addresses, None, calibrate(connections, nodes, scratch(adapter, "clocks")))


def scratch(adapter, topic: str) -> str:
    """A fresh name of ktc's own form (ktc/kafka/topics.py), so ``ktc clean`` finds what a killed run left."""
    return adapter.namer.names(History("kip", (CreateTopic(topic),)))[topic]


def refusal(client: wire.Client, nodes: tuple[int, ...], absent_topic: str) -> str | None:
    if len(nodes) < 2:
        return f"the cluster has {len(nodes)} broker (node {', '.join(map(str, nodes))}): leadership needs two to move"
    return leadership.offers(client) or leadership.permitted(client, absent_topic)


def line(address: str) -> str:
    """``ktc run``'s line before any work: whether --move-leaders can move leadership at ``address``."""
    try:
        with wire.Client(address, timeout_s=10.0) as client:
            nodes = tuple(sorted(leadership.cluster(client).brokers))
            why = refusal(client, nodes, f"ktc-{time.time_ns()}-absent")
    except (wire.WireError, OSError) as error:
        nodes, why = (), f"the cluster did not answer ({error})"
    if why is not None:
        return f"--move-leaders: {why}; the leader-change clauses stay unsupported"
    return (
        f"--move-leaders: {len(nodes)} brokers (node ids {', '.join(map(str, nodes))}), ALTER on CLUSTER granted: "
        "ktc moves the leadership of its own topics only"
    )


class Nodes:
    """One blocking connection per node id, opened on first use."""

    def __init__(self, addresses: dict[int, str], security):
        self.addresses, self.security, self.open = addresses, security, {}

    def __getitem__(self, node: int) -> wire.Client:
        if node not in self.open:
            self.open[node] = wire.Client(self.addresses[node], security=self.security)
        return self.open[node]

    def __enter__(self) -> Nodes:
        return self

    def __exit__(self, *exc) -> None:
        for client in self.open.values():
            client.close()
        self.open.clear()

    def wait_leader(self, topic: str, partition: int, want: int, timeout_s: float = WAIT_S) -> None:
        """Until node ``want`` says it leads the partition and answers ListOffsets for it (it applied the change)."""
        deadline = time.monotonic() + timeout_s
        while not self.leads(topic, partition, want):
            if time.monotonic() > deadline:
                state = leadership.cluster(self[want], [topic]).partitions.get((topic, partition))
                raise leadership.MoveError(
                    f"{topic}-{partition}: node {want} does not lead {timeout_s:.0f} s on ({state})"
                )
            time.sleep(0.02)

    def leads(self, topic: str, partition: int, want: int) -> bool:
        state = leadership.cluster(self[want], [topic]).partitions.get((topic, partition))
        if state is None or state.leader != want:
            return False
        return self[want].list_offsets(topic, wire.LATEST_TIMESTAMP, partition=partition).error_code == 0


def calibrate(connections: Nodes, nodes: tuple[int, ...], topic: str) -> dict[int, clocks.Window]:
    """Each node leads one partition of a LogAppendTime scratch topic; a few produces to each bound its clock."""
    client = connections[nodes[0]]
    code, message = leadership.create_assigned(
        client, topic, [[n] for n in nodes], {"message.timestamp.type": "LogAppendTime"}
    )
    if code:
        raise leadership.MoveError(f"cannot create the scratch topic {topic}: error {code} {message}")
    try:
        echoes = []
        for partition, node in enumerate(nodes):
            connections.wait_leader(topic, partition, node)
            for _ in range(CALIBRATION_ECHOES):
                out = connections[node].produce(topic, Batch((Record(wire.now_ms()),)), partition=partition)
                if out.error_code == 0:
                    echoes.append((node, out.log_append_time, out.sent_ms, out.received_ms))
        return clocks.measured(echoes)
    finally:
        client.delete_topics([topic], timeout_ms=5000)
