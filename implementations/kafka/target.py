"""A broker target, declared: how it starts, how it is probed, how it picks its profile, where its
expectations are and which settings it takes.  One adapter (adapter.py: ``BrokerAdapter``) judges any of them;
a target is data handed to it, never a subclass of it.

    TARGET = BrokerTarget(
        name="kfake-again",                                              # its --impl name and its results' name
        settings="ktc.implementations.kafka.settings:Kfake.from_options",  # (option values, environ) -> settings
        start="ktc.implementations.kafka.processes.kfake:Launcher",      # settings -> what starts its broker
        profile=Fixed("kafka-4", "kfake follows the newest Apache Kafka"),
        expectations=Path(__file__).parent,                             # <name>[-<version>].toml there
        kip="never", unsupported={...})

``settings``, ``start`` and ``runs`` are objects or ``module:attribute`` strings imported when the target is
built, so declaring one (and listing every family, as ``ktc --help`` does) imports no Kafka client.
kfake, tansu, the container, the cluster, the Kafka ktc starts and any broker by address are declared in
implementations/families/; a third party declares its own in one file (README: "Judge your own broker").
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ktc.paths import expectations_dir

KIP_POLICIES = ("pinned", "every", "never")
PIPELINE = "ktc.implementations.kafka.running:PipelineRuns"  # the one executor (judge/pipeline.py)


def use(thing):
    """An object, or the one a ``module:attribute`` string names (imported now)."""
    if not isinstance(thing, str):
        return thing
    module, _, attribute = thing.partition(":")
    found = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


@dataclass(frozen=True)
class ReleaseLine:
    """An Apache Kafka release ktc starts: its release line's profile (specs/kafka-versions.toml)."""

    def known(self, version: str) -> str | None:
        from ktc.specs import versions

        return versions.profile_for(version)

    def evidence(self, version: str, found) -> str | None:
        from ktc.specs import versions

        return f"release line {versions.line_of(version).line}"


@dataclass(frozen=True)
class Discovered:
    """What discovery observes (ktc/kafka/discovery.py): the broker's configs and API versions."""

    def known(self, version: str) -> str | None:
        return None

    def evidence(self, version: str, found) -> str | None:
        return found.evidence if found is not None else None


@dataclass(frozen=True)
class Fixed:
    """One profile, always, and why (kfake and tansu follow the newest Apache Kafka)."""

    profile: str
    why: str

    def known(self, version: str) -> str | None:
        return self.profile

    def evidence(self, version: str, found) -> str | None:
        return self.why


@dataclass(frozen=True)
class BrokerTarget:
    """A Kafka-compatible broker under test, as a declaration.

    ``name``: its results' name; ``{version}`` is filled with what its broker runs (``kafka-{version}``).
    ``settings(values, environ)``: its typed settings (settings.py), from the families' option values
    (``Option.name`` -> value) and the environment, built once.  ``start(settings)``: its launcher, what brings
    its broker up and down (launch.py: a local JVM, an address; processes/kfake.py, processes/tansu.py,
    containers/launch.py, cluster_run.py).  ``profile``: how it picks the profile it is judged under when
    ``--profile`` names none (``ReleaseLine``, ``Discovered``, ``Fixed``); a broker known only by its address
    is always ``Discovered``.  ``expectations``: the folder of its ``<name>[-<version>].toml`` files.
    ``probes``: ask what it answers before the first history (judge/probe.py; a broker known only by its
    address always is).  ``kip``: how the KIP texts judge it: on pinned inputs (``pinned``, a broker), on
    every test (``every``, the cluster), or not at all (``never``: kfake, which is not Kafka).
    ``kafka_changes``: an Apache Kafka release, held to each of Kafka's own changes (``Capabilities.releases``).
    ``unsupported``: clause -> why, beyond what no broker can be judged on.  ``claims``: when given, the only
    clauses it is judged on; every other is unsupported with ``elsewhere``.  ``runs``: the executor of its
    histories (running.py: the pipeline; cluster_run.py: leader changes).  ``xdist_group``: default its name.
    ``bulk``: the harness hands ``run()`` every history of a test at once and shrinks a failure by running again
    (False where one run is costly, as the cluster's halts and restarts are: Hypothesis shrinks as it draws).
    """

    name: str
    settings: Callable | str
    start: Callable | str
    profile: ReleaseLine | Discovered | Fixed = Discovered()
    expectations: Path | None = field(default_factory=expectations_dir)
    probes: bool = False
    kip: str = "pinned"
    kafka_changes: bool = False
    unsupported: Mapping[str, str] = field(default_factory=dict)
    claims: tuple[str, ...] | None = None
    elsewhere: str = ""
    runs: Callable | str = PIPELINE
    xdist_group: str | None = None
    bulk: bool = True

    def __post_init__(self):
        if self.kip not in KIP_POLICIES:
            raise ValueError(f"BrokerTarget {self.name!r}: kip={self.kip!r}, expected one of {', '.join(KIP_POLICIES)}")

    def implementation(self, values: Mapping | None = None, environ: Mapping[str, str] | None = None):
        """The adapter judging this target, its settings built from ``values`` and ``environ`` (default
        ``os.environ``): the one place a target's settings are read."""
        from .adapter import BrokerAdapter

        return BrokerAdapter(self, use(self.settings)(values or {}, os.environ if environ is None else environ))

    def launcher(self, settings):
        return use(self.start)(settings)

    def executor(self, adapter):
        return use(self.runs)(adapter)
