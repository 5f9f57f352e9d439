"""Test doubles shaped like the implementations ktc meets, answering with the reference model.

``release_3_9`` declares what an Apache Kafka 3.9 release ktc started declares
(implementations/kafka/judge/capabilities.py: its line's profile, ``kip`` on pinned inputs only, and
every release profile for Kafka's own changes), so the verdict words of a broker can be pinned in
seconds, without a JVM.  Like the mutants, it imports the reference's rules on purpose: it is the
suite's own double, not an implementation under test.
"""
from __future__ import annotations

from collections.abc import Sequence

from implementations.protocol import Capabilities
from reference.model import Model
from reference.types import History
from specs.profiles import get, names


class ReleaseShaped:
    """The reference's answers behind a Kafka release's capabilities."""

    def __init__(self, name: str, profile: str):
        self.name, self.version, self.profile = name, "double", profile

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset({self.profile, "kip"}), pinned_only=frozenset({"kip"}),
                            releases=frozenset(names()) - {"kip"})

    def run(self, histories: Sequence[History]):
        return [Model(get(h.profile), h.no_timestamp).run(h) for h in histories]


def release_3_9() -> ReleaseShaped:
    return ReleaseShaped("release-3.9-double", "kafka-3.9")
