"""``--impl kafka-container``: Apache Kafka in a container under testcontainers, judged like the local broker.
``Container`` is the launcher its declaration names (implementations/families/container.py).

The engine is the user's own Docker engine when one answers (``DOCKER_HOST``, or the default socket), else
a ``dockerd`` ktc starts for the run and stops after it (engine.py).  The image is ``apache/kafka:<version>``
where the engine can pull it, else ``ktc/kafka:<version>``, built from the host's Java and the Maven Central
jars ktc caches (image.py); ``KTC_CONTAINER_IMAGE=local`` skips the pull.  The container shares the host's
network; Kafka listens on free ports of 127.0.0.1.

On ``ktc/kafka`` the broker runs exactly as the local one does -- it is the local broker's launcher
(launch.py: ``LocalKafka``) with its JVM in a container: same properties, same data directory in RAM, same
clock ktc sets (its file and preload mounted) -- so it is judged under the same clauses, at the instants ktc
set.  On ``apache/kafka`` (a musl image that cannot load ktc's preload) it is judged over [sent, received] on
the host's clock, and clauses that need a clock ktc sets are unsupported.

With no engine and none that ktc can start, every clause is ``unsupported`` with the reason (never a
silent skip): the report says this tier could not run and why.
"""

from __future__ import annotations

from ktc.kafka.client.security import PLAINTEXT
from ktc.kafka.processes.clock import ControlledClock, HostClock

from ..launch import QUIET, LocalKafka
from ..settings import Container as ContainerSettings
from . import engine as engines
from . import image as images
from .broker import ApacheContainer, ContainerBroker

HOST = HostClock()


class Container:
    """The local broker's launcher, its JVM in a container of the engine this launcher obtains (or
    ``apache/kafka`` as that image is meant to be run)."""

    external, security = False, PLAINTEXT

    def __init__(self, settings: ContainerSettings):
        self.local = LocalKafka(settings.kafka, new_broker=self.container_broker)
        self.image_mode = settings.image
        self.image = self.engine = self.apache = None
        self.image_how = ""
        self._problem: list[str | None] = []

    # what the local broker's launcher knows, unless apache/kafka runs instead
    version = property(lambda self: self.local.version)
    waits_at_start_s = property(lambda self: self.local.waits_at_start_s)
    broker = property(lambda self: self.apache or self.local.broker)
    log_dir = property(lambda self: self.local.log_dir)

    @property
    def clock(self):
        return HOST if self.apache is not None else self.local.clock

    @property
    def clock_reason(self) -> str:
        if self.apache is not None:
            return f"{self.image} runs its own (musl) Java, which cannot load ktc's clock preload"
        return self.local.clock_reason

    def reads_log_dir(self) -> bool:
        return self.apache is None and self.local.reads_log_dir()

    def unavailable(self) -> str | None:
        """Why this target cannot run at all (no Docker engine, and none ktc can start), or None; asked once."""
        if not self._problem:
            self._problem.append(engines.problem())
        return self._problem[0]

    def start(self) -> str:
        self.engine = engines.obtain()
        try:
            return self.start_in(self.engine)
        except BaseException:
            self.engine.stop()
            raise

    def start_in(self, engine: engines.Engine) -> str:
        client = engine.client()
        try:
            pulled = images.pull_apache(client, self.version) if self.image_mode == "auto" else None
            if pulled is not None:
                self.image, self.image_how = pulled, "pulled"
                self.apache = ApacheContainer(self.version, engine, pulled, QUIET).start()
                return self.apache.bootstrap
            self.image, self.image_how = images.ensure_local(client, self.version)
        finally:
            client.close()
        return self.local.start()

    def container_broker(self, version: str, config: dict, clock: ControlledClock | None):
        return ContainerBroker(version, self.engine, self.image, config=config, clock=clock).start()

    def started(self) -> str:
        where = self.engine.describe() if self.engine is not None else "a Docker engine"
        how = f"; image {self.image_how}" if self.image_how else ""
        return (
            f"Apache Kafka {self.version} in a container of {self.image or images.LOCAL + ':?'} "
            f"under testcontainers, host network, on {where}{how}"
        )

    def describe(self) -> str:
        return self.started()

    def record(self) -> dict:
        return {}

    def retarget(self, record: dict) -> None:
        self.local.retarget(record)

    def died(self) -> tuple[int, str] | None:
        broker = self.broker
        code = broker.exit_code() if broker is not None else None
        return None if code is None else (code, broker.log_tail())

    def stop(self) -> None:
        if self.apache is not None:
            self.apache.stop()
        self.local.stop()  # each container broker stops the engine with it (broker.py)
