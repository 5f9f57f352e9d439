"""``kfake``: franz-go's fake broker, built with Go and started by ktc (implementations/kafka/kfake_adapter.py)."""
from __future__ import annotations

from ktc.implementations.families._kafka import clock_line
from ktc.implementations.protocol import Plugin

PLUGIN = Plugin(
    family="kfake",
    description="franz-go's in-memory fake Kafka broker, built with Go and started by ktc",
    builtins={"kfake": "ktc.implementations.kafka.kfake_adapter:KfakeImplementation"},
    summary=clock_line,
    replay_env=lambda target: {"KTC_KFAKE_VERSION": target["kfake_version"]} if target.get("kfake_version") else {},
)
