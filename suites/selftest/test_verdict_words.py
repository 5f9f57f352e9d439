"""Each verdict word means one thing: ``unsupported`` only where the implementation declares
it does not implement a clause or profile; a clause it ran but no example reached is ``unknown``
(unexercised); and the default ``--profile own`` has no blanket 'does not implement profile' rows.

Judged on a double with a Kafka 3.9 release's capabilities (suites/selftest/doubles.py): the
case a blanket rule gets wrong is ``KIP-937.after-bound`` under ``kafka-3.6``, which a
release is held to only through Kafka's own change KAFKA-14991, whose pinned history never reaches
the after bound.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOUBLE = "ktc.suites.selftest.doubles:release_3_9"
SELECTION = ("-k", "KAFKA-14991 or after_bound or every_clause")
pytestmark = pytest.mark.xdist_group("verdict-words")  # one worker makes both runs once


@functools.cache
def rows_of(profile: str, scratch: str) -> dict:
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        DOUBLE,
        "--profile",
        profile,
        "--workers",
        "0",
        "--hypothesis-profile",
        "dev",
        "--report",
        scratch,
        "--",
        *SELECTION,
    ]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "CI": "true"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(Path(scratch, "latest", "results.json").read_text())["rows"]
    return {(r["clause"], r["profile"]): r for r in rows}


@pytest.fixture(scope="module")
def every_profile(tmp_path_factory) -> dict:
    return rows_of("all", str(tmp_path_factory.mktemp("all")))


@pytest.fixture(scope="module")
def own_profile(tmp_path_factory) -> dict:
    return rows_of("own", str(tmp_path_factory.mktemp("own")))


def test_a_profile_the_release_does_not_implement_stays_unsupported_under_profile_all(every_profile):
    row = every_profile[("KIP-937.after-bound", "kafka-3.6")]
    assert row["verdict"] == "unsupported" and "does not implement profile kafka-3.6" in row["reason"], row


def test_the_default_run_has_no_row_for_a_profile_the_release_does_not_implement(own_profile):
    assert ("KIP-937.after-bound", "kafka-3.6") not in own_profile
    blanket = [key for key, row in own_profile.items() if "does not implement profile" in (row.get("reason") or "")]
    assert not blanket, blanket


def test_the_default_run_keeps_what_kafkas_own_change_decided_under_its_release_profile(own_profile):
    row = own_profile[("KIP-937.before-bound", "kafka-3.6")]
    assert row["verdict"] == "pass" and row["examples"] > 0, row


def test_the_default_run_judges_the_release_under_its_own_profile(own_profile):
    row = own_profile[("KIP-937.after-bound", "kafka-3.9")]
    assert row["verdict"] == "pass" and row["examples"] > 0, row
    assert {profile for _clause, profile in own_profile} <= {"kafka-3.9", "kafka-3.6", "kip"}


def test_both_runs_agree_on_every_row_the_default_run_keeps(own_profile, every_profile):
    differ = {
        key: (row["verdict"], every_profile.get(key, {}).get("verdict"))
        for key, row in own_profile.items()
        if row["verdict"] != every_profile.get(key, {}).get("verdict")
    }
    assert not differ, differ


def test_an_example_that_could_only_not_be_judged_is_an_error_row_and_a_violation_a_fail_row():
    """``fail`` says the implementation broke the clause; a topic that never became ready (nothing decided) is
    ``error``, with the same counterexample to replay."""
    from ktc.checks.verdicts import Mismatch, Validity, Verdict
    from ktc.judge.harness import ClauseViolation
    from ktc.plugin.rows import failed_outcome
    from ktc.reference.types import CreateTopic, History

    clause, history = "KIP-937.before-bound", History("kafka-3.9", (CreateTopic("t"),))
    unjudged = Verdict(clause, Validity.ERROR, notes=("topic ktc-t partition 0 not ready 66 s after CreateTopics",))
    broken = Verdict(clause, Validity.FAIL, compared=1, mismatch=Mismatch(1, "error_code", 32, 0))
    error_row = failed_outcome(clause, ClauseViolation([unjudged], history, "kafka"), None)
    fail_row = failed_outcome(clause, ClauseViolation([broken], history, "kafka"), None)
    assert (error_row["verdict"], fail_row["verdict"]) == (Validity.ERROR, Validity.FAIL)
    assert "could not be judged" in error_row["reason"] and error_row["counterexample"]["history"]
