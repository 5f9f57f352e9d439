"""The one broker adapter: any declared broker target (target.py), judged.

``BrokerAdapter`` holds a declaration and its settings, and composes what the declaration names: the
launcher that brings its broker up and down (launch.py and its kin), the executor of its histories (running.py,
cluster_run.py), its capabilities (capable.py) and its record (record.py).  Itself it knows the parts every
broker shares: its address, one client, discovery (what it is), the profile it is judged under, the probe of
what it answers (judge/probe.py), and cleanup: it deletes every topic it created when it closes, and on
SIGINT/SIGTERM.  No target subclasses it (suites/selftest/test_targets.py).
"""

from __future__ import annotations

from ktc.implementations.protocol import Capabilities, JudgedTrace
from ktc.kafka.client import wire
from ktc.kafka.discovery import Discovery, DiscoveryError, discover, numeric_limits, unrecognised
from ktc.kafka.processes import lifecycle
from ktc.kafka.processes.broker import BrokerError
from ktc.kafka.topics import TopicNamer
from ktc.reference.types import CreateTopic, History
from ktc.timeout import TimedOut

from . import capable, record
from .judge.probe import Probed, probe


class BrokerAdapter:
    """A declared broker target (``declaration``) with its ``settings``, as an implementation under test."""

    bulk = True  # the default; each adapter takes its declaration's (BrokerTarget.bulk)

    def __init__(self, declaration, settings):
        self.declaration, self.settings = declaration, settings  # target.py's BrokerTarget, its settings
        self.bulk = declaration.bulk  # the harness hands run() every history of a test at once
        self.launcher = declaration.launcher(settings)
        self.name = declaration.name.format(version=self.launcher.version)
        self.requested_profile, self.profile_given = None, False  # --profile (override_profile, retarget)
        self.namer = TopicNamer()  # one per implementation: every pipeline it makes draws fresh names
        self.probe_topic: str | None = None  # the probe's scratch topic while it exists (judge/probe.py)
        self._client = self._found = self._probed = self._executor = self._bootstrap = None
        self._start_error: Exception | None = None  # why its broker did not start (address())

    @property
    def version(self) -> str:
        return self.launcher.version

    @property
    def external(self) -> bool:
        """Known only by its address: which broker software and version it runs, no request reveals."""
        return self.launcher.external

    @property
    def xdist_group(self) -> str:
        """One pytest-xdist worker per broker, so each starts once; a group per release (not one for every
        broker) lets the other worker take the next broker meanwhile (ktc/plugin/groups.py)."""
        return self.declaration.xdist_group or self.name

    @property
    def waits_at_start_s(self) -> float:
        return self.launcher.waits_at_start_s

    @property
    def executor(self):
        """What runs its histories (the declaration's ``runs``), made on first use."""
        if self._executor is None:
            self._executor = self.declaration.executor(self)
        return self._executor

    # -- the target
    def address(self) -> str:
        """Its broker's address, started first if ktc starts it.  A start that failed is not tried again: every
        later test meets the same error at once, not another wait (a broker that never answers: 60 s a test)."""
        if self._bootstrap is None:
            if self._start_error is not None:
                raise self._start_error.with_traceback(None) from None
            keep_clean(self)  # its clock file and data dir go on SIGINT/SIGTERM too, not only its broker
            try:
                self._bootstrap = self.launcher.start()
            except Exception as error:
                self._start_error = error
                raise
        return self._bootstrap

    def client(self) -> wire.Client:
        if self._client is None:
            self._client = wire.Client(self.address(), security=self.launcher.security)
        return self._client

    def unavailable(self) -> str | None:
        """Why this target cannot run at all here (no binary, no Docker engine), or None."""
        return self.launcher.unavailable()

    def describe(self) -> str:
        """The target in one line, for the end-of-run table."""
        return self.launcher.describe()

    def target(self) -> dict:
        """Where the results come from: travels with them in results.json, used by ``ktc replay``."""
        return record.of(self)

    def retarget(self, recorded: dict) -> None:
        """Point at the target a result was recorded on (``ktc replay``): its broker by address, or the
        version ktc started, and the profile it was judged under when that was given."""
        if recorded.get("bootstrap"):
            from .launch import Address
            from .settings import ByAddress

            self.launcher = Address(ByAddress(recorded["bootstrap"], self.launcher.security))
            self.name = recorded.get("implementation", self.name)
        elif recorded.get("version"):
            self.launcher.retarget(recorded)
        self.requested_profile = recorded.get("requested_profile") or self.requested_profile

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

    def discovered(self) -> Discovery | None:
        """What discovery found, if it was asked and answered; never asks."""
        return self._found if isinstance(self._found, Discovery) else None

    def declared_profile(self) -> str | None:
        """The profile its declaration names (a release line's, a fixed one), or None: discovered.  A broker
        known only by its address is always discovered."""
        return None if self.external else self.declaration.profile.known(self.version)

    def chosen_profile(self, found: Discovery | None) -> str | None:
        return self.requested_profile or self.declared_profile() or (found.profile if found else None)

    def profile_evidence(self, found: Discovery | None) -> str | None:
        """Why it is judged under its profile, in a few words."""
        if self.profile_given:
            return "given with --profile"
        if self.declared_profile():
            return self.declaration.profile.evidence(self.version, found)
        return found.evidence if found else None

    def profile(self) -> str:
        """The profile it is judged under: --profile when given, else its declaration's, else what discovery
        observed."""
        known = self.requested_profile or self.declared_profile()
        if known:
            return known
        found = self.discovery()
        if found.profile is None:
            raise unrecognised(found, self.address())
        return found.profile

    def override_profile(self, profile: str) -> None:
        """``--profile`` names the behaviour to judge this broker under: it wins over discovery."""
        self.requested_profile, self.profile_given = profile, True

    def capabilities(self) -> Capabilities:
        return capable.capabilities(self)

    @property
    def probes(self) -> bool:
        """Whether its answers are probed before the run (judge/probe.py): as declared, and any broker ktc
        did not start."""
        return self.declaration.probes or self.external

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
            self._probed = probe(self.connect, self.probe_topic, advertised)
            self.probe_topic = None
        return self._probed

    def probed_notes(self) -> list[str]:
        """What the probe found, in words, once it ran; never probes."""
        return self._probed.notes if self._probed is not None else []

    def connect(self) -> wire.Client:
        """A fresh connection of its own (the probe asks each question on one)."""
        return wire.Client(self.address(), timeout_s=10.0, security=self.launcher.security)

    def limit_defaults(self) -> dict[str, int] | None:
        """The broker's default timestamp limits, or None when they cannot be read."""
        try:
            return numeric_limits(self.discovery().limits)
        except (DiscoveryError, wire.WireError):
            return None

    # -- running histories
    def run(self, histories) -> list[JudgedTrace]:
        """Many histories at once (the declaration's executor); a broker ktc started that died meanwhile is
        named, with its exit code and the end of its log."""
        try:
            return self.executor.run(histories)
        except TimedOut as error:
            raise TimedOut(f"{error}; {self.executor.stall()}") from None
        except (wire.WireError, OSError) as error:  # the blocking client's socket errors are OSErrors
            died = self.launcher.died()
            if died is None:
                raise
            raise BrokerError(
                f"the Kafka {self.version} broker ktc started exited with code {died[0]} ({error}):\n{died[1]}"
            ) from None

    # -- leaving nothing behind
    def delete_topics(self, names) -> None:
        """Delete topics this run created and did not delete yet, on a broker ktc did not start (best effort, a
        few seconds at most); a broker ktc started goes with its data."""
        names = sorted(names)
        if not names or not self.external:
            return
        try:
            with wire.Client(self.address(), timeout_s=5.0, security=self.launcher.security) as client:
                for start in range(0, len(names), 500):
                    client.delete_topics(names[start : start + 500], timeout_ms=5000)
        except (OSError, wire.WireError):
            pass  # the broker is gone: `ktc clean` removes what is left

    def stop(self) -> None:
        """For the signal handlers: the same as close()."""
        self.close()

    def close(self) -> None:
        lifecycle.release(self)
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.close()
        if self.probe_topic:
            self.delete_topics([self.probe_topic])
        if self._client is not None:
            self._client.close()
            self._client = None
        self.launcher.stop()


def keep_clean(impl: BrokerAdapter) -> None:
    """Close ``impl`` (deleting its topics) at exit, SIGINT and SIGTERM, like the brokers ktc starts."""
    lifecycle.keep_stopped(impl)
