"""``kafka-cluster``: three KRaft nodes ktc starts, clocks skewed with libfaketime, for leader changes
(implementations/kafka/cluster_run.py: its launcher and its executor).

Only the leader-change clauses and the invariants over reads are claimed; every other clause is the
single-node broker's job (``--impl kafka-3.9``).  Profiles: ``kip`` on every test, and the one its release
ships (from the version, checked against the started cluster's defaults).
"""

from __future__ import annotations

from ktc.implementations.families._kafka import KAFKA_VERSION, target_env
from ktc.implementations.kafka.settings import Cluster
from ktc.implementations.kafka.target import BrokerTarget, ReleaseLine
from ktc.implementations.protocol import Plugin

CLAIMS = (
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
    "KIP-32.log-append-time-assigned",
    # the invariants over reads: what a consumer reads holds across the leader change too
    "KIP-32.read-log-append-time",
    "KIP-32.read-timestamp-stable",
    "KIP-33.read-max-timestamp-holder",
    "KIP-33.read-lookup-first-match",
    "KIP-33.read-log-start",
    "KIP-937.read-within-bounds",
)
ELSEWHERE = "the 3-node cluster runs only the leader-change clauses; single-broker clauses: --impl kafka-3.9 / kafka-4"

TARGET = BrokerTarget(
    name="kafka-cluster",
    settings=Cluster.from_options,
    start="ktc.implementations.kafka.cluster_run:Cluster",
    runs="ktc.implementations.kafka.cluster_run:LeaderChanges",
    profile=ReleaseLine(),
    kip="every",
    claims=CLAIMS,
    elsewhere=ELSEWHERE,
    bulk=False,  # each history halts and restarts brokers: judged one at a time, as drawn
)

PLUGIN = Plugin(
    family="cluster",
    description="a 3-node Apache Kafka cluster ktc starts, clocks skewed with libfaketime, for leader changes",
    builtins={"kafka-cluster": TARGET},
    options=(KAFKA_VERSION,),
    replay_env=target_env,
)
