"""``--impl kafka-container``: Apache Kafka in a container under testcontainers, judged like the local broker.

The engine is the user's own Docker engine when one answers (``DOCKER_HOST``, or the default socket), else
a ``dockerd`` ktc starts for the run and stops after it (containers/engine.py).  The image is
``apache/kafka:<version>`` where the engine can pull it, else ``ktc/kafka:<version>``, built from the
host's Java and the Maven Central jars ktc caches (containers/image.py); ``KTC_CONTAINER_IMAGE=local``
skips the pull.  The container shares the host's network; Kafka listens on free ports of 127.0.0.1.

On ``ktc/kafka`` the broker runs exactly as the local one does -- same properties, same data directory
in RAM, same clock ktc sets (its file and preload mounted) -- so it is judged under the same clauses,
at the instants ktc set.  On ``apache/kafka`` (a musl image that cannot load ktc's preload) it is judged
over [sent, received] on the host's clock, and clauses that need a clock ktc sets are unsupported.

With no engine and none that ktc can start, every clause is ``unsupported`` with the reason (never a
silent skip): the report says this tier could not run and why.
"""
from __future__ import annotations

import os

from ktc.implementations.protocol import Capabilities
from ktc.kafka.processes import provision
from ktc.kafka.processes.clock import ControlledClock
from ktc.specs.clauses import all_clauses

from .adapter import QUIET, KafkaImplementation
from .containers import engine as engines
from .containers import image as images
from .containers.broker import ApacheContainer, ContainerBroker
from .judge.capabilities import KIP

IMAGE_ENV = "KTC_CONTAINER_IMAGE"  # "local": always ktc/kafka; "auto" (default): apache/kafka when it can be pulled
IMAGE_MODES = ("auto", "local")


class KafkaContainerImplementation(KafkaImplementation):
    """``kafka-container``: the suites against Kafka ``<version>`` in a container."""

    xdist_group = "kafka-container"

    def __init__(self, version: str | None = None):
        super().__init__(version or default_version(), bootstrap="")  # always our own container
        self.name = "kafka-container"
        self.image_mode = image_mode(os.environ)
        self.image = self.engine = None
        self.image_how = ""
        self._problem: list[str | None] = []

    @property
    def version(self) -> str:
        return self.kafka_version

    def started_what(self) -> str:
        where = self.engine.describe() if self.engine is not None else "a Docker engine"
        how = f"; image {self.image_how}" if self.image_how else ""
        return (f"Apache Kafka {self.kafka_version} in a container of {self.image or images.LOCAL + ':?'} "
                f"under testcontainers, host network, on {where}{how}")

    def capabilities(self) -> Capabilities:
        problem = self.unavailable()
        if problem is not None:  # its own profiles, every clause unsupported with the reason: one "not run" row
            return Capabilities(profiles=frozenset({self.profile(), KIP}), pinned_only=frozenset({KIP}),
                                unsupported={c.kip: problem for c in all_clauses().values()})
        return super().capabilities()

    def unavailable(self) -> str | None:
        """Why this target cannot run at all (no Docker engine, and none ktc can start), or None; asked once."""
        if not self._problem:
            self._problem.append(engines.problem())
        return self._problem[0]

    def start_process(self):
        self.engine = engines.obtain()
        try:
            return self.start_in(self.engine)
        except BaseException:
            self.engine.stop()
            raise

    def start_in(self, engine: engines.Engine):
        client = engine.client()
        try:
            apache = images.pull_apache(client, self.kafka_version) if self.image_mode == "auto" else None
            if apache is not None:
                self.image, self.image_how = apache, "pulled"
                self.clock_reason = f"{apache} runs its own (musl) Java, which cannot load ktc's clock preload"
                return ApacheContainer(self.kafka_version, engine, apache, QUIET).start()
            self.image, self.image_how = images.ensure_local(client, self.kafka_version)
        finally:
            client.close()
        return super().start_process()

    def new_broker(self, config: dict, clock: ControlledClock | None):
        return ContainerBroker(self.kafka_version, self.engine, self.image, config=config, clock=clock).start()


def default_version() -> str:
    """The release ``kafka-3.9`` starts (the newest 3.9.x), so a run of both judges one broker two ways."""
    return provision.newest(provision.DEFAULT_VERSIONS[0].rsplit(".", 1)[0])


def image_mode(environ) -> str:
    mode = environ.get(IMAGE_ENV, "").strip() or "auto"
    if mode not in IMAGE_MODES:
        raise ValueError(f"{IMAGE_ENV}={mode!r}: expected one of {', '.join(IMAGE_MODES)}")
    return mode
