"""``kfake``: franz-go's in-memory fake Kafka broker (processes/kfake.py), judged like any broker.

kfake follows the newest Apache Kafka, so it is judged under ``kafka-4`` (its broker configs carry
no ``log.message.timestamp.*`` limits for discovery to read).  Where it departs from Kafka, ktc
says so: ``expectations/kfake-<version>.toml`` lists each departure with kfake's own words for it.
"""
from __future__ import annotations

import os

from ktc.implementations.protocol import Capabilities
from ktc.kafka.client.security import PLAINTEXT

from .adapter import KafkaImplementation
from .judge.capabilities import NOT_ON_A_BROKER
from .processes import kfake

# as for any broker reached by address whose ApiVersions stop below the request a clause needs
# (judge/capabilities.py: probed_unsupported), so that kfake started by ktc and a user's own read the same
NOT_ON_KFAKE = {"KIP-33.list-offsets-earliest-pending-upload":
                "kfake answers ListOffsets v10 at most and knows -6 (EARLIEST_PENDING_UPLOAD) only from v11 "
                "(franz-go kfake 02_list_offsets.go:39, :49)"}

PROFILE = "kafka-4"


class KfakeImplementation(KafkaImplementation):
    """The suites against a kfake process ktc builds (``go build``) and starts on loopback."""

    starts_with_log_dir = False  # no log directory ktc reads (in memory, or its own layout)
    waits_at_start_s = 0.0  # not Apache Kafka: no first retention pass to wait for

    xdist_group = "kfake"

    def __init__(self):
        super().__init__(bootstrap="", profile=PROFILE, security=PLAINTEXT)
        # KTC_KFAKE_VERSION: pinned (default; CI), newest (the Go module proxy's latest), or a module version
        self.kafka_version, self.chosen = kfake.chosen_version(os.environ.get("KTC_KFAKE_VERSION", ""))
        self.name = "kfake"

    @property
    def version(self) -> str:
        return self.kafka_version

    def started_what(self) -> str:
        return (
            f"franz-go kfake {self.kafka_version} (built from implementations/kafka/processes/kfake_go with go build)"
        )

    def target(self) -> dict:
        """The broker's record, with the kfake build it ran (``ktc replay`` rebuilds that one)."""
        return {**super().target(), "kfake_version": self.kafka_version}

    def describe(self) -> str:
        return f"franz-go kfake {self.kafka_version} ({self.chosen})"

    def profile_evidence(self, found) -> str:
        return "kfake follows the newest Apache Kafka"

    def start_process(self) -> kfake.KfakeBroker:
        return kfake.KfakeBroker(version=self.kafka_version).start()

    def capabilities(self) -> Capabilities:
        """kafka-4 only: kfake is not Kafka, so the KIP texts' departures of Kafka (``kip``) are not its."""
        base = super().capabilities()
        return Capabilities(profiles=frozenset({PROFILE}),
                            unsupported={**NOT_ON_A_BROKER, **NOT_ON_KFAKE, **base.unsupported})
