"""The ktc pytest hooks of a ktc session (ktc/plugin/__init__.py registers this module only then).

Each hook hands one concern to the module that holds it: collection to ktc/plugin/plan.py (what each test
judges, from the clause registry, once), a test's setup and end to ktc/plugin/rows.py (its rows, decided
from data), a bulk implementation's buffered histories to ktc/plugin/bulk.py.  Tests that take an ``impl``
argument run once per selected implementation; tests that take ``profile`` run once per selected profile
in which a cited clause holds.  After every test its rows (pass / fail / error / unknown with its kind /
unsupported) ride on ``report.user_properties`` (which pytest-xdist carries to the controller), one
``ktc-verdict`` property each reaches JUnit XML (reports/junit.py); the controller merges them and
writes results.json.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ktc import implementations
from ktc.judge import harness
from ktc.plugin import bulk as bulk_siblings
from ktc.plugin import expected, failure_report, groups, hypothesis_profiles, plan, rows, targets
from ktc.plugin.headline import HEADLINE_KEY
from ktc.plugin.provenance import provenance
from ktc.plugin.state import CITED, CONTRACT_KEY, ROWS_KEY, STATE, TARGET_KEY, KtcState
from ktc.reports import junit, results
from ktc.reports.verdicts import SHOWN


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = metafunc.config.stash[STATE]
    if "impl" in metafunc.fixturenames:
        metafunc.parametrize("impl", state.impls, ids=[i.name for i in state.impls])
    if "profile" in metafunc.fixturenames:
        metafunc.parametrize("profile", state.profiles)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    plan.collect(config, items, config.stash[STATE])


def pytest_runtest_setup(item) -> None:
    """A test its implementation cannot be judged on ends here, declined with its reason (rows.declined_at_setup)."""
    item.config.stash[STATE].context.begin_test((), False)
    declined, supported = rows.declined_at_setup(item)
    if declined is not None:
        raise declined
    item.stash[CITED] = supported


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """The test's body, then, for a bulk implementation (Spark), the judging of all its histories in one run
    with those of the same test under its later profiles (ktc/plugin/bulk.py); then its rows are decided
    (rows.settle), and a failure every row of which is a known deviation becomes pytest's xfail."""
    state = item.config.stash[STATE]
    impl = item.stash[plan.PLAN].impl
    bulk = impl is not None and impl.bulk
    state.context.begin_test(item.stash.get(CITED, ()), bulk)
    prefetched = bulk and bulk_siblings.replay(item, state.context)
    try:
        result = yield
        if bulk and not prefetched:
            flush(item, impl, state)
    except BaseException as raised:
        instead = rows.settle(item, state, raised)
        if instead is not None:
            raise instead from raised
        raise
    rows.settle(item, state, None)
    return result


def flush(item, impl, state: KtcState) -> None:
    if item.config.getoption("ktc_bulk_each_profile"):
        harness.flush_bulk(impl)
    else:
        bulk_siblings.flush_with_siblings(item, impl, state.context, rows.judged_clauses)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test judged together with an earlier sibling does not run again: it raises what it raised."""
    return bulk_siblings.prefetched_outcome(pyfuncitem) or None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Carry the rows decided for the test on its report; a setup that stopped the test (declined, or a
    fixture's skip) decides them here, from what it raised."""
    state = item.config.stash[STATE]
    if call.when == "setup" and call.excinfo is not None and isinstance(call.excinfo.value, rows.SKIPS):
        rows.settle(item, state, call.excinfo.value)
    report = yield
    decided = item.stash.get(rows.ROWS, None) if call.when in ("setup", "call") else None
    if decided is not None:
        del item.stash[rows.ROWS]
        ship_rows(item, report, decided)
        show_contract_error_alone(call, report)
        ship_target(item, report, state)
        show_violation_as_report(item, call, report)
    return report


def ship_rows(item, report, decided: list[dict]) -> None:
    """The rows to the controller (with the test's time), and one ``ktc-verdict`` property each to JUnit XML."""
    timed = [{**row, "duration": round(report.duration, 4)} for row in decided]
    report.user_properties.append((ROWS_KEY, json.dumps(timed)))
    item.user_properties += [junit.property_of(row) for row in decided]


