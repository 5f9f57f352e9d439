"""One history with leader changes on a cluster ktc did not start, one request at a time.

Each topic is created with an explicit replica list per partition: history broker 0's node first (the first
leader), then the nodes the history elects there, then others up to three replicas; ``min.insync.replicas`` 2, so
an acknowledged batch is on a follower before leadership moves.  ``ElectLeader`` puts the elected node first in
the replica list (AlterPartitionReassignments: a reorder, no data moves), elects it (ElectLeaders PREFERRED, again
while the broker answers that it is not in sync yet) and waits until it leads and answers ListOffsets (its high
watermark caught up).  Every other request goes to the partition's leader.  The history's topics are deleted when
it ends, however it ends.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ktc.implementations.protocol import Cut
from ktc.kafka.client import leadership, wire
from ktc.kafka.topics import kafka_configs
from ktc.reference.types import (
    CreateTopic,
    CreateTopicResult,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    clock_states,
)

from ..judge.observe import Observed, fetch_result, list_result, local, produce_observed, rebase, rename
from .survey import WAIT_S, Nodes, Survey

REPLICAS = 3
PREFERRED_LEADER_NOT_AVAILABLE = 80
SETTLE_S = 2.0  # how long an accepted election may take to show before it is asked again


class Move:
    def __init__(self, adapter, survey: Survey, history: History):
        self.adapter, self.cluster, self.history = adapter, survey, history
        self.names = adapter.namer.names(history)
        self.configs: dict = {}  # history topic -> its config, once created
        self.replicas: dict[tuple[str, int], list[int]] = {}  # (history topic, partition) -> node ids, leader first
        self.defaults = adapter.limit_defaults()
        self.moves = 0
        self.nodes: Nodes | None = None

    def node(self, broker: int) -> int:
        return self.cluster.nodes[broker % len(self.cluster.nodes)]

    def execute(self) -> tuple[History, list[Observed], list[int | None], Cut | None]:
        """The history as run (rebased, renamed), what each operation saw, the node it was sent to, and where it
        stopped early (a lost connection, a move the cluster did not make), if it did."""
        executed, observed, sent_to, cut = [], [], [], None
        with Nodes(self.cluster.addresses, self.adapter.launcher.security) as self.nodes:
            try:
                for op, state in zip(self.history.ops, clock_states(self.history)):
                    op = rebase(op, state.real_ms, wire.now_ms()) if isinstance(op, (Produce, ListOffsets)) else op
                    seen, node = self.apply(op)
                    executed.append(rename(op, self.names))
                    observed.append(seen)
                    sent_to.append(node)
            except (leadership.MoveError, wire.WireError, OSError) as error:
                cut = Cut("unknown", len(observed), f"on the cluster: {error}")
            finally:
                self.adapter.delete_topics([self.names[t] for t in self.configs])
        return replace(self.history, ops=tuple(executed)), observed, sent_to, cut

    def apply(self, op) -> tuple[Observed, int | None]:
        answered = local(op)
        if answered is not None and not isinstance(op, ElectLeader):
            return answered, None
        handler = {
            CreateTopic: self.create,
            Produce: self.produce,
            ElectLeader: self.elect,
            Fetch: self.fetch,
            ListOffsets: self.list_offsets,
        }[type(op)]
        return handler(op)

    def leader(self, op) -> int:
        """The partition's leader; for a partition never created (its topic refused, or fewer partitions), broker
        0's node, which answers that it has no such partition, as the model does."""
        return self.replicas.get((op.topic, op.partition), [self.node(0)])[0]

    def create(self, op: CreateTopic) -> tuple[Observed, None]:
        sent, name = wire.now_ms(), self.names[op.topic]
        assignment = [self.assignment(op.topic, p) for p in range(op.config.partitions)]
        configs = {**kafka_configs(op.config), **({"min.insync.replicas": 2} if len(assignment[0]) > 1 else {})}
        code, _message = leadership.create_assigned(self.nodes[self.cluster.nodes[0]], name, assignment, configs)
        if code == 0:
            self.configs[op.topic] = op.config
            for partition, replicas in enumerate(assignment):
                self.replicas[(op.topic, partition)] = list(replicas)
                self.nodes.wait_leader(name, partition, replicas[0])
        return Observed(CreateTopicResult(code), sent, wire.now_ms()), None

    def assignment(self, topic: str, partition: int) -> list[int]:
        """History broker 0's node first, then the nodes elected there, then others up to three replicas."""
        elected = (
            op.broker
            for op in self.history.ops
            if isinstance(op, ElectLeader) and (op.topic, op.partition) == (topic, partition)
        )
        chain = list(dict.fromkeys(self.node(b) for b in (0, *elected)))
        spare = [n for n in self.cluster.nodes if n not in chain]
        return chain + spare[: max(0, min(REPLICAS, len(self.cluster.nodes)) - len(chain))]

    def produce(self, op: Produce) -> tuple[Observed, int]:
        node = self.leader(op)
        out = self.nodes[node].produce(self.names[op.topic], op.batch, partition=op.partition)
        return produce_observed(out, self.configs.get(op.topic), out.sent_ms, out.received_ms, self.defaults), node

    def fetch(self, op: Fetch) -> tuple[Observed, int]:
        sent, node = wire.now_ms(), self.leader(op)
        out = self.nodes[node].fetch_all(self.names[op.topic], partition=op.partition)
        return Observed(fetch_result(out), sent, wire.now_ms()), node

    def list_offsets(self, op: ListOffsets) -> tuple[Observed, int]:
        sent, node = wire.now_ms(), self.leader(op)
        client = self.nodes[node]
        version = client.newest("ListOffsets", wire.LIST_OFFSETS_MAX) if op.version is None else op.version
        out = client.list_offsets(
            self.names[op.topic],
            op.target,
            partition=op.partition,
            version=version,
            isolation_level=int(op.read_committed),
        )
        return Observed(list_result(out), sent, wire.now_ms()), node

    def elect(self, op: ElectLeader) -> tuple[Observed, None]:
        """Leadership to the elected broker's node; nothing to do on a topic that was not created, or where that
        node leads already."""
        sent, key, target = wire.now_ms(), (op.topic, op.partition), self.node(op.broker)
        if key in self.replicas and self.replicas[key][0] != target:
            self.move(self.names[op.topic], op.partition, target, self.replicas[key])
            self.replicas[key] = [target, *(n for n in self.replicas[key] if n != target)]
            self.moves += 1
        return Observed(local(op).result, sent, wire.now_ms()), None

    def move(self, name: str, partition: int, target: int, replicas: list[int]) -> None:
        client = self.nodes[self.cluster.nodes[0]]
        order = [target, *(n for n in replicas if n != target)]
        code, message = leadership.reorder(client, name, partition, order)
        if code:
            raise leadership.MoveError(
                f"AlterPartitionReassignments {name}-{partition} to {order}: {leadership.named(code)} {message or ''}"
            )
        deadline = time.monotonic() + WAIT_S
        while True:
            top, parts = leadership.elect_preferred(client, name, [partition])
            code = top or parts.get(partition, (0, None))[0]
            if code not in (0, leadership.ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE):
                raise leadership.MoveError(f"ElectLeaders {name}-{partition}: {leadership.named(code)}")
            if code != PREFERRED_LEADER_NOT_AVAILABLE and self.settled(name, partition, target):
                return
            if time.monotonic() > deadline:
                raise leadership.MoveError(
                    f"{name}-{partition}: node {target} does not lead {WAIT_S:.0f} s on ({leadership.named(code)})"
                )
            time.sleep(0.1)

    def settled(self, name: str, partition: int, target: int) -> bool:
        try:
            self.nodes.wait_leader(name, partition, target, SETTLE_S)
        except leadership.MoveError:
            return False
        return True
