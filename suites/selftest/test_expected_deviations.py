"""Known deviations inside pytest (ktc/plugin/expected.py): expected failures xfail, unexpected passes fail,
and the shipped expectations/*.toml files are well formed and name real clauses."""

import subprocess
import sys
from pathlib import Path

import pytest

from ktc.plugin import expected
from ktc.reports import expectations
from ktc.reports import outcomes as reports_outcomes
from ktc.reports.registry import Context
from ktc.reports.render import render
from ktc.specs import clauses as registry
from ktc.specs.profiles import names as profile_names

from .reports_support import MUTANT, ROOT, results, scratch

SHIPPED = sorted((ROOT / "expectations").glob("*.toml"))
OVERFLOW = ["suites/pinned", "-k", "overflow", "--profile", "kafka-4"]


def entry(impl: str, clause: str, reason: str, verdict: str = "fail") -> str:
    return (
        f'schema_version = 1\nimplementation = "{impl}"\n\n[[expect]]\nclause = "{clause}"\nprofile = "kafka-4"\n'
        f'verdict = "{verdict}"\nreason = "{reason}"\nsource = "https://bugs.example/1"\n'
    )


def pytest_run(impl: str, expectations_text: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    out = scratch()
    (out / "exp.toml").write_text(expectations_text)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *OVERFLOW,
            *extra,
            "-p",
            "no:cacheprovider",
            "-q",
            "-rxX",
            f"--impl={impl}",
            f"--ktc-expectations={out / 'exp.toml'}",
            "--ktc-report",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, out


def test_a_test_whose_only_failure_is_an_expected_deviation_is_reported_as_xfail():
    done, out = pytest_run(MUTANT, entry("exact_arithmetic", "KIP-937.int64-wraparound", "exact longs"))
    assert done.returncode == 0, done.stdout[-2000:]
    assert "xfailed" in done.stdout and "expected deviation: KIP-937.int64-wraparound: exact longs" in done.stdout
    row = next(r for r in results(out)["rows"] if r["clause"] == "KIP-937.int64-wraparound")
    assert row["verdict"] == "fail" and row["expected"]["reason"] == "exact longs"
    assert "fail*" in (out / "summary.txt").read_text()


def test_a_deviation_that_no_longer_fails_fails_the_run_as_an_unexpected_pass():
    done, _out = pytest_run("reference", entry("reference", "KIP-937.int64-wraparound", "thought broken"))
    assert done.returncode == 1, done.stdout[-2000:]
    assert "ktc: unexpected pass: KIP-937.int64-wraparound on reference/kafka-4" in done.stdout
    assert " passed" in done.stdout and "failed" not in done.stdout  # every test passed: the run fails on the row


def test_an_expected_unknown_that_this_runs_examples_decided_as_pass_is_said_not_failed():
    """Whether examples reach a clause depends on the seed (kfake's KIP-937.log-append-time-overwrites passed on one
    CI seed, unknown on others): a decided pass is no fixed deviation."""
    done, out = pytest_run("reference", entry("reference", "KIP-937.int64-wraparound", "never reached", "unknown"))
    assert done.returncode == 0, done.stdout[-2000:]
    assert "KIP-937.int64-wraparound on reference/kafka-4 passed on this run's examples; " in done.stdout
    assert "unexpected pass" not in done.stdout
    assert reports_outcomes.conforms(results(out))


def test_in_a_partial_selection_a_deviation_that_passed_is_said_not_failed():
    """ktc run passes --ktc-partial for -k, -m or a path inside the suites: the test that shows the deviation may
    not be among those selected."""
    done, out = pytest_run(
        "reference", entry("reference", "KIP-937.int64-wraparound", "thought broken"), "--ktc-partial"
    )
    assert done.returncode == 0, done.stdout[-2000:]
    row = next(r for r in results(out)["rows"] if r["clause"] == "KIP-937.int64-wraparound")
    assert row["verdict"] == "pass" and row["expected"]["undecided"] is True
    answer = render("terminal", results(out), Context(report_dir=str(out), width=200, max_lines=40))
    assert (
        "1 expected deviations not shown by this selection (a whole run decides): KIP-937.int64-wraparound" in answer
        and "unexpected passes" not in answer
    )


def test_a_failure_the_file_does_not_name_still_fails():
    done, _out = pytest_run(MUTANT, entry("exact_arithmetic", "KIP-937.after-bound", "another clause"))
    assert done.returncode == 1 and "xfailed" not in done.stdout


class Named:
    def __init__(self, name: str, version: str):
        self.name, self.version = name, version


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_expectation_names_a_known_clause_and_profile_with_a_reason_and_a_source(path):
    data = expectations.load(path)
    named = (
        data["implementation"],
        f"{data['implementation']}-{data.get('version')}",
    )  # ktc/plugin/expected.py paths_for
    assert path.stem in named and data["expect"]
    for item in data["expect"]:
        clause = registry.all_clauses()[item["clause"]]
        assert item["profile"] in profile_names() and clause.holds_in(item["profile"])
        assert item["reason"].strip() and item["source"].strip(), item


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_shipped_file_holds_its_version_strictly_a_newer_one_loosely_and_an_older_one_not_at_all(path):
    data = expectations.load(path)
    version = str(data.get("version", "any"))
    assert expected.load_index([Named(data["implementation"], version)], ())
    if "version" in data:
        own = expected.load_index([Named(data["implementation"], version)], ()).values()
        assert not any(e.get("inherited") for e in own)
        assert not expected.load_index([Named(data["implementation"], "0.0.0")], ())  # older than every file
        newer = expected.load_index([Named(data["implementation"], "99999999999999")], ()).values()
        if path.stem == f"{data['implementation']}-{version}":  # kfake, tansu: one file per version of one name
            assert newer and all(e["inherited"] == version and e["file"] == path.name for e in newer)
        else:  # a Kafka release is a target of its own name (kafka-3.9.2): no other version shares it
            assert not newer


class Target(Named):
    def __init__(self, name: str, version: str, external: bool):
        super().__init__(name, version)
        self.external = external


KFAKE = next(p for p in SHIPPED if p.stem.startswith("kfake-"))


def test_a_file_given_explicitly_applies_to_the_broker_at_the_address_the_user_gave():
    """A user's own kfake judged by address (target ``kafka``, version ``external HOST:PORT``) is held to
    kfake's file when it is given explicitly; a target ktc started keeps only its own files."""
    by_address = Target("kafka", "external 127.0.0.1:9092", external=True)
    started = Target("kafka-4.4.0", "4.4.0", external=False)

    def held_to_kfake(impls, explicit):
        index = expected.load_index(impls, explicit)
        return {name for (_clause, name, _profile), entry in index.items() if entry["file"] == KFAKE.name}

    assert held_to_kfake([by_address, started], [KFAKE]) == {"kafka"}
    assert held_to_kfake([by_address], ()) == set()  # found by name only: kfake's file is not kafka's
    assert held_to_kfake([started], [KFAKE]) == set()  # nothing known only by address: nothing to apply it to


def test_the_gate_holds_the_broker_known_by_address_to_the_file_given():
    data = expectations.load(KFAKE)
    rows = [{"implementation": "kafka", "implementation_version": "external 127.0.0.1:9092"}]
    clauses = {clause for clause, _name, _profile in expectations.index([data], rows, {"kafka"})}
    assert clauses == {e["clause"] for e in data["expect"]}
    assert {name for _c, name, _p in expectations.index([data], rows, ())} == {"kfake"}  # no target known by address
