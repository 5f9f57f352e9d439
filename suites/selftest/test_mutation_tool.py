"""The mutation tool (mutation/): it mutates a copy, never the reference; it kills what the suites can see;
it refuses bad input in one line; a stopped run leaves no process and no work directory behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("cosmic_ray", reason="the mutation tool needs cosmic-ray (the test extra installs it)")

from ktc.suites._support import interruptible  # noqa: E402
from mutation import subject  # noqa: E402
from mutation.mutants import enumerate_mutants, sample  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# A mutant a pinned table kills at once: the and/or of KIP-937's validation block in append.py.
KILLABLE = "reference/append.py:core/ReplaceAndWithOr:1"
# A mutant no suite kills: KIP-870's unspecified floor for retention.max.eventtime.ms.
SURVIVOR = "reference/configs.py:core/NumberReplacer:11"


def mutation(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mutation", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=interruptible,
        **popen,
    )


def test_the_copy_differs_from_the_reference_only_in_where_it_takes_the_shared_types(tmp_path):
    for copy in subject.copy_into(tmp_path):
        original = (ROOT / subject.original_of(copy)).read_text()
        assert copy.read_text() == original.replace("from .types import", "from ktc.reference.types import")


def test_every_rule_module_has_mutants_and_every_key_is_unique(tmp_path):
    mutants = enumerate_mutants(subject.copy_into(tmp_path))
    assert {m.module for m in mutants} == {f"reference/{name}.py" for name in subject.RULE_MODULES}
    assert len({m.key for m in mutants}) == len(mutants)
    assert all(m.diff().count("\n-") == 1 for m in sample(mutants, 25, seed=1))  # one line changed


def test_a_sample_is_stable_for_a_seed_and_differs_between_seeds(tmp_path):
    mutants = enumerate_mutants(subject.copy_into(tmp_path))
    assert sample(mutants, 30, 7) == sample(mutants, 30, 7) != sample(mutants, 30, 8)


@pytest.mark.parametrize("args", [["--wokers", "2"], ["--max", "0"], ["--only", "reference/nope.py:x:0"]])
def test_bad_input_is_one_line_and_exit_2(args):
    out, err = mutation(*args).communicate(timeout=120)
    assert len(err.strip().splitlines()) == 1 and err.startswith("mutation: error:"), err


def test_a_mutant_the_pinned_tables_see_is_killed_and_reported(tmp_path):
    # --timeout skips the unmutated baseline run (every suite, twice: about 100 s) that only sets the timeout
    proc = mutation("--only", KILLABLE, "--out", str(tmp_path), "--timeout", "600")
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads((tmp_path / "mutation.json").read_text())
    [row] = report["mutants"]
    assert (row["key"], row["class"], report["summary"]["score"]) == (KILLABLE, "killed", 1.0)
    assert row["test"].startswith("suites/pinned/") and "KIP-937" in " ".join(row["clauses"])
    assert "## Surviving mutants" in (tmp_path / "mutation.md").read_text()


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def cwd(pid: int) -> Path:
    try:
        return Path(f"/proc/{pid}/cwd").resolve()
    except OSError:
        return Path("/")


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists() and " Z " not in Path(f"/proc/{p}/stat").read_text()}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_run_stopped_by_a_signal_leaves_no_worker_child_or_work_directory(tmp_path, signum):
    from mutation import journal

    scratch, out = tmp_path / "tmp", tmp_path / "r"
    scratch.mkdir()
    journal.start(out, seed=7, timeout_s=60)  # resumed: no baseline, every mutant queued (more than a pipe holds)
    proc = mutation(
        "--resume", "--seed", "7", "--out", str(out), env={**os.environ, "TMPDIR": str(scratch)}, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while not list(scratch.glob("ktc-mutate-*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # a worker has made its copy: it is running the unmutated suites
    time.sleep(2)
    started = descendants(proc.pid)  # the run in the copy, its workers, the resource tracker, a forked pytest
    assert any(str(cwd(p)).startswith(str(scratch / "ktc-snapshot-")) for p in started)  # they judge a copy
    os.killpg(proc.pid, signum)  # as a terminal (SIGINT) or a CI runner (SIGTERM) stops a job
    proc.communicate(timeout=120)
    gone = time.monotonic() + 30
    while ((left := list(scratch.iterdir())) or alive(started)) and time.monotonic() < gone:
        time.sleep(0.2)
    assert started and proc.returncode == 130 and left == []
    assert not alive(started), {p: Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in alive(started)}


def test_a_resumed_run_takes_decided_mutants_from_the_journal_and_runs_none_again(tmp_path):
    from mutation import journal
    from mutation.runner import Outcome

    path = journal.start(tmp_path, seed=7, timeout_s=60)
    journal.append(path, Outcome(KILLABLE, "killed", 1.5, "mutation-quick", "suites/pinned/t.py::t", ("KIP-937.x",)))
    with path.open("a") as torn:
        torn.write('{"key": "reference/append.py:cor')  # the run was killed mid-write
    out, err = mutation("--resume", "--seed", "7", "--only", KILLABLE, "--out", str(tmp_path)).communicate(timeout=300)
    assert "0 mutants to run (1 from the journal)" in out, err[-2000:]
    [row] = json.loads((tmp_path / "mutation.json").read_text())["mutants"]
    assert (row["key"], row["class"], row["test"]) == (KILLABLE, "killed", "suites/pinned/t.py::t")


@pytest.mark.parametrize("seed", ["7", "8"], ids=["no-journal", "another-seed"])
def test_a_resume_without_its_journal_is_one_line_and_exit_2(tmp_path, seed):
    from mutation import journal

    if seed == "8":
        journal.start(tmp_path, seed=7, timeout_s=60)
    proc = mutation("--resume", "--seed", seed, "--out", str(tmp_path))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1 and err.startswith("mutation: error:"), err


def test_shrinking_is_timed_on_killed_mutants_of_the_journal(tmp_path):
    from mutation import journal
    from mutation.runner import Outcome

    test = "suites/pinned/test_kip937_pseudo_code.py::test_new_validation_logic_block_is_the_kip_profile[mutant-kip]"
    journal.append(journal.start(tmp_path, seed=7, timeout_s=60), Outcome(KILLABLE, "killed", 1.0, "q", test))
    out, err = mutation("--shrink", "1", "--seed", "7", "--out", str(tmp_path)).communicate(timeout=300)
    [row] = json.loads((tmp_path / "shrinking.json").read_text())["mutants"]
    assert (row["key"], row["status"]) == (KILLABLE, "failed again"), err[-2000:]
    assert row["ops"] >= 1 and "--shrink 1 --seed 7" in (tmp_path / "shrinking.md").read_text()


def test_a_resumed_run_given_some_mutants_still_reports_every_mutant_of_its_journal(tmp_path):
    from mutation import journal
    from mutation.runner import Outcome

    path = journal.start(tmp_path, seed=7, timeout_s=60)
    journal.append(path, Outcome(KILLABLE, "killed", 1.5, "mutation-quick", "suites/pinned/t.py::t", ("KIP-937.x",)))
    journal.append(path, Outcome(SURVIVOR, "survived", 40.0, "mutation"))
    out, err = mutation("--resume", "--seed", "7", "--only", KILLABLE, "--out", str(tmp_path)).communicate(timeout=300)
    rows = json.loads((tmp_path / "mutation.json").read_text())["mutants"]
    assert {(r["key"], r["class"]) for r in rows} == {(KILLABLE, "killed"), (SURVIVOR, "survived")}, err[-2000:]


def test_retrying_survivors_runs_them_again_and_the_last_outcome_counts(tmp_path):
    from mutation import journal
    from mutation.runner import Outcome

    journal.append(journal.start(tmp_path, seed=7, timeout_s=60), Outcome(KILLABLE, "survived", 1.0, "mutation"))
    proc = mutation("--resume", "--retry-survivors", "--seed", "7", "--only", KILLABLE, "--out", str(tmp_path))
    out, err = proc.communicate(timeout=600)
    assert "1 mutants to run (0 from the journal)" in out, err[-2000:]
    assert [o.status for o in journal.resume(tmp_path, 7)[2]] == ["killed"]
