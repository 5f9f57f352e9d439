"""A client library as a target: ``--impl client:<library>`` (its pinned version) or ``client:<library>-<version>``.

``ClientTarget`` is the declaration (implementations/protocol.py ``Declaration``): a library of the registry
(libraries.py) and a version.  ``ClientImplementation`` is what judges it: it launches the library's driver
(``Library.launcher``, which installs it into ktc's cache once) and speaks the contract through ``host.Driver``,
against the rig (rig.py: a local Apache Kafka behind the capture proxy), one rig shared by every client of the
process (they share one ``xdist_group``, so one worker, one broker).  It runs no broker history: it is judged
under the client profiles only (``client-kip``, ``client``) by suites/clients, which call ``ask`` (the driver),
``produced`` (the bytes the client sent), ``admin`` (ktc's own wire client, on the broker's direct listener)
and ``observed`` (one observation shared by the tests that judge it under both profiles).

A driver that cannot be had here (a missing toolchain, a refused download: ``Unavailable``) makes every client
clause ``unsupported`` with its reason: one "not run" row, never an error.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ktc.implementations.clients.host import Driver
from ktc.implementations.clients.libraries import registry
from ktc.implementations.clients.library import Library, Unavailable, launcher_of
from ktc.implementations.clients.rig import Rig
from ktc.implementations.protocol import Capabilities
from ktc.kafka.client.admin import MetadataRequest
from ktc.kafka.client.messages import Call
from ktc.kafka.client.wire import Client
from ktc.kafka.topics import TopicNamer
from ktc.reference.types import History, Trace
from ktc.specs.clauses import kips
from ktc.specs.profiles import names

GROUP = "clients"  # every client on one worker: one broker for all
METADATA_WITH_IDS = 12  # Metadata answers topic ids from v10; v12 lets a request name topics by name alone
HELLO_S = 120.0  # a driver's first answer: its runtime's start (a JVM, node) included


class SharedRig:
    """The one rig of this process, started on first use and stopped when its last user lets go."""

    def __init__(self) -> None:
        self.lock, self.users, self.rig = threading.Lock(), 0, None
        self.failed: str | None = None  # why it could not start: said again at once, not retried per test

    def take(self) -> Rig:
        with self.lock:
            if self.failed is not None:
                raise Unavailable(self.failed)
            if self.rig is None:
                try:
                    self.rig = Rig().start()
                except Exception as error:  # no Java, no Maven, a broker that would not start: said, not an error
                    said = (str(error).splitlines() or [""])[0]  # a broker's error carries its log's tail
                    self.failed = f"no local Apache Kafka for the clients here: {type(error).__name__}: {said}"
                    raise Unavailable(self.failed) from None
            self.users += 1
            return self.rig

    def give_back(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users <= 0 and self.rig is not None:
                self.rig.stop()
                self.rig, self.users = None, 0


RIGS = SharedRig()


class ClientImplementation:
    xdist_group = GROUP

    def __init__(self, library: Library, version: str, rigs: SharedRig = RIGS) -> None:
        self.library, self.version, self.rigs = library, version, rigs
        self.name = f"client-{library.name}-{version}"  # two versions of a library judged side by side
        self.argv: list[str] | None = None
        self.why_not: str | None = None
        self.driver: Driver | None = None
        self.rig: Rig | None = None
        self.namer = TopicNamer()
        self.observations: dict[object, object] = {}
        self.hello: dict | None = None
        self.log = Path(tempfile.gettempdir()) / "ktc-clients" / f"{self.name}-{os.getpid()}.log"

    # -- the protocol
    def capabilities(self) -> Capabilities:
        why = self.unavailable()
        unsupported = {kip.id: why for kip in kips()} if why else {}
        return Capabilities(profiles=frozenset(names("client")), unsupported=unsupported)

    def run(self, histories: Sequence[History]) -> Sequence[Trace]:
        raise NotImplementedError(f"{self.name} is a client library: it runs no broker history (suites/clients)")

    def describe(self) -> str:
        return f"{self.library.name} {self.version} ({self.library.language}), through its driver; log {self.log}"

    def target(self) -> dict:
        said = {"reported": self.hello.get("version")} if self.hello else {}
        return {"library": self.library.name, "language": self.library.language, "driver_log": str(self.log), **said}

    def unavailable(self) -> str | None:
        """Why the driver cannot run here (installed on first ask), or None."""
        if self.argv is None and self.why_not is None:
            try:
                self.argv = launcher_of(self.library)(self.library, self.version)
            except (Unavailable, OSError) as error:
                self.why_not = f"{self.library.name} {self.version}: {error}"
        return self.why_not

    def close(self) -> None:
        driver, self.driver = self.driver, None
        if driver is not None:
            driver.stop()
        if self.rig is not None:
            self.rig = None
            self.rigs.give_back()

    # -- what suites/clients asks
    def started(self) -> tuple[Driver, Rig]:
        if self.unavailable():
            raise Unavailable(self.why_not)
        if self.rig is None:
            self.rig = self.rigs.take()
        if self.driver is None:
            self.driver = Driver(self.argv, log=self.log).start()
            self.hello = self.driver.ask({"op": "hello"}, timeout_s=HELLO_S)  # the version it reports of itself
        return self.driver, self.rig

    def ask(self, op: str, **fields) -> dict:
        """One request of the contract, ``bootstrap`` filled in (the proxy's address)."""
        driver, rig = self.started()
        return driver.ask({"op": op, "bootstrap": rig.bootstrap, **fields})

    def admin(self) -> Client:
        """ktc's own wire client on the broker's direct listener (close it after use)."""
        return Client(self.started()[1].direct)

    def new_topic(self, configs: Mapping[str, object], label: str = "t") -> str:
        name = f"{self.namer.prefix}{next(self.namer.counter)}-{label}"
        with self.admin() as client:
            error, message = client.create_topic(name, dict(configs))
        if error:
            raise RuntimeError(f"CreateTopics {name}: error {error} {message}")
        return name

    def produced(self, topic: str) -> list:
        """What the client sent for ``topic``, named (Produce up to v12) or, from v13, by its topic id."""
        rig = self.started()[1]
        assert rig.proxy is not None
        sent = rig.proxy.produced(topic)
        return sent or rig.proxy.produced(self.topic_id(topic))

    def unreadable(self) -> list[str]:
        """The Produce frames the capture proxy forwarded but could not decode, as its errors."""
        rig = self.started()[1]
        assert rig.proxy is not None
        return list(rig.proxy.unreadable)

    def topic_id(self, topic: str) -> str:
        """The topic's id in hex, as Metadata v12 gives it (what a Produce v13 names its topic by)."""
        request = MetadataRequest[METADATA_WITH_IDS]
        call = Call(
            "Metadata",
            dict(
                topics=[request.MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            ),
            lambda response: {t.name: t.topic_id for t in response.topics},
            at=METADATA_WITH_IDS,
        )
        with self.admin() as client:
            return client.call(call)[topic].hex

    def observed(self, key: object, observe: Callable[[], object]) -> object:
        """One observation per key (a test judged under both client profiles observes the library once)."""
        if key not in self.observations:
            self.observations[key] = observe()
        return self.observations[key]


@dataclass(frozen=True)
class ClientTarget:
    """``--impl client:<library>[-<version>]``: a declaration, as a broker's ``BrokerTarget`` is."""

    name: str
    library: str
    version: str | None = None
    expectations: Path | None = None

    def implementation(self, values: Mapping | None = None) -> ClientImplementation:
        known = registry()
        if self.library not in known:
            raise ValueError(f"unknown client library {self.library!r}; known: {', '.join(known)}")
        library = known[self.library]
        return ClientImplementation(library, self.version or library.default_version)
