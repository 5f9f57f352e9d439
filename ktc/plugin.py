"""The ktc pytest plugin: ``--impl``, ``--profile``, ``@pytest.mark.clause``, verdict rows, results.

Each test cites clause ids with ``@pytest.mark.clause(...)``.  Tests that take an ``impl``
argument run once per selected implementation; tests that take ``profile`` run once per selected
profile in which a cited clause holds.  After every test the plugin turns its outcome into one
row per cited clause (pass / fail / unsupported / unknown / error) and ships the rows through
``report.user_properties`` (which pytest-xdist carries to the controller); the controller merges
them and writes results.json.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

import implementations
from specs import clauses as clause_registry
from specs.profiles import ProfileError, get as get_profile, names as profile_names

from . import expected, harness
from .context import DEFAULT_TIMEOUT_S, RunContext, UnderTest
from .provenance import provenance
from .rows import contract_error, rows_for
from reports import results

ROWS_KEY = "ktc-rows"
CONTRACT_KEY = "ktc-contract"
CITED = pytest.StashKey[tuple]()
TARGET_KEY = "ktc-target"
STATE = pytest.StashKey["KtcState"]()


class KtcState:
    def __init__(self, config: pytest.Config):
        specs = split(config.getoption("impl") or ["reference"])
        self.context = RunContext(timeout_s=config.getoption("ktc_impl_timeout"))
        self.impls = [UnderTest(load_impl(spec), self.context) for spec in specs]
        self.impl_specs = {impl.name: spec for impl, spec in zip(self.impls, specs)}
        self.profiles = parse_profiles(config.getoption("ktc_profile"))
        override_profiles(self.impls, config.getoption("ktc_profile"), self.profiles)
        self.clause_filter = tuple(split(config.getoption("ktc_clause") or []))
        self.collected = Collected()
        self.shipped_targets: dict[str, dict] = {}
        self.seed = config.getoption("hypothesis_seed", None)
        self.expected = expected.safe_index(self.impls, config.getoption("ktc_expectations"))


def split(values) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def load_impl(spec: str):
    try:
        return implementations.load(spec)
    except implementations.ImplementationError as error:
        raise pytest.UsageError(str(error)) from None


def override_profiles(impls, option: str, profiles: tuple[str, ...]) -> None:
    """An explicit --profile names the behaviour a broker is judged under: it wins over detection."""
    chosen = [p for p in profiles if p != "kip"]
    if option != "all" and chosen:
        for impl in impls:
            if hasattr(impl, "override_profile"):
                impl.override_profile(chosen[0])


def parse_profiles(value: str) -> tuple[str, ...]:
    if value == "all":
        return profile_names()
    try:
        return tuple(get_profile(name).name for name in split([value]))
    except ProfileError as error:
        raise pytest.UsageError(str(error)) from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ktc", "ktc conformance")
    group.addoption("--impl", action="append", metavar="NAME|module:attr",
                    help="implementation under test (repeatable; default: reference)")
    group.addoption("--profile", dest="ktc_profile", default="all", metavar="NAMES",
                    help=f"comma-separated profiles or 'all' ({', '.join(profile_names())})")
    group.addoption("--ktc-report", metavar="DIR", help="write results.json and summary.txt into DIR")
    group.addoption("--ktc-clause", action="append", metavar="ID",
                    help="only run tests citing this clause id or KIP prefix (repeatable)")
    group.addoption("--impl-timeout", dest="ktc_impl_timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    metavar="SECONDS", help="bound on each call of an implementation's run() "
                                            f"(default {DEFAULT_TIMEOUT_S:g}; 0 for none)")
    group.addoption("--ktc-expectations", action="append", metavar="TOML",
                    help="expected deviations (repeatable); expectations/<implementation>.toml is always read")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(*ids): the clause ids a test checks (specs/kip-*.toml)")
    config.addinivalue_line("markers", "profiles(*names): run this test only under these profiles")
    config.addinivalue_line("markers", "pinned: fixed inputs, no generation (judges pinned_only profiles)")
    if not hasattr(config, "workerinput") and not os.environ.get("KTC_RUN_ID"):
        from implementations.kafka.judge.topics import new_run_id  # pure: no broker extra needed
        os.environ["KTC_RUN_ID"] = new_run_id()  # every xdist worker inherits it: one run, one id
    if getattr(config.option, "hypothesis_seed", None) is None and hasattr(config.option, "hypothesis_seed"):
        config.option.hypothesis_seed = random.SystemRandom().randrange(2**32)
    config.stash[STATE] = KtcState(config)
    config.pluginmanager.register(config.stash[STATE].collected, "ktc-collected")


def cited(item_or_definition) -> tuple[str, ...]:
    return tuple(c for m in item_or_definition.iter_markers("clause") for c in m.args)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = metafunc.config.stash[STATE]
    if "impl" in metafunc.fixturenames:
        metafunc.parametrize("impl", state.impls, ids=[i.name for i in state.impls])
    if "profile" in metafunc.fixturenames:
        metafunc.parametrize("profile", state.profiles)


def holds(clause_id: str, profile: str) -> bool:
    clause = clause_registry.all_clauses().get(clause_id)
    return clause is not None and profile in clause.profiles


def wanted(item, state: KtcState) -> bool:
    ids = cited(item)
    params = getattr(item, "callspec", None)
    profile = params.params.get("profile") if params else None
    if profile is not None and not any(holds(c, profile) for c in ids):
        return False
    only = [p for m in item.iter_markers("profiles") for p in m.args]
    if profile is not None and only and profile not in only:
        return False
    return not state.clause_filter or any(c == f or c.startswith(f + ".") for c in ids for f in state.clause_filter)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    state = config.stash[STATE]
    for item in items:
        params = getattr(item, "callspec", None)
        group = getattr(params.params.get("impl"), "xdist_group", None) if params else None
        if group and config.pluginmanager.hasplugin("xdist"):  # absent under -p no:xdist
            item.add_marker(pytest.mark.xdist_group(group))  # e.g. one worker, one Spark JVM
    keep = [i for i in items if wanted(i, state)]
    dropped = [i for i in items if not wanted(i, state)]
    for item in keep:  # JUnit XML writes these as <properties>, also under pytest-xdist
        item.user_properties += [("clause", c) for c in dict.fromkeys(cited(item))]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Bulk implementations (Spark) judge all of a test's histories in one run after it returns."""
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    bulk = impl is not None and impl.bulk
    item.config.stash[STATE].context.begin_test(item.stash.get(CITED, ()), bulk)
    result = yield
    if bulk:
        harness.flush_bulk(impl)
    return result


