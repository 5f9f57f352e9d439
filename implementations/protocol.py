"""The one protocol every implementation under test satisfies, and the plug-in every family registers.

An implementation takes whole histories (reference.types.History) and returns, for each, a
trace: one result per operation, in order.  Time is an argument: each history carries real time
and every broker's clock offset, so a deterministic implementation computes the same trace the
reference does, and a real broker is judged against the interval it was observed in.

``run`` receives many histories at once so that a bulk engine (Spark) can evaluate them in one
job; a simple implementation just loops.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from ktc.reference.types import History, Trace


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
    ``clock_offsets``: for brokers whose clocks are fixed while they run (the 3-node cluster), their
    offsets in ms; ``ktc hunt`` then draws ``strategies.leader_change_histories`` on them.
    ``real_time``: clauses judged only by the tests marked ``real_time`` (a broker by address with
    ``--real-time``: retention and rolls over its own retention passes); every other test reads their
    ``unsupported`` reason.
    """

    profiles: frozenset[str]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    cannot_run: Callable[[History], str | None] | None = None
    pinned_only: frozenset[str] = frozenset()
    releases: frozenset[str] = frozenset()
    clock_offsets: tuple[int, ...] | None = None
    real_time: frozenset[str] = frozenset()

    def reason_unsupported(self, clause_id: str, real_time_test: bool = False) -> str | None:
        """Why the clause is not judged on this implementation (by a ``real_time_test`` or any other), or None."""
        if real_time_test and clause_id in self.real_time:
            return None
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
    ``bulk_session = False``: with ``bulk``, True hands ``run`` every history of every test of a worker's
    session at once (one Spark job for the whole run; ktc/plugin/bulk.py).
    ``xdist_group = None``: a name keeps every test of the implementation on one pytest-xdist worker
    (one JVM, one broker connection pool).
    ``waits_at_start_s = 0``: seconds its runs spend waiting early on (Kafka before 3.8: the first retention
    pass 30 s after start); its group is handed out first, so another worker computes meanwhile.
    ``target() -> dict | None``: where the results come from (bootstrap, version, detected profile), written
    into results.json and used by ``ktc replay``; ``retarget(target)`` points at it again.
    ``override_profile(profile)``: an explicit ``--profile`` wins over what the implementation detected.
    ``describe() -> str``: what the target is, in one line, for the end-of-run table (default: name and
    version).  ``unavailable() -> str | None``: why the target cannot run at all here (no Docker engine,
    no Go toolchain), shown as its one "not run" row; default None.
    ``prepare()``: start what ``run`` will need (a JVM); a bulk implementation's is called in a background
    thread while the histories of its run are drawn.  What it raises is dropped: ``run`` meets it again.
    ``over_real_time()``: a broker by address given ``--real-time``: the session the real-time tier runs its
    histories on (implementations/kafka/realtime/session.py); default None.
    ``close()``: stop what it started, called once per worker: when its own ``xdist_group`` ends on that worker
    (in a background thread; not for a ``bulk_session`` one, judged at the session's end), else at the session's end.
    ``kip228_tables``: a module or object with KIP-228's table functions ``broker_records(sent, extended,
    broker)``, ``consumer_reads(ts, extended, consumer)`` and ``stored_as(ts, sentinel)``
    (reference/kip228.py's signatures); without it the consumer table is ``unsupported``.
    """

    bulk: bool
    bulk_session: bool
    xdist_group: str | None
    waits_at_start_s: float
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

    validity: Literal["unknown", "error"]
    op_index: int
    reason: str


class JudgedTrace(tuple):
    """A trace, and what the implementation says about how to judge it: what ``run`` may return in place of a
    plain tuple of results.  Every member is optional; its default is how a plain trace is judged.

    ``judged_as``: a real broker's trace judged over clock intervals: (the history placed at the interval
    starts, its results), (placed at the interval ends, its results); the harness judges both ends and calls
    a clause ``unknown`` where they disagree.  ``undecidable``: some answer cannot be pinned inside its
    interval (every verdict of the history is ``unknown``).  ``cut``: the history could not be run to its
    end (``Cut``); the results stop there.
    """

    judged_as: tuple[tuple[History, Trace], ...] = ()
    undecidable: bool = False
    cut: Cut | None = None

    @classmethod
    def of(cls, trace: Sequence) -> JudgedTrace:
        """The trace as the harness judges it: itself when it says how, else a plain trace (no interval, no cut)."""
        return trace if isinstance(trace, JudgedTrace) else cls(trace)


class SettingError(ValueError):
    """A family's option, ``--impl`` or subcommand argument that cannot be used as given: one line for the
    user (``ktc`` prints it and exits 2)."""


@dataclass(frozen=True)
class Option:
    """One option a family adds to ``ktc run`` and, with ``pytest``, to the pytest plugin.

    A target's declaration reads it from the option values by its ``name`` (``--kafka-version`` ->
    ``kafka_version``).  ``env``: its default, read from that environment variable by ``ktc run`` and by the
    pytest plugin (``implementations.values``; ktc/environment.py lists it).  ``check(value)``: run by
    ``ktc run`` before any work, in the registry's order; raises ``SettingError``, may return a line to
    print.  An option that is not a pytest option reaches the run through what ``check`` exports.  ``switch``: it
    takes no value (``--move-leaders``): given, its value is True.
    """

    flag: str
    help: str
    env: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False
    pytest: bool = True
    check: Callable[[object], str | None] | None = None
    switch: bool = False

    @property
    def arguments(self) -> dict:
        """How argparse and pytest take it: a switch stores True, a repeatable one appends, any other takes a value."""
        if self.switch:
            return {"action": "store_true"}
        if self.repeat:
            return {"action": "append", "default": [], "metavar": self.metavar}
        return {"metavar": self.metavar}

    @property
    def name(self) -> str:
        """Its attribute on ``ktc run``'s arguments (``--kafka-version`` -> ``kafka_version``)."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def dest(self) -> str:
        """Its pytest option's dest (``ktc_kafka_version``)."""
        return f"ktc_{self.name}"


