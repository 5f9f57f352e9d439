"""``kafka-cluster``: histories with leader changes between skewed clocks, on a real 3-node cluster: its
launcher (``Cluster``, the declaration's ``start``) and its executor (``LeaderChanges``, the declaration's
``runs``; implementations/families/cluster.py declares the target).

The cluster (ktc/kafka/processes/cluster.py) has fixed clock offsets, so it runs only histories written for
them: the history's ``clock_offsets`` must be the cluster's offsets in some order (history broker b
runs on the node whose clock has offset ``clock_offsets[b]``), and its ``ElectLeader`` ops must
be realisable by halting the current leader: at most one leader change (halting two of three
nodes would lose the KRaft quorum), on a partition whose replica list puts the elected broker
next, after which only that partition is used.  No ``StepClock`` (a running JVM's offset is
fixed), no ``RetentionPass``/``DescribeLog`` (not observable through the protocol).  Any other
history is declared unsupported with the reason (``Capabilities.cannot_run``).

Judging is any broker's: each operation happened somewhere in [sent, received] of the host clock, and a
LogAppendTime echo pins its leader's clock, hence real time (echo - that node's offset).  ``judged_as``
holds the history placed at interval starts and at interval ends, with the cluster's offsets and the
``ElectLeader`` ops kept.  The broker does not know the profile, so a history run once is judged under every
profile from the same observation.
"""

from __future__ import annotations

from dataclasses import replace

from ktc.implementations.protocol import Capabilities
from ktc.kafka.client import wire
from ktc.kafka.client.security import PLAINTEXT
from ktc.kafka.discovery import discover
from ktc.kafka.processes.clock import HostClock
from ktc.kafka.processes.cluster import ClusterError, LocalCluster
from ktc.kafka.topics import TopicNamer, kafka_configs
from ktc.reference.types import (
    Ack,
    Advance,
    CreateTopic,
    CreateTopicResult,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    StepClock,
    clock_states,
)
from ktc.specs import versions

from .cluster_histories import cannot_run, node_map, offsets_ms
from .judge.observe import (
    JudgedTrace,
    Observed,
    echoed_now,
    fetch_result,
    list_result,
    on_real_time,
    produce_result,
    rebase,
)
from .settings import Cluster as ClusterSettings

SKEWED = "the cluster's clocks are offset with libfaketime, which ktc does not set while it runs"
TOPIC_CONFIG = {"min.insync.replicas": 2}  # an acknowledged batch is on the successor before the leader stops


class Cluster:
    """The launcher: three KRaft nodes of a release, their clocks offset with libfaketime, started on first use
    and checked to be the release they claim (their defaults' profile is their line's)."""

    external, security, waits_at_start_s, log_dir = False, PLAINTEXT, 0.0, None

    def __init__(self, settings: ClusterSettings):
        self.version, self.offsets_s = settings.version, tuple(settings.offsets_s)
        self.offsets_ms = offsets_ms(self.offsets_s)
        self.clock, self.clock_reason = HostClock(), SKEWED
        self.broker: LocalCluster | None = None

    def reads_log_dir(self) -> bool:
        return False

    def unavailable(self) -> str | None:
        return None

    def start(self) -> str:
        cluster = LocalCluster(self.version, self.offsets_s)
        try:
            cluster.start()
            check_profile(cluster, versions.profile_for(self.version))
        except Exception:
            cluster.stop()
            raise
        self.broker = cluster
        return cluster.nodes[cluster.live()[0]].bootstrap

    def started(self) -> str:
        return self.describe()

    def describe(self) -> str:
        offsets = ", ".join(f"{o:+g} s" for o in self.offsets_s)
        return f"3-node Apache Kafka {self.version} KRaft cluster, clocks skewed {offsets}"

    def record(self) -> dict:
        return {}

    def retarget(self, record: dict) -> None:
        self.version = record.get("version") or self.version

    def died(self) -> None:
        return None

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()


class LeaderChanges:
    """The executor: one history at a time on the cluster, each run once and judged under every profile."""

    def __init__(self, adapter):
        self.adapter, self.seen = adapter, {}

    @property
    def offsets_ms(self) -> tuple[int, ...]:
        return self.adapter.launcher.offsets_ms

    def cannot_run(self, history: History) -> str | None:
        return cannot_run(history, self.offsets_ms)

    def shape(self, caps: Capabilities) -> Capabilities:
        return replace(caps, cannot_run=self.cannot_run, clock_offsets=self.offsets_ms)

    def run(self, histories) -> list[JudgedTrace]:
        return [self.run_one(h) for h in histories]

    def run_one(self, history: History) -> JudgedTrace:
        why = self.cannot_run(history)
        if why:
            raise ClusterError(f"kafka-cluster cannot run this history: {why}")
        key = replace(history, profile="")  # the broker never sees the profile: one observation, judged per profile
        if key not in self.seen:
            self.adapter.address()  # the cluster, started on first use
            self.seen[key] = Run(self.adapter.launcher.broker, history, self.offsets_ms, self.adapter.namer).execute()
        executed, observed = self.seen[key]
        trace = JudgedTrace(o.result for o in observed)
        executed = replace(executed, profile=history.profile)
        trace.judged_as = (placed(executed, observed, "sent"), placed(executed, observed, "received"))
        return trace

    def stall(self) -> str:
        return "a history on the 3-node cluster"

    def ignored_configs(self) -> set[str]:
        return set()

    def clock_summary(self) -> dict:
        return {}

    def close(self) -> None:
        return None  # its topics go with the cluster


