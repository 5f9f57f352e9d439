"""Kafka in a container, started with testcontainers on the host's network (no port leaves 127.0.0.1).

``ContainerBroker`` is the local broker (processes/broker.py) whose JVM runs in a container of
``ktc/kafka:<version>`` (image.py): the same ``server.properties`` (listeners on 127.0.0.1, free ports),
the same storage format (run by the host's Java before the container starts), the same data directory
and, on a clock ktc sets, the same clock file and preload -- each bind-mounted at its own path, so the
broker in the container reads and writes exactly what a local one would and the judge reads its log
directory as it reads a local one's.  Only the JVM's process is the container's.

``ApacheContainer`` runs ``apache/kafka:<version>`` as its image is meant to be run (``KAFKA_*``
variables) where that image can be had: its Java is the image's own (musl), so ktc's preload does not
load there and it is judged over intervals on the host's clock, like any broker ktc does not start.

Every container carries ktc's labels (``ktc.pid``, ``ktc.host``: what ``ktc clean --containers`` reads)
and is removed on stop, atexit, SIGINT and SIGTERM (the local broker's registry, lifecycle.py), then
the engine, when ktc started it, is stopped.  Testcontainers' reaper (Ryuk) needs a registry image, so
it is off.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path

from ktc.kafka.processes.broker import BrokerError, LocalBroker, free_ports
from ktc.kafka.processes.lifecycle import keep_stopped, release, signals_deferred

from . import engine as engines
from . import image as images

LABELS = ("ktc.pid", "ktc.host", "ktc.kafka")


def labels(version: str) -> dict[str, str]:
    return {"ktc.pid": str(os.getpid()), "ktc.host": socket.gethostname(), "ktc.kafka": version}


def without_ryuk() -> None:
    """Testcontainers' reaper is a registry image: ktc removes its own containers instead."""
    from testcontainers.core.config import testcontainers_config

    testcontainers_config.ryuk_disabled = True


class ContainerRun:
    """A started container seen as a child process: ``poll``/``wait``/``returncode`` from its state."""

    def __init__(self, container):
        self.container, self.returncode = container, None

    @property
    def pid(self) -> int | None:
        return self.container.attrs.get("State", {}).get("Pid")

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(Exception):
                self.container.reload()
                state = self.container.attrs["State"]
                if state["Status"] in ("exited", "dead"):
                    self.returncode = state["ExitCode"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = time.monotonic() + (timeout or 0)
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.returncode


class ContainerBroker(LocalBroker):
    """The local broker's JVM in a ``ktc/kafka:<version>`` container (or ``apache/kafka`` when pulled)."""

    def __init__(self, version: str, engine: engines.Engine, reference: str, **settings):
        super().__init__(version, **settings)
        self.engine, self.image, self.container = engine, reference, None

    def launch(self, lib: Path) -> None:
        from testcontainers.core.container import DockerContainer

        without_ryuk()
        command = self._java(Path(images.KAFKA_LIBS), "kafka.Kafka", str(self.tmpdir / "server.properties"))
        box = DockerContainer(self.image, docker_client_kw=self.engine.client_settings()).with_command(command)
        for path in self.mounts():
            box = box.with_volume_mapping(str(path), str(path), "rw")
        for key, value in self.container_env().items():
            box = box.with_env(key, value)
        box = box.with_kwargs(network_mode="host", labels=labels(self.version), working_dir=str(self.tmpdir))
        with signals_deferred():
            self.container = box
            box.start()
            self.process = ContainerRun(box.get_wrapped_container())

    def mounts(self) -> list[Path]:
        """What the JVM reads and writes, each at its own path: the broker's dir, its data, the clock."""
        found = [self.tmpdir]
        data = self.config.get("log.dirs")
        if data is not None:
            found.append(Path(str(data)))
        if self.clock is not None:
            found += [self.clock.directory, self.clock.library.parent]
        return found

    def container_env(self) -> dict[str, str]:
        return dict(self.clock.environment()) if self.clock is not None else {}

    def log_tail(self, lines: int = 30) -> str:
        tail = super().log_tail(lines)
        if self.container is not None:
            with contextlib.suppress(Exception):
                out, err = self.container.get_logs()
                text = (out + err).decode(errors="replace").strip().splitlines()[-lines:]
                tail += "\n--- container output\n" + "\n".join(text)
        return tail

    def _kill(self) -> None:
        super()._kill()  # the storage format's JVM, if it is still running
        box, self.container = self.container, None
        if box is not None:
            with contextlib.suppress(Exception):
                box.stop(force=True)

    def stop(self) -> None:
        super().stop()
        self.engine.stop()


class ApacheContainer:
    """``apache/kafka:<version>`` configured by its ``KAFKA_*`` variables, on the host's network."""

    def __init__(self, version: str, engine: engines.Engine, reference: str, config: dict):
        self.version, self.engine, self.image, self.config = version, engine, reference, config
        self.port, self.controller_port = free_ports(2)
        self.container, self.process = None, None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        props = {
            "node.id": 1,
            "process.roles": "broker,controller",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "offsets.topic.replication.factor": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "auto.create.topics.enable": "false",
            **self.config,
        }
        return {"KAFKA_" + k.upper().replace(".", "_"): str(v) for k, v in props.items()}

    def start(self) -> ApacheContainer:
        from testcontainers.core.container import DockerContainer

        without_ryuk()
        box = DockerContainer(self.image, docker_client_kw=self.engine.client_settings())
        for key, value in self.environment().items():
            box = box.with_env(key, value)
        box = box.with_kwargs(network_mode="host", labels=labels(self.version))
        with signals_deferred():
            keep_stopped(self)
            self.container = box
        try:
            box.start()
            self.process = ContainerRun(box.get_wrapped_container())
            wait_answers(self.bootstrap, self.process, 90.0)
        except BaseException:
            self.stop()
            raise
        return self

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(Exception):
            out, err = self.container.get_logs()
            return "\n".join((out + err).decode(errors="replace").strip().splitlines()[-lines:])
        return ""

    def exit_code(self, wait_s: float = 2.0) -> int | None:
        return self.process.wait(wait_s) if self.process is not None else None

    def stop(self) -> None:
        box, self.container = self.container, None
        if box is not None:
            with contextlib.suppress(Exception):
                box.stop(force=True)
        self.engine.stop()
        release(self)


def wait_answers(bootstrap: str, process: ContainerRun, timeout_s: float) -> None:
    from ktc.kafka.client.security import PLAINTEXT
    from ktc.kafka.client.wire import Client, WireError

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrokerError(f"the container exited with code {process.returncode} before answering")
        try:
            with Client(bootstrap, timeout_s=2, security=PLAINTEXT) as client:
                client.api_versions()
                return
        except (OSError, WireError):
            time.sleep(0.2)
    raise BrokerError(f"the container did not answer on {bootstrap} within {timeout_s:.0f} s")
