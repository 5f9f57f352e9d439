"""The ktc pytest hooks of a ktc session (ktc/plugin/__init__.py registers this module only then).

Tests that take an ``impl`` argument run once per selected implementation; tests that take
``profile`` run once per selected profile in which a cited clause holds.  After every test its
outcome becomes one row per cited clause (pass / fail / unsupported / unknown / error), shipped
through ``report.user_properties`` (which pytest-xdist carries to the controller); the controller
merges them and writes results.json.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ktc import implementations
from ktc.judge import harness
from ktc.plugin import bulk as bulk_siblings
from ktc.plugin import expected, failure_report, groups, hypothesis_profiles, targets
from ktc.plugin.headline import HEADLINE_KEY
from ktc.plugin.provenance import provenance
from ktc.plugin.rows import contract_error, rows_for, violations
from ktc.plugin.state import CITED, CONTRACT_KEY, ROWS_KEY, STATE, TARGET_KEY, KtcState
from ktc.reports import results
from ktc.reports.verdicts import SHOWN
from ktc.specs import clauses as clause_registry
from ktc.specs.profiles import get as get_profile


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
    return clause is not None and clause.holds_in(profile)


def wanted(item, state: KtcState) -> bool:
    ids = cited(item)
    if item.config.getoption("ktc_judged_only") and ("impl" not in getattr(item, "fixturenames", ()) or not ids):
        return False
    params = getattr(item, "callspec", None)
    profile = params.params.get("profile") if params else None
    if profile is not None and not any(holds(c, profile) for c in ids):
        return False
    only = [p for m in item.iter_markers("profiles") for p in m.args]
    exact = item.get_closest_marker("kafka_change") is not None  # judged under its own profile, not descendants
    reach = {profile} if exact or profile is None else set(get_profile(profile).lineage)
    if profile is not None and only and not set(only) & reach:
        return False
    if profile is not None and not exact and state.repeats_root(params.params.get("impl"), profile, ids):
        return False
    if not state.judges(params.params.get("impl") if params else None, profile, item):
        return False
    return not state.clause_filter or any(c == f or c.startswith(f + ".") for c in ids for f in state.clause_filter)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    state = config.stash[STATE]
    for item in items:
        params = getattr(item, "callspec", None)
        impl = params.params.get("impl") if params else None
        group = getattr(impl, "xdist_group", None) or (bulk_siblings.group(item, impl) if impl and impl.bulk else None)
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
    """Bulk implementations (Spark) judge all of a test's histories in one run after it returns, with
    those of the same test under its later profiles (ktc/plugin/bulk.py)."""
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    bulk = impl is not None and impl.bulk
    context = item.config.stash[STATE].context
    context.begin_test(item.stash.get(CITED, ()), bulk)
    if bulk and bulk_siblings.replay(item, context):
        return (yield)
    result = yield
    if bulk and not item.config.getoption("ktc_bulk_each_profile"):
        bulk_siblings.flush_with_siblings(item, impl, context, judged_clauses)
    elif bulk:
        harness.flush_bulk(impl)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test judged together with an earlier sibling does not run again: it raises what it raised."""
    return bulk_siblings.prefetched_outcome(pyfuncitem) or None


def pytest_runtest_setup(item) -> None:
    item.config.stash[STATE].context.begin_test((), False)
    skip, supported = setup_decision(item)
    if skip:
        pytest.skip(skip)
    item.stash[CITED] = supported


def judged_clauses(item) -> tuple[str, ...] | None:
    """The clauses the item's setup would judge, or None when it would skip the item."""
    skip, supported = setup_decision(item)
    return None if skip else supported


def setup_decision(item) -> tuple[str | None, tuple[str, ...]]:
    """Why the item is skipped as unsupported (or None), and the cited clauses it judges."""
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    profile = params.params.get("profile") if params else None
    supported = tuple(c for c in cited(item) if profile is None or holds(c, profile))
    if impl is None:
        return None, supported
    caps = impl.capabilities()
    foreign = item.get_closest_marker("kafka_change") is not None and profile in caps.releases
    if profile is not None and profile not in caps.profiles and not foreign:
        return f"unsupported: {impl.name} does not implement profile {profile}", supported
    if profile in caps.pinned_only and item.get_closest_marker("pinned") is None:
        return (f"unsupported: {impl.name} is judged under {profile} on pinned inputs only "
                "(suites/pinned, suites/deviations)"), supported
    reasons = {caps.reason_unsupported(c) for c in supported} - {None}
    supported = tuple(c for c in supported if not caps.reason_unsupported(c))
    if cited(item) and not supported:
        return "unsupported: " + "; ".join(sorted(reasons)), supported
    return None, supported


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
        show_violation_as_report(item, call, report)


def show_contract_error_alone(call, report) -> None:
    """A broken plug-in contract is one line, not a traceback through ktc (the controller shows it once)."""
    error = contract_error(call.excinfo.value) if call.excinfo is not None else None
    if error is not None:
        report.longrepr = str(error)
        report.user_properties += [(CONTRACT_KEY, error.implementation), (HEADLINE_KEY, True)]


