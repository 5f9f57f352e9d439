"""Client libraries, judged for real in CI: ``ktc run`` on suites/clients with the two planted-fault drivers
(implementations/clients/planted.py) and one real library (confluent-kafka, on librdkafka), against a local
Apache Kafka behind the capture proxy.  Each planted fault must fail exactly its clause, which the real
library passes; every client row is a pass, a known deviation (expectations/client-*.toml) or unsupported.  The
historical LogAppendTime bugs (kafkajs #768, sarama #1259; implementations/clients/drivers/sources.toml) are
placed exactly: the release before each fix fails the consumer clause with a counterexample and a replay line,
the release after passes it.  Sarama's are judged by one ``ktc run`` of its two releases; kafkajs's by ``ktc matrix
--client kafkajs`` over its two, which says the same as a table, the fix named where the cell turns green and the
failing cell's counterexample and replay listed under it (a second run of kafkajs would judge the same histories
again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ktc.implementations.clients.drivers.build import HERE
from ktc.implementations.clients.libraries import registry

pytestmark = pytest.mark.xdist_group("broker-clients")  # the module on one worker: its fixtures once
ROOT = Path(__file__).resolve().parents[2]
REAL = "confluent-kafka"
PLANTED = {  # driver -> the clause its fault breaks
    "planted-lat-delta": "KIP-32.client-consumer-log-append-time",
    "planted-max-unset": "KIP-32.client-producer-max-timestamp",
}

LAT = "KIP-32.client-consumer-log-append-time"
BUGS = tomllib.loads((HERE / "sources.toml").read_text())["bug"]
HISTORICAL = {"kafkajs": ("1.12.0", "1.13.0"), "sarama": ("v1.20.1", "v1.21.0")}  # (last with the bug, first without)
BY_RUN = ("sarama",)  # judged by ``historical``; kafkajs by ``client_matrix``


def ktc_run(report: Path, names: list[str], *tests: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    impls = [arg for name in names for arg in ("--impl", f"client:{name}")]
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev"}
    env.pop("KTC_RUN_ID", None)
    proc = subprocess.run(
        [sys.executable, "-m", "ktc", "run", *impls, "--workers", "0", "--report", str(report), "--", *tests],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    results = report / "latest" / "results.json"
    return proc, json.loads(results.read_text())["rows"] if results.exists() else []


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict]]:
    return ktc_run(tmp_path_factory.mktemp("clients"), [REAL, *PLANTED], "suites/clients")


@pytest.fixture(scope="module")
def historical(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """The LogAppendTime clause alone, on the releases either side of sarama's fix (one broker, one consume each)."""
    names = [f"{library}-{version}" for library in BY_RUN for version in HISTORICAL[library]]
    return ktc_run(
        tmp_path_factory.mktemp("historical"), names, "suites/clients/test_consumer.py", "-k", "log_append_time"
    )


@pytest.fixture(scope="module")
def client_matrix(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict | None]:
    """``ktc matrix --client kafkajs`` over the releases either side of its fix, the LogAppendTime clause alone."""
    report = tmp_path_factory.mktemp("matrix")
    env = {**os.environ, "HYPOTHESIS_PROFILE": "dev"}
    env.pop("KTC_RUN_ID", None)
    versions = ",".join(HISTORICAL["kafkajs"])
    proc = subprocess.run(
        [sys.executable, "-m", "ktc", "matrix", "--client", "kafkajs", "--versions", versions, "--workers", "0"]
        + ["--report", str(report), "--", "suites/clients/test_consumer.py", "-k", "log_append_time"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    tables = sorted(report.glob("*/matrix.json"))
    return proc, json.loads(tables[-1].read_text()) if tables else None


def named(library: str) -> str:
    """The implementation a library's rows name: ``client-<library>-<its pinned version>``."""
    return f"client-{library}-{registry()[library].default_version}"


def verdicts(rows: list[dict], library: str, clause: str) -> set[str]:
    return {r["verdict"] for r in rows if r["implementation"] == named(library) and r["clause"] == clause}


@pytest.mark.parametrize("driver", sorted(PLANTED))
def test_a_planted_fault_fails_its_clause_which_a_real_library_passes(rows, driver):
    proc, found = rows
    assert found, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert verdicts(found, driver, PLANTED[driver]) == {"fail"}, [r for r in found if r["clause"] == PLANTED[driver]]
    assert verdicts(found, REAL, PLANTED[driver]) == {"pass"}, [r for r in found if r["clause"] == PLANTED[driver]]
    others = {r["clause"] for r in found if r["implementation"] == named(driver) and r["verdict"] == "fail"}
    assert others <= {PLANTED[driver], "KIP-228.consumer-table"}, f"{driver} fails more than its fault: {others}"


def test_every_client_row_is_a_pass_a_known_deviation_or_unsupported(rows):
    proc, found = rows
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {r["implementation"] for r in found} == {named(name) for name in (REAL, *PLANTED)}
    bad = [r for r in found if r["verdict"] not in ("pass", "unsupported") and not r.get("expected")]
    assert not bad, bad
    judged = [r for r in found if r["clause"] == "KIP-228.consumer-table" and r["profile"] == "client-kip"]
    assert judged and all(r["verdict"] != "unsupported" for r in judged), judged


@pytest.mark.parametrize("library", BY_RUN)
def test_a_historical_log_append_time_bug_fails_before_its_fix_and_passes_after(historical, library):
    proc, found = historical
    assert found, proc.stdout[-3000:] + proc.stderr[-2000:]
    before, after = (f"client-{library}-{version}" for version in HISTORICAL[library])
    failed = [r for r in found if r["implementation"] == before and r["clause"] == LAT]
    assert failed and {r["verdict"] for r in failed} == {"fail"}, failed
    assert all(r.get("reason") and r.get("replay", "").startswith("pytest ") for r in failed), failed
    assert all(not r.get("expected") for r in failed), f"an expectation hides {before}'s bug: {failed}"
    passed = [r for r in found if r["implementation"] == after and r["clause"] == LAT]
    assert passed and {r["verdict"] for r in passed} == {"pass"}, passed


def test_the_matrix_over_a_clients_releases_places_its_log_append_time_bug_between_them(client_matrix):
    proc, table = client_matrix
    assert table, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stdout[-3000:]  # the release before the fix fails, and nothing explains it
    before, after = HISTORICAL["kafkajs"]
    bug = next(b for b in BUGS if b["library"] == "kafkajs" and b.get("clause") == LAT)
    number = bug["report"].rsplit("/", 1)[1]
    rows = {r["row"]: r for r in table["rows"]}
    for profile in ("client", "client-kip"):
        row = rows[f"{LAT} ({profile})"]
        assert row["cells"] == {before: "fail", after: "pass"}, row
        assert f"#{number}" in row["notes"][after], row
    failures = table["failures"]
    assert {(f["version"], f["row"]) for f in failures} == {(before, f"{LAT} ({p})") for p in ("client", "client-kip")}
    for failure in failures:
        assert "LogAppendTime batch" in failure["reason"] and "the model:" in failure["reason"], failure
        assert failure["replay"].startswith("pytest ") and f"--impl client:kafkajs-{before}" in failure["replay"]
        assert f"replay: {failure['replay']}" in proc.stdout
