"""The run context, passed explicitly: what the plugin tells the harness about the running test.

Tests receive their ``impl`` argument as an ``UnderTest``: the implementation plus the one
``RunContext`` of the session (the clauses the running test cites, the per-test statistics, the
histories a bulk implementation has not judged yet, the per-call timeout, and the contract
breaches already reported).  ``assert_conforms(impl, history)`` reads it from there; a caller that
passes a bare implementation gets a fresh context of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ktc.implementations.protocol import Implementation
from ktc.judge.stats import Recorder
from ktc.reference.types import History

DEFAULT_TIMEOUT_S = 300.0


@dataclass
class RunContext:
    timeout_s: float = DEFAULT_TIMEOUT_S
    cited: tuple[str, ...] = ()
    recorder: Recorder = field(default_factory=Recorder)
    bulk_active: bool = False
    pending: list[tuple[History, tuple[str, ...]]] = field(
        default_factory=list
    )  # (history, clauses) a bulk implementation will judge at once
    broken: dict[str, str] = field(default_factory=dict)  # implementation name -> the contract line already reported
    ran: set[str] = field(default_factory=set)  # implementations whose run() this process called

    def begin_test(self, cited: tuple[str, ...], bulk: bool) -> None:
        self.cited, self.recorder = cited, Recorder()
        self.bulk_active, self.pending = bulk, []


class UnderTest:
    """An implementation as a test sees it: its own attributes, the run context, and every optional
    capability of implementations/protocol.py (``OptionalCapabilities``) with its default when the
    implementation has none: the harness, the plugin and the suites call these, never getattr."""

    def __init__(self, implementation: Implementation, context: RunContext) -> None:
        self.implementation, self.context = implementation, context

    def __getattr__(self, name: str) -> Any:  # the implementation's own attributes, whatever they are
        return getattr(self.implementation, name)

    def __repr__(self) -> str:
        return f"UnderTest({self.implementation.name})"

    @property
    def bulk(self) -> bool:
        return bool(getattr(self.implementation, "bulk", False))

    @property
    def bulk_session(self) -> bool:
        return bool(self.bulk and getattr(self.implementation, "bulk_session", False))

    @property
    def xdist_group(self) -> str | None:
        return getattr(self.implementation, "xdist_group", None)

    @property
    def waits_at_start_s(self) -> float:
        return float(getattr(self.implementation, "waits_at_start_s", 0.0))

    @property
    def kip228_tables(self) -> object | None:
        tables: object | None = getattr(self.implementation, "kip228_tables", None)
        return tables

    def target(self) -> dict[str, object] | None:
        target = getattr(self.implementation, "target", None)
        found: dict[str, object] | None = target() if callable(target) else None
        return found

    def describe(self) -> str:
        """What the target is, in one line: the implementation's own words, else its name and version."""
        describe = getattr(self.implementation, "describe", None)
        return str(describe()) if callable(describe) else f"{self.implementation.name} {self.implementation.version}"

    def unavailable(self) -> str | None:
        """Why the target cannot run at all (a missing engine or toolchain), or None."""
        unavailable = getattr(self.implementation, "unavailable", None)
        why: str | None = unavailable() if callable(unavailable) else None
        return why

    def override_profile(self, profile: str) -> None:
        override = getattr(self.implementation, "override_profile", None)
        if callable(override):
            override(profile)

    def prepare(self) -> None:
        prepare = getattr(self.implementation, "prepare", None)
        if callable(prepare):
            prepare()

    def close(self) -> None:
        close = getattr(self.implementation, "close", None)
        if callable(close):
            close()


def context_of(impl: object) -> RunContext:
    return impl.context if isinstance(impl, UnderTest) else RunContext()


def under_test(impl: Implementation | UnderTest) -> UnderTest:
    """The implementation as a test sees it: itself when it is one, else a bare implementation with a fresh
    run context of its own (every optional capability then has its default)."""
    return impl if isinstance(impl, UnderTest) else UnderTest(impl, RunContext())


def bare(impl: Implementation | UnderTest) -> Implementation:
    """The implementation itself, for ``isinstance`` checks."""
    return impl.implementation if isinstance(impl, UnderTest) else impl
