"""``client:<library>``: a client library judged through its driver (implementations/clients/), one target per
library of the registry (implementations/clients/libraries.py) at its pinned version, and
``client:<library>-<version>`` for any other version the library's launcher can install.  Each is judged
under the client profiles (``client-kip``, ``client``) by suites/clients, against a local Apache Kafka that
ktc starts; a driver that cannot be had here is one "not run" row with its reason.  ``ktc matrix --client
<library> [--versions ...]`` judges a library's releases side by side (releases.py).
"""

from __future__ import annotations

import re

from ktc.implementations.clients.libraries import registry
from ktc.implementations.clients.releases import RELEASES
from ktc.implementations.clients.target import ClientTarget
from ktc.implementations.protocol import Plugin

PATTERN = re.compile(r"^client:(?P<library>[a-z0-9][a-z0-9_.-]*?)-(?P<version>v?\d[\w.+-]*)$")  # Go: v1.2.3


def pinned() -> dict[str, ClientTarget]:
    return {f"client:{name}": ClientTarget(f"client:{name}", name) for name in registry()}


def versioned(match: re.Match) -> ClientTarget:
    return ClientTarget(match.group(0), match.group("library"), match.group("version"))


PLUGIN = Plugin(
    family="clients",
    description="client libraries (kafka-python, aiokafka, confluent-kafka, ...) judged through their drivers "
    "against a local Apache Kafka ktc starts, the bytes they send captured by a proxy",
    builtins=pinned(),
    pattern=PATTERN,
    from_pattern=versioned,
    pattern_hint="client:<library>-<version>",
    releases=RELEASES,
)
