"""What brings a declared target's broker up and down (target.py's ``start``): one launcher per implementation,
what the adapter (adapter.py) asks about the process side of a target (``Launcher``), and nothing else.

Here: ``LocalKafka`` (a KRaft broker of a Maven Central release on loopback, on a clock ktc sets), ``Address``
(any broker by address), ``Kfake`` (processes/kfake.py) and ``Tansu`` (processes/tansu.py).  Elsewhere:
containers/launch.py (the local broker's JVM in a container) and cluster_run.py (three nodes on skewed clocks).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Protocol

from ktc.kafka.client.security import PLAINTEXT, Security
from ktc.kafka.processes import scratch
from ktc.kafka.processes.clock import ControlledClock, HostClock
from ktc.specs import versions

from .judge import clocked
from .judge.logdir import LogDir
from .judge.retention import BROKER_CONFIG as RETENTION_ON_DEMAND
from .settings import ByAddress, Started
from .settings import Kfake as KfakeSettings
from .settings import Tansu as TansuSettings

NOT_STARTED = "a broker ktc did not start keeps its own clock"


class Launcher(Protocol):
    """``external``: known only by its address (no request reveals what it runs).  ``start()`` is called once
    (the adapter remembers a failure) and returns the broker's address; ``stop()`` is idempotent and safe from
    a signal handler; ``died()``: its exit code and the end of its log once it died, else None.  ``clock`` and
    ``clock_reason``: the clock its broker runs on (processes/clock.py) and why it is the host's; ``log_dir``
    and ``reads_log_dir()``: segments and time indexes read from its log directory (judge/logdir.py), known
    before it starts.  ``unavailable()``: why it cannot run here at all; ``describe()``: one line;
    ``started()``: what ktc started, for the target record (None: nothing); ``record()``: more fields for that
    record; ``retarget(record)``: the release or build a recorded result names.  ``cannot_restart``: why ktc
    cannot stop its broker uncleanly and start it again (None: ``restart()`` does that); ``restart_forgets``:
    why the restarted broker comes back without the data it had (None, or not set: it keeps it, and a Crash
    waits until every partition of the history answers again)."""

    version: str
    external: bool
    cannot_restart: str | None
    security: Security
    waits_at_start_s: float
    clock: ControlledClock | HostClock
    clock_reason: str | None
    log_dir: LogDir | None
    broker: object | None

    def start(self) -> str: ...

    def stop(self) -> None: ...

    def died(self) -> tuple[int, str] | None: ...

    def reads_log_dir(self) -> bool: ...

    def unavailable(self) -> str | None: ...

    def describe(self) -> str: ...

    def started(self) -> str | None: ...

    def record(self) -> dict: ...

    def retarget(self, record: dict) -> None: ...

    def restart(self) -> None: ...


# The model deletes segments only on an explicit RetentionPass; the broker must not do it behind our back.
# (On a clock ktc sets, the retention thread runs often and topics are held: judge/retention.py.)
QUIET = {"log.retention.check.interval.ms": 3_600_000, "log.initial.task.delay.ms": 3_600_000}
# On a clock ktc holds still, a connection the broker closes for idleness (measured in real time) is never
# reopened: NetworkClient's reconnect backoff waits for the wall clock to move.  Seen in CI: the broker's
# forwarding channel to its controller went idle 10 minutes, was closed, and the next forwarded request
# (IncrementalAlterConfigs of a retention pass) waited forever at a frozen instant.  So nothing idles out.
NEVER_IDLE = {"connections.max.idle.ms": 7 * 86_400_000}


# A KRaft node killed uncleanly comes back as a new incarnation of the same broker id: its controller refuses the
# registration (DUPLICATE_BROKER_REGISTRATION) until the old incarnation's session expires.  Measured on 4.4.0 on a
# loaded machine: with the default session (9 s, heartbeats every 2 s) still refused 60 s after the restart; with
# these, registered at once.  Set when a broker is restarted after a crash, so no other run's broker carries them.
RESTART_SESSION = {"broker.session.timeout.ms": 2000, "broker.heartbeat.interval.ms": 500}
# A restarted JVM starts again and recovers its log before it answers: on a machine at load 40-60 on two cores it
# took over 60 s (the first start's bound) twice in a dozen restarts, so a restart is given longer.
RESTART_READY_S = 180.0


def local_jvm(version: str, config: dict, clock: ControlledClock | None):
    """The broker process of ``LocalKafka``: a KRaft JVM on loopback, started."""
    from ktc.kafka.processes.broker import LocalBroker

    return LocalBroker(version, config=config, clock=clock).start()


class LocalKafka:
    """An Apache Kafka release from Maven Central, started on loopback, on a clock ktc sets (unless
    --kafka-clock host, no C compiler, or a broker config a frozen clock cannot live with)."""

    external = False
    security = PLAINTEXT
    cannot_restart = None  # SIGKILL and a new JVM on the same log directory (LocalBroker.relaunch)

    def __init__(self, settings: Started, new_broker=local_jvm):
        self.settings, self.version, self.new_broker = settings, settings.version, new_broker
        self.clock, self.clock_reason = HostClock(), NOT_STARTED
        self.broker = self.data = self.log_dir = self._planned = None

    @property
    def waits_at_start_s(self) -> float:
        """Before 3.8 a broker runs its first retention pass 30 s after it starts
        (LogManager.InitialTaskDelayMs; log.initial.task.delay.ms exists from 3.8): a history with a
        RetentionPass waits for it."""
        return 30.0 if versions.key(self.version) < versions.key("3.8.0") else 0.0

    def planned(self):
        """The clock its broker runs on, and why it is the host's: chosen once, before the start, because
        what can be judged (rolls, retention, the time index) depends on it."""
        if self._planned is None:
            self._planned = clocked.choose_clock(self.settings.clock, self.settings.broker_config)
        return self._planned

    def reads_log_dir(self) -> bool:
        """Known before it starts (capabilities never depend on order): on a clock ktc sets."""
        if self.broker is not None:
            return self.log_dir is not None
        return isinstance(self.planned()[0], ControlledClock)

    def unavailable(self) -> str | None:
        return None

    def start(self) -> str:
        self.data = scratch.make()  # partitions are created ~6x faster in RAM
        self.clock, self.clock_reason = self.planned()
        clock = self.clock if isinstance(self.clock, ControlledClock) else None
        retention = {**RETENTION_ON_DEMAND, **NEVER_IDLE} if clock is not None else QUIET
        data = {"log.dirs": self.data} if self.data is not None else {}
        self.broker = self.new_broker(self.version, {**retention, **data, **self.settings.broker_config}, clock)
        if clock is not None:  # rolls need time to pass on the broker: only on a clock ktc moves
            self.log_dir = LogDir(Path(self.data) if self.data is not None else self.broker.tmpdir / "data")
        return self.broker.bootstrap

    def started(self) -> str:
        return f"Apache Kafka {self.version} (local KRaft broker from Maven Central)"

    def describe(self) -> str:
        return self.started()

    def record(self) -> dict:
        return {}

    def retarget(self, record: dict) -> None:
        self.version = record.get("version") or self.version

    def died(self) -> tuple[int, str] | None:
        """(exit code, the end of its log) of a broker that died, else None."""
        code = self.broker.exit_code() if self.broker is not None else None
        return None if code is None else (code, self.broker.log_tail())

    def restart(self) -> None:
        """SIGKILL the JVM's process group and start it again on the same log directory, ports and clock (with a
        short KRaft session, ``RESTART_SESSION``, and ``RESTART_READY_S`` to answer)."""
        self.broker.config.update(RESTART_SESSION)
        self.broker.ready_timeout_s = max(self.broker.ready_timeout_s, RESTART_READY_S)
        self.broker.relaunch()

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        scratch.remove(self.data)
        planned = self._planned[0] if self._planned else None  # the same clock, or one never used
        for clock in (self.clock, planned):
            if isinstance(clock, ControlledClock):
                clock.remove()


class Address:
    """Any broker by its address: ktc starts nothing and stops nothing."""

    external = True
    waits_at_start_s = 0.0
    broker = log_dir = None
    cannot_restart = "a broker ktc did not start is not ktc's to kill and start again"

    def __init__(self, settings: ByAddress):
        self.bootstrap, self.security = settings.bootstrap, settings.security or PLAINTEXT
        self.clock, self.clock_reason = HostClock(), NOT_STARTED

    @property
    def version(self) -> str:
        return f"external {self.bootstrap}"

    def reads_log_dir(self) -> bool:
        return False

    def unavailable(self) -> str | None:
        return None

    def start(self) -> str:
        return self.bootstrap

    def started(self) -> None:
        return None

    def describe(self) -> str:
        return f"a broker at {self.bootstrap}"

    def record(self) -> dict:
        return {}

    def retarget(self, record: dict) -> None:
        self.bootstrap = record.get("bootstrap") or self.bootstrap

    def died(self) -> None:
        return None

    def restart(self) -> None:
        raise NotImplementedError(self.cannot_restart)

    def stop(self) -> None:
        return None


class Kfake:
    """franz-go's kfake, built with Go into ktc's cache and started on loopback (processes/kfake.py), its state
    kept in a scratch directory (kfake.DataDir) so that a crash and restart finds it again."""

    external, security, waits_at_start_s, log_dir = False, PLAINTEXT, 0.0, None  # kfake's own files, not Kafka's
    # SIGKILL and a new process on the same port and data directory (KfakeBroker.relaunch).  No kfake.SyncWrites:
    # a killed process leaves its writes in the page cache (and the scratch directory is in RAM), so an fsync
    # per batch would only guard against a machine crash, which ktc does not stage.
    cannot_restart = None

    def __init__(self, settings: KfakeSettings):
        self.version, self.how = settings.version, settings.how
        self.clock, self.clock_reason = HostClock(), NOT_STARTED
        self.broker = self.data = None

    def reads_log_dir(self) -> bool:
        return False

    def unavailable(self) -> str | None:
        return None

    def start(self) -> str:
        from .processes.kfake import KfakeBroker

        self.data = scratch.make() or Path(tempfile.mkdtemp(prefix="ktc-kfake-data-"))
        self.broker = KfakeBroker(version=self.version, data_dir=self.data).start()
        return self.broker.bootstrap

    def started(self) -> str:
        return f"franz-go kfake {self.version} (built from implementations/kafka/processes/kfake_go with go build)"

    def describe(self) -> str:
        return f"franz-go kfake {self.version} ({self.how})"

    def record(self) -> dict:
        """The kfake build it ran (``ktc replay`` rebuilds that one)."""
        return {"kfake_version": self.version}

    def retarget(self, record: dict) -> None:
        self.version = record.get("kfake_version") or record.get("version") or self.version

    def died(self) -> None:
        return None

    def restart(self) -> None:
        """SIGKILL kfake's process group and start it again on the same port and data directory."""
        self.broker.relaunch()

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        scratch.remove(self.data)


