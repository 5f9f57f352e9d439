"""A failing run reads like a conformance report, not a crash, and its seeds reproduce.

One real ``ktc run`` against a mutant (before/after swapped) under two xdist workers: its output (the
terminal, and pytest's own in the report's pytest.log, where the terminal names it) holds no line of
ktc's own source, every failure names its clause, quotes it and prints one replay line,
the seed printed is the seed every worker used, and each replay line, run alone under either
Hypothesis profile, fails the same clause again."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MUTANT = "ktc.suites.selftest.mutants:before_after_swapped"
pytestmark = pytest.mark.xdist_group("failure-output")  # one worker makes the shared run once


@functools.cache
def failing_run(scratch: str) -> str:
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        MUTANT,
        "--profile",
        "kafka-4",
        "--workers",
        "2",
        "--report",
        scratch,
        "--",
        "-k",
        "kip937",
    ]
    env = {
        **os.environ,
        "CI": "true",  # as on CI, where pytest would repeat each whole message in the summary
        "GITHUB_ACTIONS": "true",
    }  # and as on GitHub: ktc run adds annotations
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    log = Path(scratch, "latest", "pytest.log")  # ktc run keeps pytest's own output off the terminal
    assert f"pytest's output (tracebacks, JVM and Spark logs): {log.resolve()}" in done.stdout
    return done.stdout + done.stderr + log.read_text()


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> str:
    return failing_run(str(tmp_path_factory.mktemp("failing-run")))


def ktc_source_lines() -> set[str]:
    """Every line of ktc's own modules long enough to be recognisable (not `return None`, a bracket...)."""
    return {
        line.strip()
        for path in (ROOT / "ktc").rglob("*.py")
        for line in path.read_text().splitlines()
        if len(line.strip()) >= 24 and not line.strip().startswith(("#", '"""'))
    }


def test_a_failing_run_prints_no_line_of_ktc_source(output):
    printed = {line.strip() for line in output.splitlines()}
    leaked = sorted(printed & ktc_source_lines())
    assert "Traceback" not in output
    assert not leaked, f"{len(leaked)} lines of ktc's source in the output, e.g. {leaked[:3]}"


def test_each_failure_names_its_clause_quotes_it_and_prints_one_replay_line(output):
    headers = re.findall(r"^(KIP-[\w.-]+) violated by before_after_swapped", output, re.MULTILINE)
    replays = replay_lines(output)
    assert headers and len(replays) == len(headers)
    assert '"if time_difference' in output or "after.max.ms" in output  # the clauses' quotes
    assert all("--impl " + MUTANT in r and "--profile kafka-4" in r and "HYPOTHESIS_PROFILE=" in r for r in replays)


def test_the_short_summary_gives_each_failure_one_line_naming_its_clause(output):
    summary = output.split("short test summary info", 1)[1].splitlines()[1:]
    failed = [line for line in summary if line.startswith("FAILED ")]
    assert failed and all(re.search(r" - KIP-[\w.-]+ violated by before_after_swapped", line) for line in failed)
    assert not any(line.startswith("  ") for line in summary[: len(failed)])


def test_under_github_actions_ktc_run_annotates_each_root_cause_with_its_replay_command(output):
    errors = [line for line in output.splitlines() if line.startswith("::error title=ktc before_after_swapped fails")]
    assert errors and all("replay%3A" in e or "replay: " in e for e in errors), errors


def replay_lines(output: str) -> list[str]:
    return [line.split("replay: ", 1)[1] for line in output.splitlines() if line.startswith("  replay: HYPOTHESIS")]


def test_the_seed_printed_is_the_seed_every_worker_used(output):
    printed = re.search(r"; seed (\d+);", output).group(1)
    used = {re.search(r"--hypothesis-seed=(\d+)", r).group(1) for r in replay_lines(output)}
    assert used == {printed}


@pytest.mark.parametrize("hypothesis_profile", ["dev", "ci"])
def test_every_replay_line_fails_the_same_clause_again_under_either_hypothesis_profile(output, hypothesis_profile):
    failures = re.findall(r"^(KIP-[\w.-]+) violated by", output, re.MULTILINE)
    for clause, line in zip(failures, replay_lines(output)):
        words = shlex.split(line)
        env = dict(os.environ, **dict(w.split("=", 1) for w in words if "=" in w.split("'")[0] and w[0].isupper()))
        env["HYPOTHESIS_PROFILE"] = hypothesis_profile
        argv = [sys.executable, "-m", *[w for w in words if not (w[0].isupper() and "=" in w)], "-p", "no:xdist"]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1 and f"{clause} violated by" in done.stdout, (line, done.stdout[-2000:])
