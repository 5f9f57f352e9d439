"""The ktc pytest plugin: ``--impl``, ``--profile``, ``--ktc-report`` and the other ktc options.

It is polite: in a pytest session that uses no ktc option and collects none of ktc's suites (another
project's tests, in a venv where ktc is installed) it does nothing at all.  In a ktc session it
loads ktc's Hypothesis profiles, fixes one Hypothesis seed for the controller and every xdist
worker, builds the session state (ktc/plugin/state.py) and registers the hooks (ktc/plugin/hooks.py).
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from ktc import implementations
from ktc.judge.context import DEFAULT_TIMEOUT_S
from ktc.paths import suites_dir
from ktc.plugin import groups, hooks, hypothesis_profiles, progress
from ktc.plugin.state import OWN, STATE, KtcState
from ktc.specs.profiles import names as profile_names

SEED_KEY = "ktc-hypothesis-seed"
KTC_OPTIONS = ("impl", "ktc_report", "ktc_clause", "ktc_expectations")  # and every family's (family_dests)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ktc", "ktc conformance")
    group.addoption(
        "--impl",
        action="append",
        metavar="NAME|module:attr",
        help="implementation under test (repeatable; default: reference)",
    )
    group.addoption(
        "--profile",
        dest="ktc_profile",
        default=OWN,
        metavar="NAMES",
        help="'own' (default: each implementation under the profiles it implements), 'all' (every "
        "implementation under every profile), or comma-separated names "
        f"({', '.join(profile_names())})",
    )
    group.addoption("--ktc-report", metavar="DIR", help="write results.json and summary.txt into DIR")
    group.addoption(
        "--ktc-clause",
        action="append",
        metavar="ID",
        help="only run tests citing this clause id or KIP prefix (repeatable)",
    )
    group.addoption(
        "--impl-timeout",
        dest="ktc_impl_timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="bound on each call of an implementation's run(), per 100 histories "
        f"(default {DEFAULT_TIMEOUT_S:g}; 0 for none)",
    )
    for option in implementations.options():  # each implementation family's (implementations/families/)
        if option.pytest:
            group.addoption(option.flag, dest=option.dest, help=option.help, **option.arguments)
    group.addoption(
        "--ktc-bulk-each-profile",
        action="store_true",
        help="a bulk implementation (Spark) runs once per test and profile, not once per test for all "
        "its profiles (to compare the two: benchmarks/bench_bulk_profiles.py)",
    )
    group.addoption("--ktc-run-options", metavar="JSON", help=argparse_suppress())
    group.addoption(
        "--ktc-judged-only",
        action="store_true",
        help="collect only the tests that judge an implementation on clauses (those taking `impl` and "
        "citing clauses: a row for each); ktc run sets it",
    )
    group.addoption(
        "--ktc-partial",
        action="store_true",
        help="the selection may leave out the test that shows an expected deviation: one that passes "
        "is said, not failed (ktc run sets it for -k, -m or a path inside the suites)",
    )
    group.addoption(
        "--ktc-expectations",
        action="append",
        metavar="TOML",
        help="expected deviations (repeatable); expectations/<implementation>.toml is always read",
    )


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS  # set by ktc run: its own options, recorded in results.json's provenance


def family_dests() -> list[str]:
    return [option.dest for option in implementations.options() if option.pytest]


def is_ktc_session(config: pytest.Config) -> bool:
    """A ktc option was given, or the session collects ktc's own suites."""
    given = (*KTC_OPTIONS, *family_dests())
    if any(config.getoption(name) for name in given) or config.getoption("ktc_profile") != OWN:
        return True
    suites = suites_dir()
    base = Path(config.invocation_params.dir)
    return any(
        suites in (base / arg.split("::")[0]).resolve().parents or (base / arg.split("::")[0]).resolve() == suites
        for arg in config.args
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not is_ktc_session(config):
        return
    hypothesis_profiles.load()
    config.addinivalue_line("markers", "clause(*ids): the clause ids a test checks (specs/kip-*.toml)")
    config.addinivalue_line("markers", "profiles(*names): run this test only under these profiles")
    config.addinivalue_line("markers", "pinned: fixed inputs, no generation (judges pinned_only profiles)")
    config.addinivalue_line("markers", "real_time: the real-time tier (judges a broker's Capabilities.real_time)")
    config.addinivalue_line("markers", "retention: runs broker retention passes (ordered after tests that run none)")
    config.addinivalue_line("markers", "restarts_broker: stops the broker and starts it again (ordered last)")
    config.addinivalue_line(
        "markers",
        "kafka_change: one of Kafka's own changes, judged under its profile on every "
        "Kafka release (Capabilities.releases)",
    )
    if not config.pluginmanager.hasplugin("xdist"):  # -p no:xdist: the suites' group marks stay valid
        config.addinivalue_line("markers", "xdist_group(name): pytest-xdist's group (no effect without it)")
    if not hasattr(config, "workerinput") and not os.environ.get("KTC_RUN_ID"):
        from ktc.kafka.topics import (
            new_run_id,  # pure: no broker extra needed
        )

        os.environ["KTC_RUN_ID"] = new_run_id()  # every xdist worker inherits it: one run, one id
    fix_seed(config)
    pass_sigterm_to_the_group(config)
    config.stash[STATE] = KtcState(config)
    config.pluginmanager.register(config.stash[STATE].collected, "ktc-collected")
    config.pluginmanager.register(hooks, "ktc-hooks")
    if config.pluginmanager.hasplugin("xdist"):  # --dist loadgroup groups on pytest 9.2+ too (groups.py)
        config.pluginmanager.register(groups.Plugin(config), "ktc-groups")
    out = progress.open_stream(config)
    if out is not None:
        config.pluginmanager.register(
            progress.Progress(out, [i.name for i in config.stash[STATE].impls]), "ktc-progress"
        )


def pass_sigterm_to_the_group(config: pytest.Config) -> None:
    """Under ``ktc run`` the controller leads its own process group; a SIGTERM it alone receives (ktc
    died: PR_SET_PDEATHSIG) goes on to every worker, whose handlers stop what they started."""
    if hasattr(config, "workerinput") or not os.environ.get("KTC_SUPERVISED") or os.getpgid(0) != os.getpid():
        return

    def to_the_group(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.killpg(0, signal.SIGTERM)

    signal.signal(signal.SIGTERM, to_the_group)


def fix_seed(config: pytest.Config) -> None:
    """One seed for the whole run: the one given, else one drawn by the controller and handed to every
    xdist worker (``pytest_configure_node``), so the seed printed is the seed each worker used."""
    if not hasattr(config.option, "hypothesis_seed"):
        return
    handed = getattr(config, "workerinput", {}).get(SEED_KEY)
    if handed is not None:
        config.option.hypothesis_seed = handed
    elif config.option.hypothesis_seed is None:
        config.option.hypothesis_seed = random.SystemRandom().randrange(2**32)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # pytest-xdist, on the controller, once per worker
    if STATE in node.config.stash:
        node.workerinput[SEED_KEY] = node.config.option.hypothesis_seed
