"""The histories of a single broker, run by the one executor (judge/pipeline.py): the default ``runs`` of a
declared target (target.py).  An executor is what the adapter (adapter.py) asks to run histories
(``Executor``); cluster_run.py's ``LeaderChanges`` is the other one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from ktc.implementations.protocol import Capabilities, JudgedTrace
from ktc.kafka.client import wire
from ktc.reference.types import CreateTopic, History

from .judge import clocked
from .judge.pipeline import Pipeline
from .judge.restart import Restart, crashes, declining_crashes
from .judge.retention import Canary, Retention
from .settings import Started


class Executor(Protocol):
    """``run(histories)``: one trace per history; ``stall()``: what a run that did not return waits for;
    ``close()``: deletes what it created; ``ignored_configs()``: topic configs the broker accepted but did not
    apply; ``clock_summary()``: its part of the record's clock; ``shape(caps)``: what it adds to the target's
    capabilities (the cluster: the histories it can run)."""

    def run(self, histories) -> list[JudgedTrace]: ...

    def stall(self) -> str: ...

    def close(self) -> None: ...

    def ignored_configs(self) -> set[str]: ...

    def clock_summary(self) -> dict: ...

    def shape(self, caps: Capabilities) -> Capabilities: ...


def address_of(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    return host or "127.0.0.1", int(port)


class PipelineRuns:
    """Many histories at once on a few pipelined connections to the adapter's broker; on a clock ktc sets,
    grouped by how they move it (judge/clocked.py), with retention passes run by the broker itself."""

    def __init__(self, adapter):
        self.adapter, self.tuning = adapter, adapter.settings.tuning
        self.pipeline: Pipeline | None = None

    @property
    def launcher(self):
        return self.adapter.launcher  # as it is now: ``ktc replay`` may point the adapter elsewhere first

    def new_pipeline(self, connections: int, depth: int) -> Pipeline:
        adapter, tuning = self.adapter, self.tuning
        pipeline = Pipeline(
            address_of(adapter.address()),
            adapter.limit_defaults(),
            namer=adapter.namer,
            ready_s=tuning.ready_s,
            connections=connections,
            depth=depth,
            security=self.launcher.security,
            clock=self.launcher.clock,
            log_dir=self.launcher.log_dir,
            reconnect_s=tuning.reconnect_s,
        )
        pipeline.probed = adapter.probed()
        # Apache Kafka answers each partition of a record request on its own: one request for many (combine.py)
        pipeline.combining = isinstance(adapter.settings, Started)
        pipeline.list_offsets_version = min(
            adapter.client().newest("ListOffsets", wire.LIST_OFFSETS_MAX), pipeline.probed.list_offsets_version
        )
        return pipeline

    def run(self, histories) -> list[JudgedTrace]:
        if self.pipeline is None:
            self.pipeline = self.new_pipeline(self.tuning.connections, self.tuning.depth)
        if self.launcher.cannot_restart is None and self.pipeline.restart is None:
            relaunch = lambda: self.launcher.restart()  # noqa: E731  (the launcher as it is then)
            forgets = getattr(self.launcher, "restart_forgets", None)  # a launcher that does not say keeps its data
            self.pipeline.restart = Restart(
                relaunch, self.adapter.address(), self.launcher.security, self.launcher.clock, forgets=forgets
            )
        clock = self.launcher.clock
        if not clock.exact:
            return self.on_host_clock(histories)
        if clock.observe is None:
            clock.observe = clocked.Echo(self.adapter.client(), self.adapter.namer)
        if self.launcher.log_dir is not None and self.pipeline.retention is None:
            self.pipeline.retention = Retention(self.canary(), self.launcher.log_dir, clock)
        return clocked.run(self.pipeline, histories, self.tuning.chunk)

    def on_host_clock(self, histories) -> list[JudgedTrace]:
        """Together, but each history that crashes the broker alone (its restart breaks every connection)."""
        alone = [i for i, h in enumerate(histories) if crashes(h)]
        together = [i for i in range(len(histories)) if i not in alone]
        traces = dict(
            zip(together, self.pipeline.run([histories[i] for i in together], self.tuning.chunk) if together else ())
        )
        traces.update((i, self.pipeline.run([histories[i]], 1)[0]) for i in alone)
        return [traces[i] for i in range(len(histories))]

    def canary(self) -> Canary:
        """The topic whose segments show that the broker's retention thread ran (judge/retention.py)."""
        names = self.adapter.namer.names(History("kip", (CreateTopic("retention-canary"),)))
        return Canary(self.adapter.client(), names["retention-canary"])

    def run_sequential(self, histories) -> list[JudgedTrace]:
        """One history after another, one request at a time (the baseline of bench_broker.py)."""
        single = self.new_pipeline(1, 1)
        try:
            return single.run(histories, 1)
        finally:
            self.adapter.delete_topics(single.live_topics)
            single.close()

    def stall(self) -> str:
        """What a run that did not return was waiting for: its unanswered requests, and the broker's clock."""
        waiting = self.pipeline.unanswered() if self.pipeline is not None else "before its first request"
        session = self.pipeline.session if self.pipeline is not None else None
        standing = f"; {session.describe()}" if session is not None else ""
        return f"{waiting}{standing}; the broker's clock: {self.launcher.clock.describe()}"

    def ignored_configs(self) -> set[str]:
        return self.pipeline.ignored_configs if self.pipeline is not None else set()

    def clock_summary(self) -> dict:
        retention = self.pipeline.retention if self.pipeline is not None else None
        return retention.summary() if retention else {}

    def shape(self, caps: Capabilities) -> Capabilities:
        """Histories with a Crash declined, with the reason, on a broker ktc cannot restart."""
        why = self.launcher.cannot_restart
        return caps if why is None else replace(caps, cannot_run=declining_crashes(why, caps.cannot_run))

    def close(self) -> None:
        pipeline, self.pipeline = self.pipeline, None
        if pipeline is not None:
            pipeline.close()
            self.adapter.delete_topics(pipeline.live_topics)
