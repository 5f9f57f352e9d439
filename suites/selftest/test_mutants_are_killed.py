"""The suite tests itself: every mutant in the catalogue must be killed by the tests citing the
clause it breaks, run through the ordinary ``--impl module:attribute`` mechanism.

The mutants run in one spawned process that imports pytest, Hypothesis and ktc once and forks a child per
mutant, each a whole ``pytest.main`` of its own (mutation/runner.py's ``run_all``, as the mutation tool runs its
mutants): as 31 subprocesses, pytest's start-up was most of the time.  The kill table (mutant, clause, examples
to first failure, seconds) is printed at the end of the run by suites/selftest/conftest.py.
"""

import functools
import importlib
import json
import os
import time
from pathlib import Path

import pytest

from ktc.plugin import hypothesis_profiles
from ktc.suites.selftest.mutants import CATALOGUE
from mutation.runner import in_child, run_all

pytestmark = pytest.mark.xdist_group("kill-table")  # one worker runs every mutant once
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_CPU_S = 600
PROFILE = "mutation"  # every mutant's run: ci's 120 examples a test, not shrunk (a kill needs a failing example)


def pytest_args(mutant, report: Path, seed) -> list[str]:
    # the suites that judge an implementation, as ``ktc run`` collects them: collecting selftest/ and broker/
    # too cost 4-7 s per mutant and judges nothing (benchmarks/README.md)
    return [
        str(ROOT / "suites"),
        "--rootdir",
        str(ROOT),
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "--ignore",
        str(ROOT / "suites" / "selftest"),
        "--ignore",
        str(ROOT / "suites" / "broker"),
        f"--impl=suites.selftest.mutants:{mutant.name}",
        f"--ktc-clause={mutant.clause}",
        f"--profile={','.join(mutant.profiles)}",
        f"--ktc-report={report}",
        f"--hypothesis-seed={seed}",
    ]


def failing_row(report: Path, mutant) -> dict | None:
    if not (report / "results.json").exists():
        return None
    rows = json.loads((report / "results.json").read_text())["rows"]
    return next((r for r in rows if r["clause"] == mutant.clause and r["verdict"] == "fail"), None)


@functools.cache
def imported_once() -> int:
    """Every test module the children collect, imported in the worker before its first fork: each child then
    finds them imported (the root conftest.py imports a test module by its installed name) instead of
    importing them again, two thirds of a child's collection.  A mutant is an implementation, not a change to
    these modules, so one import serves every mutant.  The number of modules imported."""
    suites = ROOT / "suites"
    names = [
        "ktc.suites." + ".".join(path.relative_to(suites).with_suffix("").parts).removesuffix(".__init__")
        for path in sorted(suites.rglob("*.py"))
        if path.relative_to(suites).parts[0] not in ("selftest", "broker") and path.name != "conftest.py"
    ]
    # under the children's Hypothesis profile: @given takes the default settings when a test is decorated, and a
    # module may read HYPOTHESIS_PROFILE on import
    os.environ["HYPOTHESIS_PROFILE"] = PROFILE
    hypothesis_profiles.load(PROFILE)
    for name in names:
        importlib.import_module(name)
    return len(names)


def kill(mutant, workdir: Path, seed, timeout_s: float) -> dict:
    """run_all's task, in its worker: one mutant's pytest run, forked (the mutation profile: ci's 120 examples a
    test, whatever the session's, since the kill table is the oracle's strength at ci; no example database and
    no shrinking, which was half of the children's CPU: the table needs the clause that failed, not the
    smallest example)."""
    imported_once()
    report, started = workdir / mutant.name, time.monotonic()
    report.mkdir()
    code, _cpu = in_child(pytest_args(mutant, report, seed), None, report / "pytest.log", timeout_s, PROFILE)
    said = (report / "pytest.log").read_text(errors="replace")[-3000:]
    return {
        "mutant": mutant.name,
        "code": code,
        "seconds": round(time.monotonic() - started, 1),
        "row": failing_row(report, mutant),
        "said": said,
    }


@pytest.fixture(scope="module")
def kills(pytestconfig) -> dict[str, dict]:
    seed = pytestconfig.getoption("hypothesis_seed")
    outcomes = run_all(list(CATALOGUE), 1, seed, TIMEOUT_CPU_S, lambda *_: None, task=kill)
    return {outcome["mutant"]: outcome for outcome in outcomes}


def test_catalogue_has_at_least_fifteen_mutants_on_distinct_clauses():
    assert len(CATALOGUE) >= 15
    assert len({m.clause for m in CATALOGUE}) == len(CATALOGUE), "each mutant breaks a different clause"


@pytest.mark.parametrize("mutant", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_mutant_is_killed_by_its_clause(mutant, kills, record_property):
    done = kills[mutant.name]
    row = done["row"]
    record_property(
        "kill",
        json.dumps(
            {
                "mutant": mutant.name,
                "clause": mutant.clause,
                "seconds": done["seconds"],
                "examples": row and row.get("first_failure_at"),
                "killed": row is not None,
            }
        ),
    )
    assert done["code"] == 1 and row is not None, (
        f"mutant {mutant.name} survived the tests citing {mutant.clause} (exit {done['code']})\n" + done["said"]
    )