def ship_target(item, report, state: KtcState) -> None:
    """The implementation's target record (what it is, the profile it is judged under and why:
    ktc/plugin/targets.py), whenever it changed; marked ``ran`` once this worker called its run() (a
    worker whose tests all skipped never started it, and its record must not win)."""
    params = getattr(item, "callspec", None)
    impl = params.params.get("impl") if params else None
    data = targets.record(impl, state.capabilities(impl), state.given_profiles) if impl is not None else None
    ran = impl is not None and impl.name in state.context.ran
    if data and state.shipped_targets.get(impl.name) != (ran, data):
        state.shipped_targets[impl.name] = (ran, data)
        report.user_properties.append((TARGET_KEY, json.dumps({"ran": ran, "target": data})))


def show_violation_as_report(item, call, report) -> None:
    """A clause violation reads as a conformance report (ktc/plugin/failure_report.py), with no ktc frame."""
    found = violations(call.excinfo.value) if call.excinfo is not None and report.failed else []
    if found:
        violation = found[0]
        replay = replay_line(item, violation.history.profile, violation.implementation)
        report.longrepr = "\n\n".join(failure_report.render(v, violation.history, violation.implementation, replay)
                                       for v in violation.verdicts)
        report.user_properties.append((HEADLINE_KEY, True))


def replay_line(item, profile: str, implementation: str) -> str:
    """One line that re-runs this test alone, as it ran: Hypothesis profile and seed, ktc profile,
    implementation, and the broker it ran on."""
    state, config = item.config.stash[STATE], item.config
    spec = state.impl_specs.get(implementation, implementation)
    test = f"{item.path}::{item.nodeid.split('::', 1)[1]}" if "::" in item.nodeid else str(item.path)
    env = {"HYPOTHESIS_PROFILE": hypothesis_profiles.current(), **target_env(state, implementation)}
    prefix = " ".join(f"{k}={v}" for k, v in env.items())
    return (f"{prefix} pytest '{test}' --impl {spec} --profile {profile} "
            f"--hypothesis-seed={config.getoption('hypothesis_seed', None)}")


def target_env(state: KtcState, implementation: str) -> dict:
    """The environment that re-creates the target (its family's replay environment)."""
    impl = next((i for i in state.impls if i.name == implementation), None)
    target = impl.target() if impl is not None else None
    spec = state.impl_specs.get(implementation, implementation)
    return {k: v for k, v in implementations.replay_env(spec, state.values, target).items() if v}


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    seed = config.getoption("hypothesis_seed", None)
    return [f"ktc: implementations {[i.name for i in state.impls]}, profiles {list(state.profiles)}",
            f"ktc: hypothesis seed {seed} (replay any failure with --hypothesis-seed={seed})"]


def close_implementations(state: KtcState) -> None:
    """Stop what the implementations started and delete what they created (on every worker), and wait for those
    closed in the background when their group ended."""
    for impl in state.impls:
        close_one(state, impl)
    for thread in state.closing:
        thread.join()


def close_one(state: KtcState, impl, in_background: bool = False) -> None:
    """Close ``impl`` once per worker; in the background, the worker goes on with its next group meanwhile."""
    if impl.name in state.closed:
        return
    state.closed.add(impl.name)
    if not in_background:
        return stop(impl)
    thread = threading.Thread(target=stop, args=(impl,), name=f"ktc-close-{impl.name}")
    state.closing.append(thread)
    thread.start()


def stop(impl) -> None:
    try:
        impl.close()
    except Exception as error:  # cleanup must not hide the run's own outcome
        print(f"ktc: closing {impl.name} failed: {type(error).__name__}: {error}")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """An implementation whose group this worker has just finished is closed now (groups.finished_group)."""
    impl = groups.finished_group(item, nextitem)
    state = item.config.stash[STATE]
    if impl is not None and any(impl is known for known in state.impls):
        close_one(state, impl, in_background=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash[STATE]
    close_implementations(state)
    if hasattr(config, "workerinput"):
        return
    rows = results.merge_rows(state.collected.rows)
    if config.getoption("ktc_partial"):
        expected.mark_undecided(rows)
    config.stash[SURPRISES] = expected.surprises(rows)
    if config.stash[SURPRISES] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    config.stash[SURPRISES] += expected.changes(rows)  # said, not failed: a newer version than its file's
    config.stash[SURPRISES] += expected.decided_unknowns(rows)  # said, not failed: the seed decides
    directory = config.getoption("ktc_report")
    if not directory:
        return
    meta = {**provenance(state, config), "targets": timed_targets(state.collected),
            "collection_errors": state.collected.collection_errors}
    from ktc.plugin.artifacts import write_results
    path = write_results(Path(directory), rows, meta)  # clause texts, timelines, replays joined in first
    config.stash[RESULT_PATH] = str(path)


def timed_targets(collected) -> list[dict]:
    """Every target's record with the seconds its tests took (setup, call and teardown)."""
    return [{**target, "duration_s": round(collected.seconds.get(name, 0.0), 2)}
            for name, target in collected.targets.items()]


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
        line = implementations.summary(state.impl_specs.get(target["implementation"], ""), state.values, target)
        if line:
            terminalreporter.write_line(f"ktc: {target['implementation']} {line}")
    rows = results.merge_rows(state.collected.rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in SHOWN}
    seed = config.getoption("hypothesis_seed", None)
    terminalreporter.write_line(f"ktc: {len(rows)} clause rows: " + ", ".join(f"{n} {v}" for v, n in counts.items())
                                + f"; seed {seed}; written to {config.stash[RESULT_PATH]}")
