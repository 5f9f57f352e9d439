"""The one protocol every implementation under test satisfies.

An implementation takes whole histories (reference.types.History) and returns, for each, a
trace: one result per operation, in order.  Time is an argument: each history carries real time
and every broker's clock offset, so a deterministic implementation computes the same trace the
reference does, and a real broker is judged against the interval it was observed in.

``run`` receives many histories at once so that a bulk engine (Spark) can evaluate them in one
job; a simple implementation just loops.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from reference.types import History, Trace


@dataclass(frozen=True)
class Capabilities:
    """What an implementation can be judged on.

    ``profiles``: the profiles it implements.  ``unsupported``: clause id (or a ``KIP-xxx``
    prefix) -> reason; those clauses are reported ``unsupported``, never ``fail``.
    ``cannot_run``: for an implementation that runs only some histories (the 3-node cluster runs
    only those on its own clocks), history -> why it cannot run it, or None; a test meeting such a
    history is reported ``unsupported`` with that reason.  Default: every history runs.
    ``pinned_only``: profiles under which only pinned tests (``@pytest.mark.pinned``: fixed
    inputs, no generation) judge it.  A broker is judged under ``kip`` that way: its known
    departures from the KIPs then fail the same rows on every run, as strict expectations need,
    instead of leaking into whichever clause a generated example happens to touch.
    ``releases``: profiles under which Kafka's own changes (suites/pinned/test_kafka_changes.py,
    ``@pytest.mark.kafka_change``) judge it although it does not implement them: an Apache Kafka
    release is held to each change's profile, so the change shows red exactly where it did not hold.
    """

    profiles: frozenset[str]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    cannot_run: Callable[[History], str | None] | None = None
    pinned_only: frozenset[str] = frozenset()
    releases: frozenset[str] = frozenset()

    def reason_unsupported(self, clause_id: str) -> str | None:
        for key, reason in self.unsupported.items():
            if clause_id == key or clause_id.startswith(key + "."):
                return reason
        return None


@runtime_checkable
class Implementation(Protocol):
    name: str
    version: str

    def capabilities(self) -> Capabilities:
        """Profiles and clauses this implementation declares it supports."""
        ...

    def run(self, histories: Sequence[History]) -> Sequence[Trace]:
        """One trace per history, each with one result per operation."""
        ...



class OptionalCapabilities(Protocol):
    """What an implementation may add; ktc/judge/context.py's ``UnderTest`` supplies each default, so
    the harness never guesses with getattr.

    ``bulk = False``: True hands ``run`` every history of a test at once (Spark, brokers).
    ``xdist_group = None``: a name keeps every test of the implementation on one pytest-xdist worker
    (one JVM, one broker connection pool).
    ``target() -> dict | None``: where the results come from (bootstrap, version, detected profile), written
    into results.json and used by ``ktc replay``; ``retarget(target)`` points at it again.
    ``override_profile(profile)``: an explicit ``--profile`` wins over what the implementation detected.
    ``describe() -> str``: what the target is, in one line, for the end-of-run table (default: name and
    version).  ``unavailable() -> str | None``: why the target cannot run at all here (no Docker engine,
    no Go toolchain), shown as its one "not run" row; default None.
    ``close()``: stop what it started (called once per worker at the end of the session).
    ``kip228_tables``: a module or object with KIP-228's table functions ``broker_records(sent, extended,
    broker)``, ``consumer_reads(ts, extended, consumer)`` and ``stored_as(ts, sentinel)``
    (reference/kip228.py's signatures); without it the consumer table is ``unsupported``.
    """

    bulk: bool
    xdist_group: str | None
    kip228_tables: object | None

    def target(self) -> dict | None: ...

    def retarget(self, target: dict) -> None: ...

    def override_profile(self, profile: str) -> None: ...

    def describe(self) -> str: ...

    def unavailable(self) -> str | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Cut:
    """Why a history stopped before its end, and what that makes its verdicts.

    ``unknown``: a request that may or may not have reached the broker was lost with its connection
    (a produce may or may not have been appended), so nothing after it can be judged.  ``error``: the
    broker answered something ktc cannot read (a partition it did not report, a malformed response).
    """

    validity: str   # "unknown" | "error"
    op_index: int
    reason: str


class JudgedTrace(tuple):
    """A trace plus how to judge it: (history at interval starts, at interval ends, aligned trace);
    ``cut`` when the history could not be run to its end."""

    judged_as: tuple = ()
    undecidable: bool = False
    cut: Cut | None = None

