"""The real components a client is judged with: a local Apache Kafka broker ktc starts, and the capture proxy
(capture.py) in front of it.

The broker has a second plaintext listener advertised at the proxy's port, so a client bootstrapped on
``rig.bootstrap`` is sent back to the proxy by Metadata and every request it makes (Produce above all) passes
the proxy; ktc's own wire client speaks to ``rig.direct``, the first listener, to create topics and write the
batches a consumer is judged on, so they never mix with what the client sent.  Everything stops on ``stop``
(and, through the broker's lifecycle, at exit and on SIGINT/SIGTERM).
"""

from __future__ import annotations

from ktc.implementations.clients.capture import CaptureProxy
from ktc.kafka.processes import provision, scratch
from ktc.kafka.processes.broker import LocalBroker, free_ports

# no background retention or log-start work while a client is judged
QUIET = {"log.retention.check.interval.ms": 3_600_000, "log.initial.task.delay.ms": 3_600_000}
READY_S = 180.0  # a broker's start on a loaded machine: every client of the worker waits on this one


class ProxiedBroker(LocalBroker):
    """A local broker with a second plaintext listener advertised at the proxy's port."""

    def __init__(self, version: str, proxy_port: int, **options) -> None:
        super().__init__(version, **options)
        self.proxy_port, (self.proxied_port,) = proxy_port, free_ports(1)

    def properties(self) -> dict[str, object]:
        props = super().properties()
        props["listeners"] = f"{props['listeners']},PROXIED://127.0.0.1:{self.proxied_port}"
        props["advertised.listeners"] = f"{props['advertised.listeners']},PROXIED://127.0.0.1:{self.proxy_port}"
        props["listener.security.protocol.map"] = f"{props['listener.security.protocol.map']},PROXIED:PLAINTEXT"
        return props


class Rig:
    def __init__(self, version: str | None = None) -> None:
        self.version = version or provision.DEFAULT_VERSIONS[-1]
        self.proxy: CaptureProxy | None = None
        self.broker: ProxiedBroker | None = None
        self.data = None

    @property
    def bootstrap(self) -> str:
        assert self.proxy is not None
        return f"127.0.0.1:{self.proxy.port}"

    @property
    def direct(self) -> str:
        assert self.broker is not None
        return self.broker.bootstrap

    def start(self) -> Rig:
        self.proxy = CaptureProxy().__enter__()
        self.data = scratch.make()
        config = {**QUIET, **({"log.dirs": self.data} if self.data is not None else {})}
        try:
            self.broker = ProxiedBroker(self.version, self.proxy.port, config=config, ready_timeout_s=READY_S).start()
        except BaseException:
            self.stop()
            raise
        self.proxy.target = ("127.0.0.1", self.broker.proxied_port)
        return self

    def stop(self) -> None:
        broker, proxy, self.broker, self.proxy = self.broker, self.proxy, None, None
        if broker is not None:
            broker.stop()
        if proxy is not None:
            proxy.stop()
        scratch.remove(self.data)
        self.data = None
