"""Kafka in a container (the ``apache/kafka`` image) through testcontainers, where a Docker engine answers.

``--impl kafka-container`` runs the same suites as the local broker.  Without a Docker engine
every clause is reported ``unsupported`` with the reason (never a silent skip), so a report
says that this tier could not run and why.  Ryuk, testcontainers' reaper, removes the container
if this process dies; ``close`` and ``atexit`` remove it otherwise.

The image is configured entirely from ``KAFKA_*`` environment variables (a single combined
KRaft node); the advertised listener is the host port bound to it, chosen before start.
"""
from __future__ import annotations

import atexit
import functools
import os
import time

from implementations.protocol import Capabilities
from ktc.kafka.client import wire
from ktc.kafka.client.security import PLAINTEXT
from ktc.kafka.processes import provision
from ktc.kafka.processes.broker import free_port
from specs.clauses import all_clauses

from .adapter import QUIET, KafkaImplementation
from .judge.capabilities import KIP

IMAGE = "apache/kafka"
READY_TIMEOUT_S = 90.0


@functools.cache
def docker_problem() -> str | None:
    """None when a Docker engine answers a ping; otherwise why this tier cannot run."""
    try:
        import docker
    except ImportError:
        return "the docker/testcontainers packages are not installed (pip install -e '.[broker]')"
    try:
        docker.from_env(timeout=5).ping()
        return None
    except Exception as error:  # docker raises several unrelated types for "no engine"
        first = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        return f"no Docker engine answers (DOCKER_HOST={os.environ.get('DOCKER_HOST', 'unset')}): {first}"


def image_env(port: int) -> dict[str, str]:
    """server.properties as the image's environment: a.b.c=v becomes KAFKA_A_B_C=v."""
    props = {"node.id": 1, "process.roles": "broker,controller",
             "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
             "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
             "controller.listener.names": "CONTROLLER", "controller.quorum.voters": "1@localhost:9093",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
             "offsets.topic.replication.factor": 1, "transaction.state.log.replication.factor": 1,
             "transaction.state.log.min.isr": 1, "auto.create.topics.enable": "false", **QUIET}
    return {"KAFKA_" + k.upper().replace(".", "_"): str(v) for k, v in props.items()}


class ContainerBroker:
    """One ``apache/kafka:<version>`` container with its 9092 bound to a free loopback port."""

    def __init__(self, version: str):
        self.version, self.port, self.container = version, free_port(), None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ContainerBroker:
        from testcontainers.core.container import DockerContainer
        container = DockerContainer(f"{IMAGE}:{self.version}").with_bind_ports(9092, self.port)
        for key, value in image_env(self.port).items():
            container = container.with_env(key, value)
        self.container = container.start()
        atexit.register(self.stop)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                with wire.Client(self.bootstrap, timeout_s=2, security=PLAINTEXT) as client:
                    client.api_versions()
                    return
            except (OSError, wire.WireError):
                time.sleep(0.2)
        self.stop()
        raise wire.WireError(
            f"{IMAGE}:{self.version} did not answer on {self.bootstrap} within {READY_TIMEOUT_S:.0f} s"
        )

    def stop(self) -> None:
        if self.container is not None:
            container, self.container = self.container, None
            container.stop()


class KafkaContainerImplementation(KafkaImplementation):
    """``kafka-container``: the suites against ``apache/kafka:<version>`` under testcontainers."""

    xdist_group = "kafka-container"

    def __init__(self, version: str | None = None):
        super().__init__(version or provision.DEFAULT_VERSIONS[0], bootstrap="")  # always our own container
        self.name = "kafka-container"

    @property
    def version(self) -> str:
        return f"{IMAGE}:{self.kafka_version}"

    def started_what(self) -> str:
        return f"{IMAGE}:{self.kafka_version} under testcontainers"

    def capabilities(self) -> Capabilities:
        problem = self.unavailable()
        if problem is not None:  # its own profiles, every clause unsupported with the reason: one "not run" row
            return Capabilities(profiles=frozenset({self.profile(), KIP}), pinned_only=frozenset({KIP}),
                                unsupported={c.kip: problem for c in all_clauses().values()})
        return super().capabilities()

    def unavailable(self) -> str | None:
        """Why this target cannot run at all (no Docker engine), or None."""
        return docker_problem()

    def start_process(self) -> ContainerBroker:
        return ContainerBroker(self.kafka_version).start()