def pytest_runtest_setup(item) -> None:
    item.config.stash[STATE].context.begin_test((), False)
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    profile = params.params.get("profile") if params else None
    supported = tuple(c for c in cited(item) if profile is None or holds(c, profile))
    if impl is not None:
        caps = impl.capabilities()
        if profile is not None and profile not in caps.profiles:
            pytest.skip(f"unsupported: {impl.name} does not implement profile {profile}")
        if profile in caps.pinned_only and item.get_closest_marker("pinned") is None:
            pytest.skip(f"unsupported: {impl.name} is judged under {profile} on pinned inputs only "
                        f"(suites/pinned, suites/deviations)")
        reasons = {caps.reason_unsupported(c) for c in supported} - {None}
        supported = tuple(c for c in supported if not caps.reason_unsupported(c))
        if cited(item) and not supported:
            pytest.skip("unsupported: " + "; ".join(sorted(reasons)))
    item.stash[CITED] = supported


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" or (call.when == "setup" and report.skipped):
        state = item.config.stash[STATE]
        rows = rows_for(item, call, report, state)
        if call.when == "call":
            expected.apply(report, rows, state.expected)
        report.user_properties.append((ROWS_KEY, json.dumps(rows)))
        show_contract_error_alone(call, report)
        ship_target(item, report, state)
        add_replay_section(item, report, rows)


