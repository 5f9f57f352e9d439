"""The one protocol every implementation under test satisfies.

An implementation takes whole histories (reference.types.History) and returns, for each, a
trace: one result per operation, in order.  Time is an argument: each history carries real time
and every broker's clock offset, so a deterministic implementation computes the same trace the
reference does, and a real broker is judged against the interval it was observed in.

``run`` receives many histories at once so that a bulk engine (Spark) can evaluate them in one
job; a simple implementation just loops.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Protocol, Sequence, runtime_checkable

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
    """

    profiles: frozenset[str]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    cannot_run: Optional[Callable[[History], Optional[str]]] = None
    pinned_only: frozenset[str] = frozenset()

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

    # Optional, looked up with getattr: ``kip228_tables``, a module or object with KIP-228's table
    # functions ``broker_records(sent, extended, broker)``, ``consumer_reads(ts, extended, consumer)`` and
    # ``stored_as(ts, sentinel)`` (reference/kip228.py's signatures): what a client or broker of this
    # implementation records and reads.  Without it the consumer table is ``unsupported``.
