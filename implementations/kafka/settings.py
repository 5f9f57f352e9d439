"""The settings of each kind of broker target, typed: one frozen dataclass each, built once by the target's
declaration (target.py) from the families' option values and the environment, then passed explicitly.

The environment variables read here (``KTC_KAFKA_BROKER_CONFIG``, the pipeline's tuning ``KTC_KAFKA_CHUNK``,
``_CONNECTIONS``, ``_DEPTH``, ``_READY_S``, ``_RECONNECT_S``, ``KTC_KFAKE_VERSION``, ``KTC_TANSU_BIN``,
``KTC_CONTAINER_IMAGE``) are listed with every other in ktc/environment.py (``ktc env``).  A malformed value is
a one-line ValueError naming the variable, raised when the target is built (``ktc run`` exits 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

CLOCK_ENV = "KTC_KAFKA_CLOCK"  # the default of --kafka-clock
CLOCK_MODES = ("controlled", "host")
IMAGE_MODES = ("auto", "local")  # KTC_CONTAINER_IMAGE: apache/kafka when it can be pulled, or always ktc/kafka
# attribute -> (its variable, its kind)
TUNING = {
    "chunk": ("KTC_KAFKA_CHUNK", int),
    "connections": ("KTC_KAFKA_CONNECTIONS", int),
    "depth": ("KTC_KAFKA_DEPTH", int),
    "ready_s": ("KTC_KAFKA_READY_S", float),
    "reconnect_s": ("KTC_KAFKA_RECONNECT_S", float),
}


class ClockChoiceError(ValueError):
    """--kafka-clock / KTC_KAFKA_CLOCK names no clock."""


@dataclass(frozen=True)
class Tuning:
    """How histories are pipelined on a broker (judge/pipeline.py)."""

    chunk: int = 128  # histories per CreateTopics request
    connections: int = 4  # for operations (plus one for admin)
    depth: int = 2  # operations in flight per connection
    ready_s: float = 60.0  # base deadline for new partitions to answer
    reconnect_s: float = 30.0  # a broker unreachable this long ends the run

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Tuning:
        """The defaults, each overridden by its ``KTC_KAFKA_<NAME>`` where set."""
        given = {
            attr: positive(name, environ[name].strip(), kind)
            for attr, (name, kind) in TUNING.items()
            if environ.get(name, "").strip()
        }
        return cls(**given)


def positive(name: str, raw: str, kind: type):
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not value > 0:
        raise ValueError(f"{name}={raw!r}: expected a positive {'whole number' if kind is int else 'number'}")
    return value


def broker_config(environ: Mapping[str, str]) -> dict[str, str]:
    """``KTC_KAFKA_BROKER_CONFIG=key=value,key=value``: settings for the brokers ktc starts (e.g. a
    short ``connections.max.idle.ms`` to prove a long run survives idle reaping)."""
    raw = environ.get("KTC_KAFKA_BROKER_CONFIG", "")
    pairs = [item.partition("=") for item in raw.split(",") if item.strip()]
    wrong = next((key + sep + value for key, sep, value in pairs if not sep or not key.strip()), None)
    if wrong is not None:
        raise ValueError(f"KTC_KAFKA_BROKER_CONFIG: {wrong.strip()!r} is not key=value (settings: key=value,key=value)")
    return {key.strip(): value.strip() for key, _sep, value in pairs}


def clock_mode(given: str | None) -> str:
    """``controlled`` (the default) or ``host``: how the brokers ktc starts are judged."""
    mode = (given or "").strip() or "controlled"
    if mode not in CLOCK_MODES:
        raise ClockChoiceError(f"{CLOCK_ENV}={mode!r}: expected one of {', '.join(CLOCK_MODES)}")
    return mode


@dataclass(frozen=True)
class Started:
    """An Apache Kafka release ktc starts on loopback (``kafka``, ``kafka-3.9``, ``kafka-4``, ``kafka-X.Y.Z``)."""

    version: str
    clock: str = "controlled"  # --kafka-clock
    broker_config: Mapping[str, str] = field(default_factory=dict)  # KTC_KAFKA_BROKER_CONFIG
    tuning: Tuning = Tuning()

    @classmethod
    def from_options(
        cls, values: Mapping, environ: Mapping[str, str], *, version: str | None = None, newest: str | None = None
    ) -> Started:
        """``version``, else the newest release of line ``newest``, else --kafka-version, else the default."""
        from ktc.kafka.processes import provision
        from ktc.specs import versions

        chosen = version or (provision.newest(newest) if newest else values.get("kafka_version"))
        chosen = chosen or provision.DEFAULT_VERSIONS[0]
        versions.line_of(chosen)  # a version ktc has no line for is refused here, in one line
        return cls(chosen, clock_mode(values.get("kafka_clock")), broker_config(environ), Tuning.from_environ(environ))


@dataclass(frozen=True)
class Container:
    """``kafka-container``: a release ktc starts in a container, from an image as ``image`` says."""

    kafka: Started
    image: str = "auto"  # KTC_CONTAINER_IMAGE

    @property
    def tuning(self) -> Tuning:
        return self.kafka.tuning

    @classmethod
    def from_options(cls, values: Mapping, environ: Mapping[str, str]) -> Container:
        """--kafka-version, else the release ``kafka-3.9`` starts (so a run of both judges one broker two ways)."""
        from ktc.kafka.processes import provision

        line = provision.DEFAULT_VERSIONS[0].rsplit(".", 1)[0]
        version = values.get("kafka_version") or provision.newest(line)
        mode = environ.get("KTC_CONTAINER_IMAGE", "").strip() or "auto"
        if mode not in IMAGE_MODES:
            raise ValueError(f"KTC_CONTAINER_IMAGE={mode!r}: expected one of {', '.join(IMAGE_MODES)}")
        return cls(Started.from_options(values, environ, version=version), mode)


@dataclass(frozen=True)
class ByAddress:
    """Any broker by its address (``--impl kafka --kafka-bootstrap``), TLS/SASL as --kafka-config says."""

    bootstrap: str
    security: object = None  # ktc.kafka.client.security.Security; None: plaintext
    tuning: Tuning = Tuning()

    @classmethod
    def from_options(cls, values: Mapping, environ: Mapping[str, str]) -> ByAddress:
        from ktc.kafka.client.security import PLAINTEXT, Security

        config = values.get("kafka_config")
        security = Security.from_properties(config) if config else PLAINTEXT
        return cls(values.get("kafka_bootstrap") or "", security, Tuning.from_environ(environ))


@dataclass(frozen=True)
class Kfake:
    """franz-go's kfake, built with Go: the version ``KTC_KFAKE_VERSION`` names (pinned, newest, or a module's)."""

    version: str
    how: str  # how it was chosen, in words
    tuning: Tuning = Tuning()

    @classmethod
    def from_options(cls, values: Mapping, environ: Mapping[str, str]) -> Kfake:
        from .processes.kfake import chosen_version

        return cls(*chosen_version(environ.get("KTC_KFAKE_VERSION", "")), Tuning.from_environ(environ))


@dataclass(frozen=True)
class Tansu:
    """tansu: the binary ``KTC_TANSU_BIN`` names, else one found (processes/tansu.py)."""

    binary: str | None = None
    tuning: Tuning = Tuning()

    @classmethod
    def from_options(cls, values: Mapping, environ: Mapping[str, str]) -> Tansu:
        return cls(environ.get("KTC_TANSU_BIN") or None, Tuning.from_environ(environ))


@dataclass(frozen=True)
class Cluster:
    """``kafka-cluster``: three nodes of a release, their clocks offset by ``offsets_s``."""

    version: str
    offsets_s: tuple[float, ...]

    @classmethod
    def from_options(cls, values: Mapping, environ: Mapping[str, str]) -> Cluster:
        from ktc.kafka.processes import provision
        from ktc.kafka.processes.skew import DEFAULT_OFFSETS_S

        return cls(values.get("kafka_version") or provision.DEFAULT_VERSIONS[0], tuple(DEFAULT_OFFSETS_S))
