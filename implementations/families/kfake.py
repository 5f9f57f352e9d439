"""``kfake``: franz-go's in-memory fake Kafka broker, built with Go and started by ktc, judged like any broker.

kfake follows the newest Apache Kafka, so it is judged under ``kafka-4`` (its broker configs carry no
``log.message.timestamp.*`` limits for discovery to read), and not under the KIP texts (``kip``): those are
Kafka's departures, not kfake's.  Where it departs from Kafka, ktc says so:
``expectations/kfake-<version>.toml`` lists each departure with kfake's own words for it.
"""

from __future__ import annotations

from ktc.implementations.families._kafka import clock_line
from ktc.implementations.kafka.settings import Kfake
from ktc.implementations.kafka.target import BrokerTarget, Fixed
from ktc.implementations.protocol import Plugin

# as for any broker reached by address whose ApiVersions stop below the request a clause needs
# (judge/capabilities.py: probed_unsupported), so that kfake started by ktc and a user's own read the same
NOT_ON_KFAKE = {
    "KIP-33.list-offsets-earliest-pending-upload": (
        "kfake answers ListOffsets v10 at most and knows -6 (EARLIEST_PENDING_UPLOAD) only from v11 "
        "(franz-go kfake 02_list_offsets.go:39, :49)"
    )
}

TARGET = BrokerTarget(
    name="kfake",
    settings=Kfake.from_options,
    start="ktc.implementations.kafka.launch:Kfake",
    profile=Fixed("kafka-4", "kfake follows the newest Apache Kafka"),
    kip="never",
    unsupported=NOT_ON_KFAKE,
)


def replay_env(target) -> dict:
    """The kfake build a result was seen on (KTC_KFAKE_VERSION), so a replay rebuilds that one."""
    return {"KTC_KFAKE_VERSION": target["kfake_version"]} if target.get("kfake_version") else {}


PLUGIN = Plugin(
    family="kfake",
    description="franz-go's in-memory fake Kafka broker, built with Go and started by ktc",
    builtins={"kfake": TARGET},
    summary=clock_line,
    replay_env=replay_env,
)
