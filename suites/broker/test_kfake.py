"""A broker ktc did not write for: franz-go's kfake, given to ktc by address as a user's broker would be.

kfake reports no ``log.message.timestamp.*`` configs, so discovery places it by the API versions it
speaks (Produce v13: a Kafka 4 line) and prints that evidence.  With ``--profile kafka-4`` its departures fail, and
``ktc replay`` of one of those failures goes back to that same broker (and says in one line when
the broker is gone).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION, KfakeBroker, KfakeError, build  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-kfake")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kfake():
    try:
        build()
    except KfakeError as error:
        pytest.fail(f"kfake cannot be built here: {error}")
    with KfakeBroker() as broker:
        yield broker


def ktc(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev"}
    env.pop("KTC_RUN_ID", None)
    return subprocess.run(
        [sys.executable, "-m", "ktc", *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def by_address(kfake, tmp_path_factory) -> subprocess.CompletedProcess:
    """A user's whole run on kfake by address, with kfake's expectations: one run serves both tests below (the
    placement is printed before any test runs; a run of no test would pay for the same start and discovery)."""
    return ktc(
        "run",
        "--impl",
        "kafka",
        "--kafka-bootstrap",
        kfake.bootstrap,
        "--report",
        str(tmp_path_factory.mktemp("by-address")),
        "--workers",
        "0",  # one target, one xdist group: a second worker would only collect
        "--expectations",
        str(ROOT / "expectations" / f"kfake-{KFAKE_VERSION}.toml"),
    )


def test_a_broker_without_timestamp_configs_is_placed_by_its_api_versions_with_the_evidence_printed(by_address):
    line = next(line for line in by_address.stderr.splitlines() if "judged as" in line)
    print(line)
    assert "judged as kafka-4" in line and "no log.message.timestamp.* configs on broker 0" in line
    assert "Produce v13" in line and "profile from ApiVersions alone" in line


def test_a_users_own_kfake_judged_by_address_with_kfake_s_expectations_exits_0(by_address):
    """By address ktc cannot tell kfake from Kafka: it adds the kip profile on pinned inputs and asks ListOffsets at
    the versions the broker lists; kfake's file must still explain every failure."""
    proc = by_address
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 new failures, 0 unexpected passes" in proc.stdout


def test_replay_of_a_failure_on_an_external_broker_goes_back_to_that_broker(tmp_path):
    with KfakeBroker() as broker:
        run = ktc(
            "run",
            "--impl",
            "kafka",
            "--kafka-bootstrap",
            broker.bootstrap,
            "--profile",
            "kafka-4",
            "--workers",
            "0",
            "--report",
            str(tmp_path),
            "--",
            "suites/kip937/test_validation.py",
            "-k",
            "future_timestamp",
        )
        assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
        files = sorted((tmp_path / "latest" / "counterexamples").glob("*--kafka--kafka-4.json"))
        assert files, list(tmp_path.iterdir())
        assert json.loads(files[0].read_text())["target"]["bootstrap"] == broker.bootstrap
        again = ktc("replay", str(files[0]))
        print(again.stdout.strip())
        assert again.returncode == 1 and f"on {broker.bootstrap}" in again.stdout and "STILL FAILING" in again.stdout
    gone = ktc("replay", str(files[0]))
    assert gone.returncode == 2 and len(gone.stderr.strip().splitlines()) == 1 and broker.bootstrap in gone.stderr, (
        gone.stderr
    )


UNREACHED = (
    "KIP-937.whole-batch-rejection",
    "KIP-937.error-code-32",
    "KIP-937.validation-before-append",
    "KIP-937.record-error-message",
    "KIP-937.batch-error-message",
)


def test_clauses_kfake_ran_but_never_reached_are_unknown_unexercised_not_unsupported(tmp_path):
    """kfake never rejects a batch for its timestamps, so no example reaches the rejection clauses; the
    every-clause test skips on kfake without declaring anything about them (a skip is no declaration)."""
    run = ktc(
        "run",
        "--impl",
        "kfake",
        "--workers",
        "0",
        "--report",
        str(tmp_path),
        "--",
        "suites/kip937/test_validation.py",
        "suites/stateful/test_every_clause.py",
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    rows = json.loads((tmp_path / "latest" / "results.json").read_text())["rows"]
    found = {r["clause"]: r for r in rows if r["implementation"] == "kfake" and r["clause"] in UNREACHED}
    print({c: (r["verdict"], r["reason"]) for c, r in found.items()})
    assert set(found) == set(UNREACHED)
    assert all(r["verdict"] == "unknown" and r.get("unknown") == "unexercised" for r in found.values()), found
