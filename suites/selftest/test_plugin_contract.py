"""The plug-in contract explains itself: what run() returns is checked before anything is judged, a
breach is one line (once per run, not per test), and a hung run() ends at the per-call timeout."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ktc import reference
from ktc.judge.contract import ANSWERS, traces_problem
from ktc.reference.types import (
    Advance,
    Batch,
    CreateTopic,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    Record,
    RetentionPass,
    StepClock,
)

NOW = 1_700_000_000_000
EVERY_OP = History(
    "kafka-4",
    (
        CreateTopic("t"),
        Produce("t", Batch((Record(NOW),))),
        Advance(1),
        StepClock(0, 1),
        ElectLeader("t", 0),
        RetentionPass("t"),
        ListOffsets("t", -1),
        Fetch("t"),
        DescribeLog("t"),
    ),
    NOW,
)


def test_every_operation_kind_has_an_expected_answer_type():
    assert {type(op) for op in EVERY_OP.ops} == set(ANSWERS)


def test_the_expected_answer_types_are_the_ones_the_reference_gives():
    assert traces_problem([EVERY_OP], [reference.run(EVERY_OP)]) is None


@pytest.mark.parametrize(
    "broken, needle",
    [
        (lambda trace: None, "returned NoneType; expected a sequence with one trace per history"),
        (lambda trace: [trace, trace], "returned 2 traces for 1 histories"),
        (lambda trace: [None], "trace is NoneType; expected a tuple"),
        (lambda trace: [trace[:-1]], "8 results for 9 operations"),
        (
            lambda trace: [trace[:5] + (None,) + trace[6:]],
            "operation 5 (RetentionPass) answered NoneType; expected reference.types.RetentionResult",
        ),
        (
            lambda trace: [trace[:1] + (trace[2],) + trace[2:]],
            "operation 1 (Produce) answered Ack; expected reference.types.ProduceResult",
        ),
    ],
)
def test_a_broken_answer_is_named_by_history_operation_and_expected_type(broken, needle):
    problem = traces_problem([EVERY_OP], broken(reference.run(EVERY_OP)))
    assert problem is not None and needle in problem


ADAPTERS = textwrap.dedent("""
    import time
    from ktc.examples.minimal_broker import MinimalBroker

    class ForgetsOneAnswer(MinimalBroker):
        name = "forgets-one-answer"
        def run(self, histories):
            return [tuple(None if type(op).__name__ == "Fetch" else r for op, r in zip(h.ops, trace))
                    for h, trace in zip(histories, super().run(histories))]

    class Hangs(MinimalBroker):
        name = "hangs"
        def run(self, histories):
            while True:
                time.sleep(0.05)
""")


def ktc_run(tmp_path: Path, adapter: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "adapters_under_test.py").write_text(ADAPTERS)
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        f"adapters_under_test:{adapter}",
        "--profile",
        "kafka-4",
        "--report",
        str(tmp_path / "report"),
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        *extra,
        "--",
        "-k",
        "kip937 and test_validation",
    ]
    env = {**os.environ, "CI": "true"}  # pytest's summary repeats whole messages on CI; ktc's must not
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def rows_of(tmp_path: Path, name: str) -> list[dict]:
    rows = json.loads((tmp_path / "report" / "latest" / "results.json").read_text())["rows"]
    return [r for r in rows if r["implementation"] == name and r["verdict"] != "unsupported"]


def test_an_adapter_answering_none_gets_exactly_one_contract_line_and_error_rows(tmp_path):
    done = ktc_run(tmp_path, "ForgetsOneAnswer")
    output = done.stdout + done.stderr + (tmp_path / "report" / "latest" / "pytest.log").read_text()
    lines = [line for line in output.splitlines() if line.startswith("contract: forgets-one-answer.run()")]
    assert done.returncode == 1, output[-3000:]
    assert "first divergence: forgets-one-answer broke the plug-in contract" in done.stdout  # the terminal's root cause
    assert len(lines) == 1, "\n".join(lines[:5]) or output[-3000:]
    assert "(Fetch) answered NoneType; expected reference.types.FetchResult" in lines[0]
    assert "AttributeError" not in output
    rows = rows_of(tmp_path, "forgets-one-answer")
    assert rows and {r["verdict"] for r in rows} <= {"error", "pass"} and any(r["verdict"] == "error" for r in rows)


def test_a_hung_run_ends_at_the_timeout_with_error_rows_naming_it(tmp_path):
    done = ktc_run(tmp_path, "Hangs", "--impl-timeout", "2")
    rows = rows_of(tmp_path, "hangs")
    assert done.returncode == 1, (done.stdout + done.stderr)[-3000:]
    assert rows and all(r["verdict"] == "error" for r in rows)
    assert all("hangs broke the plug-in contract: did not return within 2 s" in r["reason"] for r in rows)


def test_the_new_impl_skeleton_passes_check_impl(tmp_path):
    new = subprocess.run(
        [sys.executable, "-m", "ktc", "new-impl", "acme_broker"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    check = subprocess.run(
        [sys.executable, "-m", "ktc", "check-impl", "acme_broker:AcmeBroker"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert new.returncode == 0 and (tmp_path / "acme_broker.py").exists(), new.stderr
    assert check.returncode == 0 and "acme-broker: contract kept" in check.stdout, check.stdout + check.stderr


def test_check_impl_names_the_broken_answer_and_exits_1(tmp_path):
    (tmp_path / "adapters_under_test.py").write_text(ADAPTERS)
    done = subprocess.run(
        [sys.executable, "-m", "ktc", "check-impl", "adapters_under_test:ForgetsOneAnswer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(Fetch) answered NoneType; expected reference.types.FetchResult" in done.stdout


def test_check_impl_bounds_a_hung_run(tmp_path):
    (tmp_path / "adapters_under_test.py").write_text(ADAPTERS)
    done = subprocess.run(
        [sys.executable, "-m", "ktc", "check-impl", "adapters_under_test:Hangs", "--impl-timeout", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "did not return within 1 s" in done.stdout, done.stdout + done.stderr


def readme_table() -> dict[str, str]:
    """The README's table: operation -> the result type that answers it."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| `") and "` | `" in line]
    return {cells[1].strip(" `"): cells[2].strip(" `") for cells in rows if cells[1].strip(" `") in OP_NAMES}


OP_NAMES = {op.__name__ for op in ANSWERS}


def test_the_readme_table_of_answers_is_the_contract_ktc_checks():
    assert readme_table() == {op.__name__: result.__name__ for op, result in ANSWERS.items()}