def show_contract_error_alone(call, report) -> None:
    """A broken plug-in contract is one line, not a traceback through ktc (the controller shows it once)."""
    error = contract_error(call.excinfo.value) if call.excinfo is not None else None
    if error is not None:
        report.longrepr = str(error)
        report.user_properties.append((CONTRACT_KEY, error.implementation))


def ship_target(item, report, state: "KtcState") -> None:
    """The implementation's target (what it ran on, the profile chosen and why), once it is known."""
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    target = getattr(impl, "target", None)
    if callable(target):
        data = target()
        if data.get("profile") and state.shipped_targets.get(impl.name) != data:
            state.shipped_targets[impl.name] = data
            report.user_properties.append((TARGET_KEY, json.dumps(data)))


def add_replay_section(item, report, rows: list[dict]) -> None:
    failed = [r for r in rows if r["verdict"] == "fail" and r.get("counterexample")]
    if failed:
        seed = item.config.getoption("hypothesis_seed", None)
        impl = item.config.stash[STATE].impl_specs.get(failed[0]["implementation"], failed[0]["implementation"])
        text = (f"replay: pytest '{item.nodeid}' --impl {impl} --hypothesis-seed={seed}\n"
                f"counterexample: {json.dumps(failed[0]['counterexample'])}")
        report.sections.append(("ktc replay", text))


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

    def show_once(self, report, implementation: str) -> None:
        if implementation in self.contract_errors:
            report.longrepr = f"{implementation} broke the plug-in contract again (the first breach is shown above)"
        self.contract_errors.add(implementation)


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    seed = config.getoption("hypothesis_seed", None)
    return [f"ktc: implementations {[i.name for i in state.impls]}, profiles {list(state.profiles)}",
            f"ktc: hypothesis seed {seed} (replay any failure with --hypothesis-seed={seed})"]


def close_implementations(state: "KtcState") -> None:
    """Stop what the implementations started and delete what they created (on every worker)."""
    for impl in state.impls:
        close = getattr(impl, "close", None)
        if callable(close):
            try:
                close()
            except Exception as error:  # cleanup must not hide the run's own outcome
                print(f"ktc: closing {impl.name} failed: {type(error).__name__}: {error}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash[STATE]
    close_implementations(state)
    if hasattr(config, "workerinput"):
        return
    rows = results.merge_rows(state.collected.rows)
    config.stash[SURPRISES] = expected.surprises(rows)
    if config.stash[SURPRISES] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    directory = config.getoption("ktc_report")
    if not directory:
        return
    meta = {**provenance(state, config), "targets": list(state.collected.targets.values())}
    path = results.write(Path(directory), rows, meta)
    from .artifacts import write_artifacts
    write_artifacts(Path(directory), path)
    config.stash[RESULT_PATH] = str(path)


RESULT_PATH = pytest.StashKey[str]()
SURPRISES = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    for line in config.stash.get(SURPRISES, []):
        terminalreporter.write_line(line, red=True)
    if hasattr(config, "workerinput") or RESULT_PATH not in config.stash:
        return
    state = config.stash[STATE]
    for target in state.collected.targets.values():
        how = "given with --profile" if target.get("requested_profile") else f"detected: {target.get('evidence')}"
        terminalreporter.write_line(f"ktc: {target['implementation']} judged as {target['profile']} ({how})")
    rows = results.merge_rows(state.collected.rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in results.ORDER}
    seed = config.getoption("hypothesis_seed", None)
    terminalreporter.write_line(f"ktc: {len(rows)} clause rows: " + ", ".join(f"{n} {v}" for v, n in counts.items())
                                + f"; seed {seed}; written to {config.stash[RESULT_PATH]}")
