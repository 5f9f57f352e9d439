"""Real Kafka as an implementation under test: the ``kafka`` built-ins and any broker by address.

``KafkaImplementation`` owns a target (a broker ktc starts from Maven Central, or any bootstrap
address), finds out what it is (judge/discovery.py), runs histories on it with the one executor
(judge/pipeline.py) and hands back traces to be judged over clock intervals (judge/observe.py).
It deletes every topic it created when it closes, and on SIGINT/SIGTERM.
"""
from __future__ import annotations

import os
from pathlib import Path

from ktc.implementations.protocol import Capabilities, JudgedTrace
from ktc.kafka.client import wire
from ktc.kafka.client.security import PLAINTEXT, Security
from ktc.kafka.discovery import Discovery, DiscoveryError, discover, numeric_limits, unrecognised
from ktc.kafka.processes import lifecycle, provision, scratch
from ktc.kafka.processes.broker import BrokerError
from ktc.kafka.processes.clock import ControlledClock, HostClock
from ktc.kafka.topics import TopicNamer
from ktc.reference.types import CreateTopic, History
from ktc.specs import versions
from ktc.timeout import TimedOut

from .judge import clocked
from .judge.capabilities import NOT_SENT, broker_capabilities, with_observations, with_probe
from .judge.logdir import LogDir
from .judge.pipeline import Pipeline
from .judge.probe import Probed, probe
from .judge.retention import BROKER_CONFIG as RETENTION_ON_DEMAND
from .judge.retention import Canary, Retention
from .settings import extra_broker_config, tuned

# The model deletes segments only on an explicit RetentionPass; the broker must not do it behind our back.
# (On a clock ktc sets, the retention thread runs often and topics are held: judge/retention.py.)
QUIET = {"log.retention.check.interval.ms": 3_600_000, "log.initial.task.delay.ms": 3_600_000}
# On a clock ktc holds still, a connection the broker closes for idleness (measured in real time) is never
# reopened: NetworkClient's reconnect backoff waits for the wall clock to move.  Seen in CI: the broker's
# forwarding channel to its controller went idle 10 minutes, was closed, and the next forwarded request
# (IncrementalAlterConfigs of a retention pass) waited forever at a frozen instant.  So nothing idles out.
NEVER_IDLE = {"connections.max.idle.ms": 7 * 86_400_000}


