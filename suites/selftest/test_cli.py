"""The ktc command: one-line errors with exit 2 on bad input; a run writes results.json."""

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ktc(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ktc", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["run", "--impl", "nope"], "unknown implementation 'nope'"),
        (["run", "--profile", "kafka-9"], "unknown profile 'kafka-9'"),
        (["run", "--impl", "package.module:"], "unknown implementation"),
        (["run", "--impl", "no_such_module_xyz:Impl"], "cannot import 'no_such_module_xyz'"),
        (["run", "--impl", "json:JSONDecoder"], "is not an implementation"),
        (["run", "--bogus-option"], "unrecognized arguments: --bogus-option"),
        (["frobnicate"], "invalid choice"),
        (["run", "--impl", "kafka", "--kafka-bootstrap", "127.0.0.1:1"], "cannot reach Kafka at 127.0.0.1:1"),
        (["run", "--impl", "kafka", "--kafka-bootstrap", "no-port"], "expected HOST:PORT"),
        (["run", "--impl", "spark", "--spark-conf", "foo=bar"], "expected spark.KEY=VALUE"),
        (["run", "--seed", "abc"], "--seed 'abc': expected a whole number"),
        (["run", "--seed", "7", "--", "--hypothesis-seed=8"], "give the seed once"),
    ],
)
def test_bad_input_prints_one_line_and_exits_2(args, needle):
    done = ktc(*args)
    assert done.returncode == 2
    assert needle in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_clauses_check_exits_zero_and_lists_every_clause():
    done = ktc("clauses", "--check")
    assert done.returncode == 0, done.stderr
    assert "KIP-937.after-bound" in done.stdout and "0 problems" in done.stderr


def test_run_writes_results_with_a_row_per_clause_and_profile_under_the_seed_given(tmp_path):
    done = ktc(
        "run",
        "--impl",
        "reference",
        "--profile",
        "kafka-4",
        "--report",
        str(tmp_path),
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        "--seed",
        "7",
        "--",
        "-k",
        "overflow",
    )
    assert done.returncode == 0, done.stdout[-2000:]
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert doc["schema_version"] == 3
    assert {r["profile"] for r in doc["rows"]} == {"kafka-4"}
    assert str(doc["provenance"]["hypothesis"]["seed"]) == "7" and "seed 7," in done.stdout + done.stderr
    assert {"clause", "implementation", "profile", "verdict", "examples"} <= set(doc["rows"][0])
    assert (tmp_path / "latest" / "summary.txt").read_text().startswith("ktc results")


def test_run_given_a_test_file_after_the_dashes_runs_that_file_alone(tmp_path):
    done = ktc(
        "run",
        "--report",
        str(tmp_path),
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        "--",
        "suites/kip937/test_validation.py",
        "-k",
        "not generated",
    )
    assert done.returncode == 0, done.stdout[-2000:]
    modules = {case.get("classname") for case in ElementTree.parse(tmp_path / "latest" / "junit.xml").iter("testcase")}
    assert modules == {"suites.kip937.test_validation"}, modules


def test_run_against_a_mutant_exits_1_with_a_counterexample(tmp_path):
    done = ktc(
        "run",
        "--impl",
        "ktc.suites.selftest.mutants:exact_arithmetic",
        "--profile",
        "kafka-4",
        "--report",
        str(tmp_path),
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        "--",
        "-k",
        "overflow",
        "-x",
    )
    assert done.returncode == 1
    rows = json.loads((tmp_path / "latest" / "results.json").read_text())["rows"]
    failed = [r for r in rows if r["verdict"] == "fail"]
    assert failed and failed[0]["counterexample"]["history"]["type"] == "History"


@pytest.mark.parametrize(
    ("args", "narrower"),
    [
        (["suites/kip33"], True),
        (["-k", "overflow"], True),
        (["-m", "pinned"], True),
        ([], False),
        (["--basetemp", "/tmp/x"], False),
        (["-x"], False),
    ],
)
def test_a_selection_narrower_than_the_suites_is_partial(args, narrower):
    from ktc.cli.run_command import partial
    from ktc.paths import suites_dir

    assert partial(args, suites_dir()) is narrower


def test_each_ktc_run_names_its_topics_with_a_run_id_of_its_own_even_inside_a_pytest_session(monkeypatch):
    """A pytest session sets KTC_RUN_ID for its workers; a ``ktc run`` it starts is another run: two at once on one
    broker must never share a topic name (measured: two runs of one seed on one broker, sharing the id, deleted and
    read each other's topics)."""
    from argparse import Namespace

    from ktc.cli.run_command import child_env

    monkeypatch.setenv("KTC_RUN_ID", "0000000000")
    first, second = (child_env(Namespace(hypothesis_profile="dev"))["KTC_RUN_ID"] for _ in range(2))
    assert "0000000000" not in (first, second) and first != second


@pytest.mark.parametrize(
    "cores, targets, workers",
    [(1, 12, 2), (2, 12, 3), (2, 1, 2), (16, 1, 2), (16, 5, 6), (16, 12, 8)],
)
def test_a_run_without_workers_gets_one_more_than_its_targets_and_than_the_cores_at_most_eight(
    monkeypatch, cores, targets, workers
):
    from ktc.cli import run as cli_run

    monkeypatch.setattr(cli_run.os, "cpu_count", lambda: cores)
    assert cli_run.default_workers(targets) == str(workers)