@dataclass(frozen=True)
class Command:
    """A family's part of a ``ktc`` subcommand: ``arguments(parser)`` adds its options (several families may
    share a subcommand: ``ktc clean`` is the bootstrap's topics and the container's containers); ``run(args)``
    is its exit code, or None when the arguments ask nothing of this family; ``needs`` says what would."""

    name: str
    help: str
    arguments: Callable[[object], None]
    run: Callable[[object], int | None]
    needs: str = ""


def _never(*_) -> None:
    return None


def _no_fixes(*_) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Releases:
    """A family's part of ``ktc matrix``: one of its targets judged release after release, every release in one
    ``ktc run`` (``ktc matrix --client kafkajs --versions 1.12.0,1.13.0``: ``flag`` names the target, ``--versions``
    its releases).

    ``names()``: the targets it knows.  ``default(name)``: the releases judged when ``--versions`` is not given.
    ``check(name, release)``: prepares the release (a driver is installed now, not inside the timed run) or
    raises ``SettingError`` saying why it cannot be judged here.  ``spec(name, release)``: its ``--impl`` value.
    ``tests``: the folders of the suites that judge it.  ``fixed(name, older, newer, clause)``: the known fixes
    released after ``older`` and by ``newer`` that bear on ``clause``, each in a few words (where a cell changes).
    """

    flag: str
    help: str
    names: Callable[[], Sequence[str]]
    default: Callable[[str], Sequence[str]]
    check: Callable[[str, str], None]
    spec: Callable[[str, str], str]
    tests: tuple[str, ...] = ()
    fixed: Callable[[str, str, str, str], Sequence[str]] = _no_fixes


@runtime_checkable
class Declaration(Protocol):
    """A target declared as data, not as a subclass (a broker: implementations/kafka/target.py's
    ``BrokerTarget``).  ``implementation(values)`` is what judges it, built from the families' option values
    (``Option.name`` -> value) and the environment.  ``expectations``: the folder of its
    ``<name>[-<version>].toml`` files (ktc's ``expectations/`` for the built-ins; a third party's beside its
    declaration), or None.  ``--impl NAME`` finds one through a family's ``builtins``; ``--impl module:ATTR``
    names one directly."""

    name: str
    expectations: Path | None

    def implementation(self, values: Mapping | None = None) -> Implementation: ...


@dataclass(frozen=True)
class Plugin:
    """One implementation family, as ktc's generic core sees it (implementations/__init__.py registers it:
    ktc's own from implementations/families/, a third party's from the ``ktc.plugins`` entry point group).

    ``builtins``: its ``--impl`` names -> a ``Declaration`` (or ``module:attribute`` naming a declaration, an
    implementation or a zero-argument factory); ``pattern``/``from_pattern``: names it builds from a pattern
    (``kafka-X.Y.Z``: a declaration), with ``pattern_hint`` for the error that lists them; ``named``: how a
    user names its targets, where its builtins' names alone do not say it (``kafka --kafka-bootstrap HOST:PORT``).
    ``serves(spec, values)``: whether an ``--impl`` under these option values (``Option.name`` -> value)
    is this family's target (``kafka`` is the started broker's, or, with ``--kafka-bootstrap``, the
    external one's).  ``own_profile(spec, values, requested)``: before any test, checks the target and
    returns a line naming the profile it will be judged under (None when that is said at the run's end);
    raises ``SettingError``.  ``replay_env(target)``: the environment that re-creates a recorded target
    (``target()``) for the replay line.  ``summary(target)``: a line about the target at the run's end (a
    broker's clock), or None.  ``configure(specs, values)``: once per pytest session, before any
    implementation is built.  ``commands``: its ``ktc`` subcommands.  ``releases``: its part of ``ktc matrix``
    (``Releases``), or None.
    """

    family: str
    description: str
    builtins: Mapping[str, object] = field(default_factory=dict)
    options: tuple[Option, ...] = ()
    serves: Callable[[str, Mapping], bool] | None = None
    own_profile: Callable[[str, Mapping, str], str | None] = _never
    replay_env: Callable[[Mapping], Mapping[str, str]] = lambda target: {}
    summary: Callable[[Mapping], str | None] = _never
    configure: Callable[[Sequence[str], Mapping], None] = _never
    commands: tuple[Command, ...] = ()
    releases: Releases | None = None
    pattern: re.Pattern | None = None
    from_pattern: Callable[[re.Match], object] | None = None
    pattern_hint: str = ""
    named: str = ""

    def claims(self, spec: str, values: Mapping) -> bool:
        if self.serves is not None:
            return bool(self.serves(spec, values))
        return spec in self.builtins or bool(self.pattern and self.pattern.match(spec))
