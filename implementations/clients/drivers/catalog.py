"""The client libraries ktc has drivers for, as declarations (``Library``): the version judged by default, the
releases a matrix places historical bugs with, and the launcher that builds the driver into ktc's cache.

Versions on either side of a fixed bug come from sources.toml (each with the file:line of the bug and of its
fix at those tags); ``default_version`` is the newest release when the driver was written.
"""

from __future__ import annotations

from ktc.implementations.clients.library import Library

DRIVERS = "ktc.implementations.clients.drivers"

JAVA = Library(
    name="kafka-clients",
    language="java",
    default_version="4.4.0",
    versions=("3.9.2", "4.4.0"),
    launcher=f"{DRIVERS}.java:launch",
)
FRANZ_GO = Library(
    name="franz-go",
    language="go",
    default_version="v1.22.3",
    versions=("v1.22.3",),
    launcher=f"{DRIVERS}.golang:launch",
)
SARAMA = Library(
    name="sarama",
    language="go",
    default_version="v1.61.1",
    versions=("v1.20.1", "v1.21.0", "v1.45.0", "v1.45.1", "v1.61.1"),  # either side of two fixes: sources.toml
    launcher=f"{DRIVERS}.golang:launch",
)
KAFKAJS = Library(
    name="kafkajs",
    language="javascript",
    default_version="2.2.4",
    versions=("1.12.0", "1.13.0", "2.2.4"),  # either side of the LogAppendTime fix: sources.toml
    launcher=f"{DRIVERS}.node:launch",
)

LIBRARIES: tuple[Library, ...] = (JAVA, FRANZ_GO, SARAMA, KAFKAJS)