class Run:
    """One history on the cluster: topics renamed, timestamps rebased onto each leader's clock."""

    def __init__(self, cluster: LocalCluster, history: History, offsets_ms: tuple[int, ...], namer: TopicNamer):
        self.cluster, self.history = cluster, history
        self.nodes = node_map(history.clock_offsets, offsets_ms)
        self.names = namer.names(history)
        self.configs: dict = {}
        self.leaders: dict = {}

    def execute(self) -> tuple[History, list[Observed]]:
        self.cluster.restart_halted()  # a previous history may have halted a node
        executed, observed = [], []
        for op, state in zip(self.history.ops, clock_states(self.history)):
            op = rebase(op, state.real_ms, wire.now_ms()) if isinstance(op, (Produce, ListOffsets)) else op
            observed.append(self.apply(op))
            executed.append(replace(op, topic=self.names[op.topic]) if hasattr(op, "topic") else op)
        return replace(self.history, ops=tuple(executed)), observed

    def apply(self, op) -> Observed:
        handler = {
            CreateTopic: self.create,
            Produce: self.produce,
            ElectLeader: self.elect,
            Fetch: self.fetch,
            ListOffsets: self.list_offsets,
        }.get(type(op))
        if handler is None:  # Advance: real time moves by itself
            now = wire.now_ms()
            return Observed(Ack(), now, now)
        return handler(op)

    def leader(self, op) -> int:
        return self.nodes[self.leaders.get((op.topic, op.partition), 0)]

    def client(self, op) -> wire.Client:
        return self.cluster.client(self.leader(op))

    def create(self, op: CreateTopic) -> Observed:
        sent = wire.now_ms()
        assignment = [self.assignment(op.topic, p) for p in range(op.config.partitions)]
        code, _message = self.cluster.create_topic(
            self.names[op.topic], assignment, {**kafka_configs(op.config), **TOPIC_CONFIG}
        )
        if code == 0:
            self.configs[op.topic] = op.config
        return Observed(CreateTopicResult(code), sent, wire.now_ms())

    def assignment(self, topic: str, partition: int) -> list[int]:
        """History broker 0 first (every partition's first leader), then the brokers it elects, then the rest."""
        chain = [
            0,
            *(
                op.broker
                for op in self.history.ops
                if isinstance(op, ElectLeader) and (op.topic, op.partition) == (topic, partition)
            ),
        ]
        order = [*dict.fromkeys(chain), *range(len(self.nodes))]
        return [self.nodes[b] for b in dict.fromkeys(order)]

    def produce(self, op: Produce) -> Observed:
        out = self.client(op).produce(self.names[op.topic], op.batch, partition=op.partition)
        return Observed(produce_result(out), out.sent_ms, out.received_ms, echoed_now(out, self.configs.get(op.topic)))

    def elect(self, op: ElectLeader) -> Observed:
        """Halt the current leader; wait until the elected broker's node leads.  A topic the broker refused to
        create has no leader to move: nothing is halted."""
        sent, old, new = wire.now_ms(), self.leader(op), self.nodes[op.broker]
        self.leaders[(op.topic, op.partition)] = op.broker
        if new != old and op.topic in self.configs:
            self.cluster.halt(old)
            self.cluster.wait_leader(self.names[op.topic], op.partition, new)
        return Observed(Ack(), sent, wire.now_ms())

    def fetch(self, op: Fetch) -> Observed:
        sent = wire.now_ms()
        out = self.client(op).fetch_all(self.names[op.topic], partition=op.partition)
        return Observed(fetch_result(out), sent, wire.now_ms())

    def list_offsets(self, op: ListOffsets) -> Observed:
        sent = wire.now_ms()
        client = self.client(op)
        version = client.newest("ListOffsets", wire.LIST_OFFSETS_MAX) if op.version is None else op.version
        out = client.list_offsets(
            self.names[op.topic],
            op.target,
            partition=op.partition,
            version=version,
            isolation_level=int(op.read_committed),
        )
        return Observed(list_result(out), sent, wire.now_ms())


def check_profile(cluster: LocalCluster, expected: str) -> None:
    """The profile the broker's defaults say (ktc/kafka/discovery.py) must be the one the version says."""
    with wire.Client(cluster.nodes[cluster.live()[0]].bootstrap, security=PLAINTEXT) as client:
        found = discover(client).profile
    if found != expected:
        raise ClusterError(f"Kafka {cluster.version}'s defaults say profile {found}, its version says {expected}")


# ---- judging over clock intervals ----------------------------------------------------------------


def placed(history: History, observed: list[Observed], end: str) -> tuple:
    """The history with each operation at one end of its interval in real time (a LogAppendTime echo
    minus its leader's offset where there is one); the cluster's offsets and elections are kept."""
    steps = [
        (
            op,
            seen.result,
            getattr(seen, end)
            if seen.exact_now is None
            else seen.exact_now - state.offsets[state.leader(op.topic, op.partition)],
        )
        for op, state, seen in zip(history.ops, clock_states(history), observed)
        if not isinstance(op, (Advance, StepClock))
    ]
    ops, results, start = on_real_time(steps)
    return replace(history, ops=ops, start_ms=history.start_ms if start is None else start), results
