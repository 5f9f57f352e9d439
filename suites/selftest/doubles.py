"""Test doubles shaped like the implementations ktc meets, answering with the reference model.

``release_3_9`` declares what an Apache Kafka 3.9 release ktc started declares
(implementations/kafka/judge/capabilities.py: its line's profile, ``kip`` on pinned inputs only, and
every release profile for Kafka's own changes), so the verdict words of a broker can be pinned in
seconds, without a JVM.  Like the mutants, it imports the reference's rules on purpose: it is the
suite's own double, not an implementation under test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from ktc.implementations.protocol import Capabilities
from ktc.reference.model import Model
from ktc.reference.types import History
from ktc.specs.profiles import get, names


class ReleaseShaped:
    """The reference's answers behind a Kafka release's capabilities."""

    def __init__(self, name: str, profile: str):
        self.name, self.version, self.profile = name, "double", profile

    def capabilities(self) -> Capabilities:
        return Capabilities(
            profiles=frozenset({self.profile, "kip"}),
            pinned_only=frozenset({"kip"}),
            releases=frozenset(names()) - {"kip"},
        )

    def run(self, histories: Sequence[History]):
        return [Model(get(h.profile), h.no_timestamp).run(h) for h in histories]


def release_3_9() -> ReleaseShaped:
    return ReleaseShaped("release-3.9-double", "kafka-3.9")


class EveryProfileInBulk:
    """The reference's answers behind Spark's capabilities: every profile, and bulk (the harness hands it a
    test's histories at once)."""

    name, version, bulk = "every-profile-double", "double", True

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset(names()))

    def run(self, histories: Sequence[History]):
        log = os.environ.get("KTC_DOUBLE_RUN_LOG")
        if log:  # one line per run() call: how many histories, under which profiles
            with open(log, "a") as out:
                out.write(json.dumps([len(histories), sorted({h.profile for h in histories})]) + "\n")
        return [Model(get(h.profile), h.no_timestamp).run(h) for h in histories]


class WrongUnderKipInBulk(EveryProfileInBulk):
    """A bulk implementation that is wrong under ``kip`` only: it keeps the error code of any rejected batch
    but answers 0 (accepted) for it."""

    def run(self, histories: Sequence[History]):
        traces = super().run(histories)
        return [tuple(accepted(r) if h.profile == "kip" else r for r in trace) for h, trace in zip(histories, traces)]


class EveryTestInBulk(EveryProfileInBulk):
    """As EveryProfileInBulk, with ``bulk_session``: every test of the session judged in one run (as Spark)."""

    name, bulk_session = "every-test-double", True


class WrongUnderKipInSessionBulk(WrongUnderKipInBulk):
    name, bulk_session = "wrong-under-kip-session-double", True


def accepted(result):
    from dataclasses import replace

    from ktc.reference.types import ProduceResult

    return replace(result, error_code=0) if isinstance(result, ProduceResult) and result.error_code else result
