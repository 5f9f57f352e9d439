"""``ktc hunt``: a planted fault is found, minimised and written as both reproducers; bad flags are one line
and exit 2; a correct implementation yields no finding.  No broker: the targets are the reference and one of
the suite's own mutants (suites/selftest/mutants.py)."""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ktc.cli import main
from ktc.hunt.triage import verdict
from ktc.specs.clauses import all_clauses
from ktc.suites.selftest.mutants import BY_NAME

ROOT = Path(__file__).resolve().parents[2]
PLANTED = BY_NAME["trusts_header_max"]  # believes a batch header's MaxTimestamp instead of its records
KTC_MODULES = {"ktc", "reference", "specs", "strategies", "implementations", "suites", "reports"}


def hunt(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ktc", "hunt", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def hunt_own(tmp_path: Path, impl: str, *args) -> subprocess.CompletedProcess:
    """``ktc hunt`` of a target the test wrote into ``tmp_path`` (seed 1, report in ``tmp_path/r``)."""
    return subprocess.run(
        [sys.executable, "-m", "ktc", "hunt", "--impl", impl, *args, "--seed", "1", "--report", str(tmp_path / "r")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
    )


def imported(tree: ast.AST) -> set[str]:
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    return {name.split(".")[0] for name in names}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    report = tmp_path_factory.mktemp("hunt") / "report"
    done = hunt(
        "--impl",
        f"ktc.suites.selftest.mutants:{PLANTED.name}",
        "--profile",
        PLANTED.profiles[0],
        "--budget",
        "50s",
        "--seed",
        "1",
        "--report",
        str(report),
    )
    return done, report, json.loads((report / "hunt.json").read_text())


def test_a_planted_fault_is_found_and_minimised(planted):
    done, report, doc = planted
    assert done.returncode == 1, done.stderr
    [finding] = doc["findings"]
    assert PLANTED.clause in finding["clauses"]
    assert finding["ops"] <= 3 and finding["records"] == 1  # CreateTopic, one Produce of one record, a Fetch
    rows = json.loads((report / "results.json").read_text())["rows"]
    assert any(r["clause"] == PLANTED.clause and r["verdict"] == "fail" and r["counterexample"] for r in rows)
    assert doc["examples"] > 0 and doc["coverage"]["a disagreeing header"] > 0


def test_resume_replays_the_saved_failure_first(planted):
    _done, report, _doc = planted
    assert any((report / "hypothesis-db").rglob("*")), "the example database holds nothing to resume from"
    again = hunt(
        "--impl",
        f"ktc.suites.selftest.mutants:{PLANTED.name}",
        "--profile",
        PLANTED.profiles[0],
        "--budget",
        "30s",
        "--seed",
        "2",
        "--report",
        str(report),
        "--resume",
    )
    assert again.returncode == 1, again.stderr
    assert json.loads((report / "hunt.json").read_text())["examples"] <= 2  # the saved example, replayed first


def test_the_script_stands_alone_and_names_the_clause(planted):
    _done, _report, doc = planted
    text = Path(doc["findings"][0]["script"]).read_text()
    tree = ast.parse(text)  # valid Python
    assert not imported(tree) & KTC_MODULES
    clause = all_clauses()[doc["findings"][0]["clause"]]
    assert clause.id in text and " ".join(clause.quote.split())[:60] in text


def test_the_sketch_names_the_method_under_test(planted):
    _done, _report, doc = planted
    text = Path(doc["findings"][0]["sketch"]).read_text()
    assert "LogValidator#validateMessagesAndAssignOffsets" in text and doc["findings"][0]["clause"] in text


def test_a_correct_implementation_yields_no_finding(tmp_path):
    done = hunt(
        "--impl", "reference", "--profile", "kafka-4", "--budget", "10s", "--seed", "1", "--report", str(tmp_path / "r")
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "r" / "hunt.json").read_text())
    assert doc["findings"] == [] and doc["examples"] > 0
    table = json.loads((tmp_path / "r" / "results.json").read_text())["provenance"]["targets"]
    assert [t["duration_s"] for t in table] == [doc["seconds"]]  # the table's time is the hunt's, not ~0.0s


@pytest.mark.parametrize(
    "args,needle",
    [
        ([], "required: --impl"),
        (["--impl", "nope"], "unknown implementation 'nope'"),
        (["--impl", "reference", "--budget", "soon"], "--budget 'soon'"),
        (["--impl", "reference", "--budget", "0s"], "--budget '0s'"),
        (["--impl", "reference", "--seed", "x"], "--seed 'x'"),
        (["--impl", "reference", "--profile", "kafka-9"], "unknown profile 'kafka-9'"),
        (["--impl", "reference", "--brokers", "7"], "--brokers '7'"),
        (["--impl", "reference", "--expectations", "/no/such.toml"], "--expectations /no/such.toml"),
        (["--impl", "reference", "--bogus"], "unrecognized arguments: --bogus"),
        (["--impl", "kafka", "--kafka-bootstrap", "127.0.0.1:1"], "cannot reach Kafka at 127.0.0.1:1"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(args, needle, capsys):
    assert main(["hunt", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_resume_needs_an_earlier_hunt_and_a_new_hunt_needs_a_fresh_directory(tmp_path, capsys):
    assert main(["hunt", "--impl", "reference", "--resume", "--report", str(tmp_path)]) == 2
    assert "holds no earlier hunt" in capsys.readouterr().err
    (tmp_path / "hypothesis-db").mkdir()
    assert main(["hunt", "--impl", "reference", "--report", str(tmp_path)]) == 2
    assert "pass --resume" in capsys.readouterr().err


def test_the_script_encodes_each_batch_as_ktc_s_client_does(planted):
    """The standalone encoder (CRC32C included) against ktc's own, which the broker tier holds to real brokers."""
    import importlib.util

    from ktc.judge.serialize import from_data
    from ktc.kafka.client.records import encode_batch
    from ktc.reference.types import Produce

    _done, _report, doc = planted
    spec = importlib.util.spec_from_file_location("reproduce", doc["findings"][0]["script"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    produces = [op for op in from_data(doc["findings"][0]["counterexample"]["history"]).ops if isinstance(op, Produce)]
    sent = [op for op in module.DATA["ops"] if op["op"] == "Produce"]
    assert produces and len(sent) == len(produces)
    for op, data in zip(produces, sent):
        assert module.encode_batch(data["batch"], 0) == encode_batch(op.batch)


def test_a_finding_replays_with_ktc_replay(planted):
    """The finding's counterexample.json is a replay file: still failing on the mutant, fixed on the reference."""
    _done, _report, doc = planted
    path = str(Path(doc["findings"][0]["folder"]) / "counterexample.json")
    on_mutant = subprocess.run(
        [sys.executable, "-m", "ktc", "replay", path], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert on_mutant.returncode == 1 and on_mutant.stdout.startswith("STILL FAILING"), on_mutant.stderr
    on_reference = subprocess.run(
        [sys.executable, "-m", "ktc", "replay", path, "--impl", "reference"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert on_reference.returncode == 0 and on_reference.stdout.startswith("FIXED"), on_reference.stdout


def test_a_script_that_cannot_reach_a_broker_says_so_in_one_line_and_triage_does_not_call_it_affected(planted):
    _done, _report, doc = planted
    script = doc["findings"][0]["script"]
    done = subprocess.run(
        [sys.executable, script, "--bootstrap", "127.0.0.1:1"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3 and done.stdout.strip().splitlines()[-1].startswith("COULD NOT RUN:"), done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert verdict(done.returncode, done.stdout + done.stderr).startswith("could not run (exit 3)")
    assert verdict(1, "Traceback (most recent call last):\n...\nKeyError: 'x'").startswith("could not run (exit 1)")
    assert verdict(1, "...\nREPRODUCED: the broker answers as the finding says") == "affected"


def test_a_target_that_can_run_none_of_the_histories_stops_the_hunt_in_one_line_with_exit_2(tmp_path):
    (tmp_path / "picky.py").write_text(
        textwrap.dedent("""
        from dataclasses import replace
        from ktc.implementations.reference import ReferenceImplementation
        class Picky(ReferenceImplementation):
            name = "picky"
            def capabilities(self):
                return replace(super().capabilities(), cannot_run=lambda history: "runs no generated history")
        picky = Picky()
    """)
    )
    done = hunt_own(tmp_path, "picky:picky", "--profile", "kafka-4", "--budget", "5m")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "stopped: nothing judged: picky could run none of the histories drawn" in done.stdout


@pytest.mark.parametrize(
    "before_max_ms,elected,moves",
    [(None, 1, True), (None, 0, False), (-5, 1, False)],
    ids=["to-another-broker", "to-the-leader-itself", "on-a-topic-the-broker-refused"],
)
def test_an_election_counts_as_a_leader_change_only_where_leadership_moves(before_max_ms, elected, moves):
    from ktc import reference
    from ktc.hunt.signals import covered
    from ktc.reference.types import CreateTopic, ElectLeader, Fetch, History, TopicConfig

    topic = TopicConfig(before_max_ms=before_max_ms)
    history = History(
        "kafka-4", (CreateTopic("t", topic), ElectLeader("t", elected), Fetch("t")), 1_700_000_000_000, (0, 5)
    )
    assert ("a leader change" in covered(history, reference.run(history))) is moves


def test_a_target_on_fixed_clocks_is_hunted_with_leader_changes_on_those_clocks(tmp_path):
    """Like the 3-node cluster: it runs only histories on its own three clocks, with one leader change."""
    (tmp_path / "fixed.py").write_text(
        textwrap.dedent("""
        from dataclasses import replace
        from ktc.implementations.kafka.cluster_histories import cannot_run
        from ktc.implementations.reference import ReferenceImplementation
        CLOCKS = (0, 150_000, -150_000)
        class Fixed(ReferenceImplementation):
            name = "fixed"
            def capabilities(self):
                return replace(super().capabilities(), clock_offsets=CLOCKS,
                               cannot_run=lambda history: cannot_run(history, CLOCKS))
        fixed = Fixed()
    """)
    )
    done = hunt_own(tmp_path, "fixed:fixed", "--profile", "kip", "--budget", "4s")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads((tmp_path / "r" / "hunt.json").read_text())
    assert data["examples"] > 0 and data["coverage"]["a leader change"] > 0, data["coverage"]
