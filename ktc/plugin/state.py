"""The state of one ktc pytest session, held in ``config.stash[STATE]``: the implementations under
test (each an ``UnderTest`` sharing the session's ``RunContext``), the profiles, the clause filter,
the expectations, and what the controller collects from every report."""

from __future__ import annotations

import json

import pytest

from ktc import implementations
from ktc.implementations.protocol import Capabilities
from ktc.judge.context import RunContext, UnderTest
from ktc.plugin import expected
from ktc.plugin.headline import headline
from ktc.plugin.progress import target_of
from ktc.reports.schema import Row
from ktc.specs.profiles import ProfileError
from ktc.specs.profiles import get as get_profile
from ktc.specs.profiles import names as profile_names

ROWS_KEY = "ktc-rows"
CONTRACT_KEY = "ktc-contract"
TARGET_KEY = "ktc-target"
STATE = pytest.StashKey["KtcState"]()
OWN, ALL = "own", "all"  # --profile: each implementation under its own profiles (default) / under every one
CITED = pytest.StashKey[tuple]()


class KtcState:
    def __init__(self, config: pytest.Config):
        specs = split(config.getoption("impl") or ["reference"])
        self.context = RunContext(timeout_s=config.getoption("ktc_impl_timeout"))
        self.values = family_values(config)  # each family's options: Option.name -> value
        implementations.configure(specs, self.values)
        self.impls = [UnderTest(load_impl(spec, self.values), self.context) for spec in specs]
        self.impl_specs = {impl.name: spec for impl, spec in zip(self.impls, specs)}
        option = config.getoption("ktc_profile")
        self.own = option == OWN  # each implementation under its own profiles only
        self.profiles = parse_profiles(option)
        override_profiles(self.impls, option, self.profiles)
        self.given_profiles = None if option in (OWN, ALL) else self.profiles
        self.clause_filter = tuple(split(config.getoption("ktc_clause") or []))
        self.collected = Collected([i.name for i in self.impls])
        self.declared: dict[str, Capabilities | None] = {}  # implementation -> its capabilities, asked at collection
        self.shipped_targets: dict[str, tuple[bool, dict]] = {}  # implementation -> (ran, record) last shipped
        self.seed = config.getoption("hypothesis_seed", None)
        self.expected = expected.safe_index(
            self.impls,
            [*(config.getoption("ktc_expectations") or []), *declared_expectations(specs, self.impls, self.values)],
        )
        self.closed: set[str] = set()  # implementations closed on this worker (hooks.close_one)
        self.closing: list = []  # threads closing an implementation whose group ended (hooks.py)

    def repeats_root(self, impl, profile: str, ids) -> bool:
        """A profile that extends another, on clauses its own switches cannot change, for an implementation
        that also implements the root: that run, or row, would repeat the root's (``differs_on``)."""
        derived = get_profile(profile)
        if impl is None or not derived.repeats_root_on(ids):
            return False
        caps = self.capabilities(impl)
        return caps is not None and derived.lineage[-1] in caps.profiles

    def capabilities(self, impl) -> Capabilities | None:
        """The implementation's capabilities, asked once per session at collection; None for one that
        cannot say yet (a broker that does not answer): it runs everything, and its tests say why."""
        if impl.name not in self.declared:
            try:
                self.declared[impl.name] = impl.capabilities()
            except Exception:
                self.declared[impl.name] = None
        return self.declared[impl.name]

    def judges(self, impl, profile: str | None, item=None) -> bool:
        """Whether ``impl`` is judged under ``profile`` in this session.  Under ``--profile own`` (the
        default) only where its capabilities say so: the profiles it implements (on pinned inputs
        only where it declares ``pinned_only``), and for one of Kafka's own changes the releases'
        profiles it is held to; everything else would be a blanket 'does not implement' row."""
        caps = self.capabilities(impl) if self.own and impl is not None and profile is not None else None
        if caps is None:
            return True
        if item is not None and item.get_closest_marker("kafka_change") is not None and profile in caps.releases:
            return True
        if profile in caps.pinned_only:
            return item is None or item.get_closest_marker("pinned") is not None
        return profile in caps.profiles

    def held_to_release_only(self, impl, profile: str, item) -> bool:
        """A test of one of Kafka's own changes, run on ``impl`` under a release profile it does not
        implement (``Capabilities.releases``)."""
        caps = self.capabilities(impl) if impl is not None else None
        return (
            caps is not None
            and item.get_closest_marker("kafka_change") is not None
            and profile not in caps.profiles
            and profile in caps.releases
        )


