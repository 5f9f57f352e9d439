"""The state of one ktc pytest session, held in ``config.stash[STATE]``: the implementations under
test (each an ``UnderTest`` sharing the session's ``RunContext``), the profiles, the clause filter,
the expectations, and what the controller collects from every report."""
from __future__ import annotations

import json

import pytest

import implementations
from ktc.judge.context import RunContext, UnderTest
from ktc.plugin import expected
from ktc.plugin.headline import headline
from specs.profiles import ProfileError
from specs.profiles import get as get_profile
from specs.profiles import names as profile_names

ROWS_KEY = "ktc-rows"
CONTRACT_KEY = "ktc-contract"
TARGET_KEY = "ktc-target"
STATE = pytest.StashKey["KtcState"]()
CITED = pytest.StashKey[tuple]()


class KtcState:
    def __init__(self, config: pytest.Config):
        specs = split(config.getoption("impl") or ["reference"])
        self.context = RunContext(timeout_s=config.getoption("ktc_impl_timeout"))
        configure_spark(config, specs)
        settings = {"version": config.getoption("ktc_kafka_version"),
                    "bootstrap": config.getoption("ktc_kafka_bootstrap")}
        self.impls = [UnderTest(load_impl(spec, settings), self.context) for spec in specs]
        self.impl_specs = {impl.name: spec for impl, spec in zip(self.impls, specs)}
        self.profiles = parse_profiles(config.getoption("ktc_profile"))
        override_profiles(self.impls, config.getoption("ktc_profile"), self.profiles)
        self.clause_filter = tuple(split(config.getoption("ktc_clause") or []))
        self.collected = Collected()
        self.implemented: dict[str, frozenset] = {}  # implementation -> the profiles it implements (collection)
        self.shipped_targets: dict[str, dict] = {}
        self.seed = config.getoption("hypothesis_seed", None)
        self.expected = expected.safe_index(self.impls, config.getoption("ktc_expectations"))

    def repeats_root(self, impl, profile: str, ids) -> bool:
        """A profile that extends another, on clauses its own switches cannot change, for an implementation
        that also implements the root: that run, or row, would repeat the root's (``differs_on``)."""
        derived = get_profile(profile)
        if impl is None or not derived.repeats_root_on(ids):
            return False
        if impl.name not in self.implemented:
            try:
                self.implemented[impl.name] = impl.capabilities().profiles
            except Exception:  # an implementation that cannot say yet runs everything
                self.implemented[impl.name] = frozenset()
        return derived.lineage[-1] in self.implemented[impl.name]


def split(values) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def configure_spark(config: pytest.Config, specs: list[str]) -> None:
    """--spark-master / --spark-conf reach the one Spark session before it is built."""
    master, conf = config.getoption("ktc_spark_master"), config.getoption("ktc_spark_conf")
    if "spark" in specs and (master or conf):
        from implementations.spark import session
        session.configure(master, **dict(item.split("=", 1) for item in conf if "=" in item))


def load_impl(spec: str, settings: dict):
    try:
        return implementations.load(spec, **settings)
    except implementations.ImplementationError as error:
        raise pytest.UsageError(str(error)) from None


def override_profiles(impls, option: str, profiles: tuple[str, ...]) -> None:
    """An explicit --profile names the behaviour a broker is judged under: it wins over detection."""
    chosen = [p for p in profiles if p != "kip"]
    if option != "all" and chosen:
        for impl in impls:
            impl.override_profile(chosen[0])


def parse_profiles(value: str) -> tuple[str, ...]:
    if value == "all":
        return profile_names()
    try:
        return tuple(get_profile(name).name for name in split([value]))
    except ProfileError as error:
        raise pytest.UsageError(str(error)) from None


class Collected:
    """What the controller gathers from every test report (workers ship it in user_properties)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.targets: dict[str, dict] = {}
        self.contract_errors: set[str] = set()

    def pytest_runtest_logreport(self, report) -> None:
        for key, value in report.user_properties:
            if key == ROWS_KEY:
                self.rows.extend(json.loads(value))
            elif key == TARGET_KEY:
                target = json.loads(value)
                self.targets[target["implementation"]] = target
            elif key == CONTRACT_KEY:
                self.show_once(report, value)
        headline(report)

    def show_once(self, report, implementation: str) -> None:
        if implementation in self.contract_errors:
            report.longrepr = f"{implementation} broke the plug-in contract again (the first breach is shown above)"
        self.contract_errors.add(implementation)