def show_contract_error_alone(call, report) -> None:
    """A broken plug-in contract is one line, not a traceback through ktc (the controller shows it once)."""
    error = rows.contract_error(call.excinfo.value) if call.excinfo is not None else None
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
    found = rows.violations(call.excinfo.value) if call.excinfo is not None and report.failed else []
    if found:
        violation = found[0]
        replay = replay_line(item, violation.history.profile, violation.implementation)
        report.longrepr = "\n\n".join(
            failure_report.render(v, violation.history, violation.implementation, replay) for v in violation.verdicts
        )
        report.user_properties.append((HEADLINE_KEY, True))


def replay_line(item, profile: str, implementation: str) -> str:
    """One line that re-runs this test alone, as it ran: Hypothesis profile and seed, ktc profile,
    implementation, and the broker it ran on."""
    state, config = item.config.stash[STATE], item.config
    spec = state.impl_specs.get(implementation, implementation)
    test = f"{item.path}::{item.nodeid.split('::', 1)[1]}" if "::" in item.nodeid else str(item.path)
    env = {"HYPOTHESIS_PROFILE": hypothesis_profiles.current(), **target_env(state, implementation)}
    prefix = " ".join(f"{k}={v}" for k, v in env.items())
    return (
        f"{prefix} pytest '{test}' --impl {spec} --profile {profile} "
        f"--hypothesis-seed={config.getoption('hypothesis_seed', None)}"
    )


def target_env(state: KtcState, implementation: str) -> dict:
    """The environment that re-creates the target (its family's replay environment)."""
    impl = next((i for i in state.impls if i.name == implementation), None)
    target = impl.target() if impl is not None else None
    spec = state.impl_specs.get(implementation, implementation)
    return {k: v for k, v in implementations.replay_env(spec, state.values, target).items() if v}


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    seed = config.getoption("hypothesis_seed", None)
    return [
        f"ktc: implementations {[i.name for i in state.impls]}, profiles {list(state.profiles)}",
        f"ktc: hypothesis seed {seed} (replay any failure with --hypothesis-seed={seed})",
    ]


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
    merged = config.stash[MERGED] = results.merge_rows(state.collected.rows)
    if config.getoption("ktc_partial"):
        expected.mark_undecided(merged)
    config.stash[SURPRISES] = expected.surprises(merged)
    if config.stash[SURPRISES] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    config.stash[SURPRISES] += expected.changes(merged)  # said, not failed: a newer version than its file's
    config.stash[SURPRISES] += expected.decided_unknowns(merged)  # said, not failed: the seed decides
    directory = config.getoption("ktc_report")
    if not directory:
        return
    meta = {
        **provenance(state, config),
        "targets": timed_targets(state),
        "collection_errors": state.collected.collection_errors,
    }
    from ktc.plugin.artifacts import write_results

    path = write_results(Path(directory), merged, meta)  # clause texts, timelines, replays joined in first
    config.stash[RESULT_PATH] = str(path)


def timed_targets(state) -> list[dict]:
    """Every target's record with the seconds its tests took (setup, call and teardown) and its family's one
    line on how it was judged (``summary``: a broker's clock, retention passes, leader moves and skew)."""
    timed = []
    for name, target in state.collected.targets.items():
        line = implementations.summary(state.impl_specs.get(target["implementation"], ""), state.values, target)
        timed.append({**target, "duration_s": round(state.collected.seconds.get(name, 0.0), 2), "summary": line})
    return timed


RESULT_PATH = pytest.StashKey[str]()
SURPRISES = pytest.StashKey[list]()
MERGED = pytest.StashKey[list]()  # the session's rows, merged (reports/results.py: merge_rows)


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
    merged = config.stash[MERGED]
    counts = {v: sum(r["verdict"] == v for r in merged) for v in SHOWN}
    seed = config.getoption("hypothesis_seed", None)
    terminalreporter.write_line(
        f"ktc: {len(merged)} clause rows: "
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + f"; seed {seed}; written to {config.stash[RESULT_PATH]}"
    )
