"""Crash on the third-party brokers ktc starts: kfake on its data directory (kfake.DataDir) and tansu on its memory
storage, each killed (SIGKILL of its process group) mid-history and started again on the same port
(implementations/kafka/launch.py: ``Kfake.restart``, ``Tansu.restart``; judge/restart.py).

kfake reloads what it wrote to its data directory; tansu comes back empty (memory:// lives in the process).  What
either answers after the restart is judged against the model's ``Crash`` like any broker's: whatever departs is a
row its expectations file explains, with a source line in the broker's code, never an ``error`` row and never one
declined because the history crashes the broker.  Measured on the shared 2-core machine (load 16-20): 16-33 s, 2 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktc.implementations.families.kfake import TARGET as KFAKE  # noqa: E402
from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION, KfakeError, build  # noqa: E402
from ktc.implementations.kafka.processes.tansu import located  # noqa: E402
from ktc.judge import harness  # noqa: E402
from ktc.reference.types import Crash, History  # noqa: E402
from ktc.reports import expectations  # noqa: E402
from ktc.strategies import histories  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-crash-third-party")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
CRASH_TEST = "suites/kip33/test_crash_recovery.py"
DECLINED = "the history crashes the broker"  # judge/restart.py: declining_crashes
MEMORY_STORAGE = "tansu-storage/src/lib.rs:2401-2408"  # memory:// => an empty InMemory object store per process


@pytest.fixture(scope="module")
def brokers():
    """Both brokers can start here: kfake built with Go, a tansu binary found (./run setup installs both)."""
    try:
        build()
    except KfakeError as error:
        pytest.fail(f"kfake cannot be built here: {error}")
    problem = located(os.environ.get("KTC_TANSU_BIN"))[3]
    if problem:
        pytest.fail(f"no tansu to start: {problem}")


def ktc_run(report: Path) -> tuple[subprocess.CompletedProcess, list[dict], ET.ElementTree]:
    """``ktc run --impl kfake --impl tansu`` on the fixed crash history, as a user would."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev"}
    env.pop("KTC_RUN_ID", None)
    command = ["run", "--impl", "kfake", "--impl", "tansu", "--workers", "0", "--report", str(report), "--"]
    proc = subprocess.run(
        [sys.executable, "-m", "ktc", *command, CRASH_TEST],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    latest = report / "latest"
    rows = json.loads((latest / "results.json").read_text())["rows"] if (latest / "results.json").exists() else []
    return proc, rows, ET.parse(latest / "junit.xml")


def outcomes(case: ET.Element) -> list[tuple[str, str]]:
    """(type, message) of a junit testcase's outcomes other than a pass: failure, error, skip or xfail."""
    return [(child.get("type") or child.tag, child.get("message") or "") for child in case if child.tag != "properties"]


def test_crash_rows_on_kfake_and_tansu_pass_or_are_expected_with_a_source(brokers, tmp_path):
    """``ktc run`` of the fixed crash history (suites/kip33/test_crash_recovery.py) on both, as a user runs it."""
    proc, rows, junit = ktc_run(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    crashing = {case.get("name"): outcomes(case) for case in junit.iter("testcase") if "crash" in case.get("name")}
    assert {name.split("[")[1].split("-")[0] for name in crashing} == {"kfake", "tansu"}, crashing
    declined = [name for name, found in crashing.items() if any(kind == "pytest.skip" for kind, _ in found)]
    assert not declined, crashing  # an expected deviation is an xfail (pytest.xfail), a declined test a skip
    assert rows and {r["implementation"] for r in rows} == {"kfake", "tansu"}
    assert not [r for r in rows if r["verdict"] == "error" or DECLINED in (r.get("reason") or "")], rows
    failed = [r for r in rows if r["verdict"] == "fail"]
    assert all((r.get("expected") or {}).get("source") for r in failed), failed
    lost = [r for r in failed if r["implementation"] == "tansu" and MEMORY_STORAGE in r["expected"]["source"]]
    assert lost, "tansu's crash rows are not explained by its memory storage: " + json.dumps(failed)[:3000]
    kfake_read = [r for r in rows if r["implementation"] == "kfake" and r["verdict"] == "pass"]
    assert kfake_read, rows


@pytest.fixture(scope="module")
def kfake(brokers):
    impl = KFAKE.implementation({}, {})
    try:
        impl.address()
        yield impl
    finally:
        impl.close()


def departures(profile: str) -> set[str]:
    """The clauses kfake's expectations file says fail under ``profile``, each entry with a source."""
    data = expectations.load(ROOT / "expectations" / f"kfake-{KFAKE_VERSION}.toml")
    entries = [e for e in data["expect"] if e["profile"] == profile and e["verdict"] == "fail"]
    assert all(e.get("source") for e in entries)
    return {e["clause"] for e in entries}


def crashes_once(history: History) -> bool:
    return sum(isinstance(op, Crash) for op in history.ops) == 1


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_drawn_histories_with_a_crash_on_kfake_fail_only_where_its_expectations_say(kfake, data):
    """kfake is really restarted (a new process) on its data directory, and every clause it is judged on holds
    over what it answers after, or is one of its listed departures (which a crash does not add to)."""
    caps = kfake.capabilities()
    history = data.draw(histories(profile="kafka-4", max_ops=10, crashes=True).filter(crashes_once), label="history")
    before = kfake.launcher.broker.pid
    trace = kfake.run([history])[0]
    assert kfake.launcher.broker.pid != before, "the crash did not start a new kfake process"
    judged = [c for c in harness.clauses_holding(history.profile) if caps.reason_unsupported(c) is None]
    found = harness.judge_one(history, trace, judged)
    bad = [v for v in found if v.bad and v.clause not in departures(history.profile)]
    assert not bad, bad
    crash = next(i for i, op in enumerate(history.ops) if isinstance(op, Crash))
    assert trace.cut is None or trace.cut.op_index > crash, trace.cut  # it went on past the restart