def uncollected_path(nodeid: str, said: list[str]) -> str:
    """The file a failed collection names: its node id, or (a path outside the rootdir fails as the
    session) the module pytest's message quotes."""
    quoted = [line.split("'")[1] for line in said if "test module '" in line]
    return nodeid or (quoted[0] if quoted else "the test session")


def split(values) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def family_values(config: pytest.Config) -> dict:
    """The implementation families' options as given to pytest, else their defaults from the environment
    (``implementations.values``), by ``Option.name``."""
    return implementations.values(
        {option.name: config.getoption(option.dest) for option in implementations.options() if option.pytest}
    )


def declared_expectations(specs, impls, values: dict) -> list[str]:
    """The expectations each target's declaration keeps beside it (a third party's), read as if given."""
    return [
        str(path)
        for spec, impl in zip(specs, impls)
        for path in implementations.expectation_files(spec, impl.name, impl.version, values)
    ]


def load_impl(spec: str, values: dict):
    try:
        return implementations.load(spec, values)
    except implementations.ImplementationError as error:
        raise pytest.UsageError(str(error)) from None


def override_profiles(impls, option: str, profiles: tuple[str, ...]) -> None:
    """An explicit --profile names the behaviour a broker is judged under: it wins over detection."""
    chosen = [p for p in profiles if p != "kip"]
    if option not in (ALL, OWN) and chosen:
        for impl in impls:
            impl.override_profile(chosen[0])


def parse_profiles(value: str) -> tuple[str, ...]:
    """The profiles tests are parametrized with: every one for ``all`` and ``own`` (``own`` then keeps,
    per implementation, the ones it is judged under: ``KtcState.judges``), else the names given."""
    if value in (ALL, OWN):
        return profile_names()
    try:
        return tuple(get_profile(name).name for name in split([value]))
    except ProfileError as error:
        raise pytest.UsageError(str(error)) from None


class Collected:
    """What the controller gathers from every test report (workers ship it in user_properties)."""

    def __init__(self, names: list[str]) -> None:
        self.rows: list[Row] = []  # every test's rows, as the workers shipped them
        self.targets: dict[str, dict] = {}
        self.ran: set[str] = set()  # targets whose record came from a test that ran them
        self.contract_errors: set[str] = set()
        self.collection_errors: list[dict] = []  # files pytest could not import: none of their tests judged
        self.names, self.seconds = names, dict.fromkeys(names, 0.0)  # implementation -> its tests' time

    def pytest_runtest_logreport(self, report) -> None:
        target = target_of(report.nodeid, self.names)
        if target is not None:
            self.seconds[target] += report.duration
        for key, value in report.user_properties:
            if key == ROWS_KEY:
                self.rows.extend(json.loads(value))
            elif key == TARGET_KEY:
                self.take_target(**json.loads(value))
            elif key == CONTRACT_KEY:
                self.show_once(report, value)
        headline(report)

    def take_target(self, ran: bool, target: dict) -> None:
        """The latest record of a target, but never one from a worker that did not run it over one that did."""
        name = target["implementation"]
        if ran or name not in self.ran:
            self.targets[name] = target
        if ran:
            self.ran.add(name)

    def pytest_collectreport(self, report) -> None:  # on the controller too: pytest-xdist forwards failures
        if report.failed:
            said = [line for line in str(report.longrepr).splitlines() if line.strip()]
            self.collection_errors.append(
                {"path": uncollected_path(report.nodeid, said), "error": (said[-1] if said else "")[:300]}
            )

    def show_once(self, report, implementation: str) -> None:
        if implementation in self.contract_errors:
            report.longrepr = f"{implementation} broke the plug-in contract again (the first breach is shown above)"
        self.contract_errors.add(implementation)