class Tansu:
    """tansu, the binary found when the launcher is made (processes/tansu.py), started on loopback with its
    memory storage; without one, the target is unavailable and says why."""

    external, security, waits_at_start_s, log_dir = False, PLAINTEXT, 0.0, None
    cannot_restart = None  # SIGKILL and a new process on the same port and storage URL (TansuBroker.relaunch)
    # memory:// is object_store's InMemory inside the process (tansu-storage/src/lib.rs:2401-2408 @510f3e2)
    restart_forgets = "ktc starts tansu with its memory storage (memory://), which keeps nothing across a restart"

    def __init__(self, settings: TansuSettings):
        from .processes.tansu import located

        self.binary, self.version, self.source, self.problem = located(settings.binary)
        self.clock, self.clock_reason = HostClock(), NOT_STARTED
        self.broker = None

    def reads_log_dir(self) -> bool:
        return False

    def unavailable(self) -> str | None:
        return self.problem

    def start(self) -> str:
        from .processes.tansu import TansuBroker, TansuError

        if self.binary is None:
            raise TansuError(self.problem)
        self.broker = TansuBroker(self.binary).start()
        return self.broker.bootstrap

    def started(self) -> str:
        return f"tansu {self.version} ({self.source}: {self.binary}), memory storage"

    def describe(self) -> str:
        return f"tansu {self.version}"

    def record(self) -> dict:
        return {}

    def retarget(self, record: dict) -> None:
        return None  # the binary found is the one it runs

    def died(self) -> tuple[int, str] | None:
        code = self.broker.exit_code() if self.broker is not None else None
        return None if code is None else (code, self.broker.log_tail())

    def restart(self) -> None:
        """SIGKILL tansu's process group and start it again on the same port, with a memory storage as empty
        as the first (``restart_forgets``)."""
        self.broker.relaunch()

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