def address_of(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    return host or "127.0.0.1", int(port)


class KafkaImplementation:
    """``kafka``: a local broker of ``version`` from Maven Central, or any broker at ``bootstrap``."""

    bulk = True  # the harness hands run() every history of a test at once
    # Tuning defaults; each one's KTC_KAFKA_<NAME> overrides it (``tuned``).
    chunk = 128  # histories per CreateTopics request
    connections = 4  # for operations (plus one for admin)
    depth = 2  # operations in flight per connection
    ready_s = 60.0  # base deadline for new partitions to answer
    reconnect_s = 30.0  # a broker unreachable this long ends the run
    starts_with_log_dir = True  # a broker it starts on a clock it sets exposes its log directory (not kfake, tansu)

    def __init__(self, version: str | None = None, bootstrap: str | None = None,
                 profile: str | None = None, security: Security | None = None, clock: str | None = None):
        self.kafka_version = version or os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
        self.bootstrap = bootstrap if bootstrap is not None else os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        self.requested_profile = profile or os.environ.get("KTC_KAFKA_PROFILE") or None
        self.profile_given = bool(os.environ.get("KTC_KAFKA_PROFILE"))  # by the user, not by a subclass
        # a broker ktc starts speaks plaintext; one given by address, what $KTC_KAFKA_CONFIG says
        self.security = security or (Security.from_env() if self.bootstrap else PLAINTEXT)
        self.name = "kafka" if self.bootstrap else f"kafka-{self.kafka_version}"
        self._process = self._client = self._found = self._pipeline = self._data = self._probed = None
        self._start_error: Exception | None = None  # why the broker ktc starts did not start (address())
        self.clock, self.clock_reason = HostClock(), "a broker ktc did not start keeps its own clock"
        self.clock_mode = clock or clocked.clock_mode(os.environ)  # for a broker ktc starts
        self.log_dir: LogDir | None = None  # the partitions on disk: a broker ktc started on a clock it sets
        self._planned = None  # planned_clock(): (clock, why the host's)
        self.namer = TopicNamer()  # one per implementation: every pipeline it makes draws fresh names
        self.probe_topic: str | None = None  # the probe's scratch topic while it exists (judge/probe.py)
        tuned(self, os.environ)
        if not self.bootstrap:
            versions.line_of(self.kafka_version)  # a version ktc has no line for is refused here, in one line
            extra_broker_config()  # and a malformed KTC_KAFKA_BROKER_CONFIG

    @property
    def version(self) -> str:
        return self.kafka_version if not self.bootstrap else f"external {self.bootstrap}"

    @property
    def external(self) -> bool:
        """Known only by its address: which broker software and version it runs, no request reveals."""
        return bool(self.bootstrap)

    @property
    def xdist_group(self) -> str:
        """One pytest-xdist worker per broker, so each starts once; a group per release (not one for every
        broker) lets the other worker take the next broker meanwhile (ktc/plugin/groups.py)."""
        return self.name

    @property
    def waits_at_start_s(self) -> float:
        """A broker ktc starts before 3.8 runs its first retention pass 30 s after it starts
        (LogManager.InitialTaskDelayMs; log.initial.task.delay.ms exists from 3.8): a history with a
        RetentionPass waits for it."""
        try:
            early = not self.bootstrap and versions.key(self.kafka_version) < versions.key("3.8.0")
        except versions.VersionError:  # not an Apache Kafka release: kfake, tansu
            return 0.0
        return 30.0 if early else 0.0

    # -- the target
    def start_process(self):
        """Start the broker ktc owns (a local KRaft broker here; subclasses start others)."""
        self._data = scratch.make()  # partitions are created ~6x faster in RAM
        data = {"log.dirs": self._data} if self._data is not None else {}
        extra = extra_broker_config()
        self.clock, self.clock_reason = self.planned_clock()
        clock = self.clock if isinstance(self.clock, ControlledClock) else None
        retention = {**RETENTION_ON_DEMAND, **NEVER_IDLE} if clock is not None else QUIET
        broker = self.new_broker({**retention, **data, **extra}, clock)
        if clock is not None:  # rolls need time to pass on the broker: only on a clock ktc moves
            self.log_dir = LogDir(Path(self._data) if self._data is not None else broker.tmpdir / "data")
        return broker

    def planned_clock(self):
        """The clock a broker ktc starts runs on, and why it is the host's: chosen once, before the start,
        because what can be judged (rolls, retention, the time index) depends on it."""
        if self._planned is None:
            self._planned = clocked.choose_clock(self.clock_mode, extra_broker_config())
        return self._planned

    def reads_log_dir(self) -> bool:
        """Whether segments, time indexes and retention are observed in the broker's log directory: on a
        broker ktc starts on a clock it sets, known before it starts (capabilities never depend on order)."""
        if self.bootstrap or not self.starts_with_log_dir:
            return False
        if self._process is not None:
            return self.log_dir is not None
        return isinstance(self.planned_clock()[0], ControlledClock)

    def new_broker(self, config: dict, clock: ControlledClock | None):
        """The broker process itself, started (a local JVM here; container.py runs it in a container)."""
        from ktc.kafka.processes.broker import LocalBroker
        return LocalBroker(self.kafka_version, config=config, clock=clock).start()

    def address(self) -> str:
        """Its broker's address, started first if ktc starts it.  A start that failed is not tried again: every
        later test meets the same error at once, not another wait (a broker that never answers: 60 s a test)."""
        if not self.bootstrap and self._process is None:
            if self._start_error is not None:
                raise self._start_error.with_traceback(None) from None
            keep_clean(self)  # its clock file and data dir go on SIGINT/SIGTERM too, not only its broker
            try:
                self._process = self.start_process()
            except Exception as error:
                self._start_error = error
                raise
        return self.bootstrap or self._process.bootstrap

    def client(self) -> wire.Client:
        if self._client is None:
            self._client = wire.Client(self.address(), security=self.security)
        return self._client

    def target(self) -> dict:
        """Where the results come from: travels with them in results.json, used by ``ktc replay``."""
        found = self._found if isinstance(self._found, Discovery) else None
        return {"implementation": self.name, "bootstrap": self.bootstrap or None, "external": self.external,
                "version": None if self.bootstrap else self.kafka_version,
                "started": None if self.bootstrap else self.started_what(), "profile": self._chosen_profile(found),
                "requested_profile": self.requested_profile, "evidence": self.profile_evidence(found),
                "security": self.security.describe(), "clock": self.clock_description(), "not_sent": NOT_SENT,
                "probed": self._probed.notes if self._probed is not None else []}

    def clock_description(self) -> dict:
        """How operations were judged: at the broker's clock ktc set (and how that was verified), or
        over [sent, received] and why."""
        if not self.clock.exact:
            return {"controlled": False, "reason": self.clock_reason}
        retention = self._pipeline.retention if self._pipeline is not None else None
        return {"controlled": True, **self.clock.verification.summary(), **(retention.summary() if retention else {})}

    def retarget(self, target: dict) -> None:
        """Point at the target a result was recorded on (``ktc replay``): its bootstrap, or the version
        ktc started, and the profile it was judged under when that was given."""
        if target.get("bootstrap"):
            self.bootstrap, self.name = target["bootstrap"], target.get("implementation", self.name)
        elif target.get("version"):
            self.kafka_version, self.bootstrap = target["version"], ""
        self.requested_profile = target.get("requested_profile") or self.requested_profile

    def started_what(self) -> str:
        return f"Apache Kafka {self.kafka_version} (local KRaft broker from Maven Central)"

    def describe(self) -> str:
        """The target in one line, for the end-of-run table."""
        return f"a broker at {self.bootstrap}" if self.bootstrap else self.started_what()

    def profile_evidence(self, found: Discovery | None) -> str | None:
        """Why it is judged under its profile, in a few words."""
        if self.profile_given:
            return "given with --profile"
        if self.release_profile():
            return f"release line {versions.line_of(self.kafka_version).line}"
        return found.evidence if found else None

    # -- what it is
    def discovery(self) -> Discovery:
        """Metadata, ApiVersions and a real broker's configs, asked once (a failure is kept, not retried)."""
        if self._found is None:
            try:
                self._found = discover(self.client())
            except Exception as error:
                self._found = error
        if isinstance(self._found, Exception):
            raise self._found
        return self._found

    def _chosen_profile(self, found: Discovery | None) -> str | None:
        return self.requested_profile or self.release_profile() or (found.profile if found else None)

    def release_profile(self) -> str | None:
        """For a broker ktc starts, its release line's profile (specs/kafka-versions.toml); else None."""
        return None if self.bootstrap else versions.profile_for(self.kafka_version)

    def profile(self) -> str:
        """The profile it is judged under: --profile when given, else its release line's when ktc started
        it, else what discovery observed."""
        if self.requested_profile or self.release_profile():
            return self.requested_profile or self.release_profile()
        found = self.discovery()
        if found.profile is None:
            raise unrecognised(found, self.address())
        return found.profile

    def override_profile(self, profile: str) -> None:
        """``--profile`` names the behaviour to judge this broker under: it wins over discovery."""
        self.requested_profile, self.profile_given = profile, True

    def capabilities(self) -> Capabilities:
        from ktc.specs.clauses import all_clauses
        ignored = self._pipeline.ignored_configs if self._pipeline is not None else set()
        profile = self.profile()
        caps = broker_capabilities(profile, self.reads_log_dir(), release=not self.bootstrap)
        caps = with_observations(caps, ignored, all_clauses())
        return with_probe(caps, lambda: self.probed().refused_targets) if self.probes else caps

    @property
    def probes(self) -> bool:
        """Whether its answers are probed before the run (judge/probe.py): any broker ktc did not start."""
        return bool(self.bootstrap)

    def probed(self) -> Probed:
        """What the broker can answer, asked once on a scratch topic (for a broker that is probed); the
        topic is deleted by the probe, or by ``close`` when a signal ends the run meanwhile."""
        if self._probed is None and not self.probes:
            self._probed = Probed()
        if self._probed is None:
            versions = self.client().supported_versions()
            advertised = {api: versions[key][1] for api, key in wire.API_KEYS.items() if key in versions}
            self.probe_topic = self.namer.names(History("kip", (CreateTopic("probe"),)))["probe"]
            keep_clean(self)
            connect = lambda: wire.Client(self.address(), timeout_s=10.0, security=self.security)  # noqa: E731
            self._probed = probe(connect, self.probe_topic, advertised)
            self.probe_topic = None
        return self._probed

    def limit_defaults(self) -> dict[str, int] | None:
        """The broker's default timestamp limits, or None when they cannot be read."""
        try:
            return numeric_limits(self.discovery().limits)
        except (DiscoveryError, wire.WireError):
            return None

    # -- running histories
    def pipeline(self, connections: int, depth: int) -> Pipeline:
        pipeline = Pipeline(address_of(self.address()), self.limit_defaults(), namer=self.namer,
                            ready_s=self.ready_s, connections=connections, depth=depth, security=self.security,
                            clock=self.clock, log_dir=self.log_dir, reconnect_s=self.reconnect_s)
        pipeline.probed = self.probed()
        pipeline.list_offsets_version = min(self.client().newest("ListOffsets", wire.LIST_OFFSETS_MAX),
                                            pipeline.probed.list_offsets_version)
        return pipeline

    def run(self, histories) -> list[JudgedTrace]:
        """Many histories at once on a few pipelined connections (judge/pipeline.py); a broker ktc started
        that died meanwhile is named, with its exit code and the end of its log."""
        try:
            return self.run_histories(histories)
        except TimedOut as error:
            raise TimedOut(f"{error}; {self.stall()}") from None
        except (wire.WireError, OSError) as error:  # the blocking client's socket errors are OSErrors
            code = self._process.exit_code() if hasattr(self._process, "exit_code") else None
            if code is None:
                raise
            raise BrokerError(f"the Kafka {self.kafka_version} broker ktc started exited with code {code} "
                              f"({error}):\n{self._process.log_tail()}") from None

    def stall(self) -> str:
        """What a run that did not return was waiting for: its unanswered requests, and the broker's clock."""
        waiting = self._pipeline.unanswered() if self._pipeline is not None else "before its first request"
        return f"{waiting}; the broker's clock: {self.clock.describe()}"

    def run_histories(self, histories) -> list[JudgedTrace]:
        if self._pipeline is None:
            self._pipeline = self.pipeline(self.connections, self.depth)
            keep_clean(self)
        if not self.clock.exact:
            return self._pipeline.run(histories, self.chunk)
        if self.clock.observe is None:
            self.clock.observe = clocked.Echo(self.client(), self.namer)
        if self.log_dir is not None and self._pipeline.retention is None:
            canary = Canary(self.client(), self.namer.names(History("kip", (CreateTopic("retention-canary"),)))[
                "retention-canary"])
            self._pipeline.retention = Retention(canary, self.log_dir, self.clock)
        return clocked.run(self._pipeline, histories, self.chunk)

    def run_sequential(self, histories) -> list[JudgedTrace]:
        """One history after another, one request at a time (the baseline of bench_broker.py)."""
        single = self.pipeline(1, 1)
        try:
            return single.run(histories, 1)
        finally:
            self.delete_topics(single.live_topics)
            single.close()

    # -- leaving nothing behind
    def delete_topics(self, names) -> None:
        """Delete topics this run created and did not delete yet, on a broker ktc did not start (best effort, a
        few seconds at most); a broker ktc started goes with its data."""
        names = sorted(names)
        if not names or not self.bootstrap:
            return
        try:
            with wire.Client(self.address(), timeout_s=5.0, security=self.security) as client:
                for start in range(0, len(names), 500):
                    client.delete_topics(names[start:start + 500], timeout_ms=5000)
        except (OSError, wire.WireError):
            pass  # the broker is gone: `ktc clean` removes what is left

    def stop(self) -> None:
        """For the signal handlers: the same as close()."""
        self.close()

    def close(self) -> None:
        lifecycle.release(self)
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            pipeline.close()
            self.delete_topics(pipeline.live_topics)
        if self.probe_topic:
            self.delete_topics([self.probe_topic])
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._process is not None:
            self._process.stop()
        scratch.remove(self._data)
        planned = self._planned[0] if self._planned else None  # the same clock, or one never used
        for clock in (self.clock, planned):
            if isinstance(clock, ControlledClock):
                clock.remove()


def keep_clean(impl: KafkaImplementation) -> None:
    """Close ``impl`` (deleting its topics) at exit, SIGINT and SIGTERM, like the brokers ktc starts."""
    lifecycle.keep_stopped(impl)


def kafka_3_9() -> KafkaImplementation:
    """Built-in ``kafka-3.9``: the newest 3.9.x Maven Central lists (``provision.newest``), started locally."""
    return KafkaImplementation(provision.newest("3.9"), bootstrap="")


def kafka_4() -> KafkaImplementation:
    """Built-in ``kafka-4``: the newest 4.x Maven Central lists, started locally."""
    return KafkaImplementation(provision.newest("4"), bootstrap="")
