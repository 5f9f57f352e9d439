"""``ktc hunt``'s findings: named after the clause their first divergence breaks, every failing row with its own
counterexample and reproducer, drafts in the target project's form whose test compiles (javac) or builds (go vet),
and a triage that relaxes configs an older release does not know before giving up.  No broker: the targets are
the suite's own mutants (suites/selftest/mutants.py), judged on histories written here."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ktc.hunt import command, draft, engine, report, triage
from ktc.hunt.explain import explainer
from ktc.judge.harness import judge
from ktc.judge.serialize import from_data
from ktc.reference.types import (
    Advance,
    CreateTopic,
    Fetch,
    History,
    ListOffsets,
    Produce,
    Record,
    RetentionPass,
    TopicConfig,
)
from ktc.reference.types import Batch as KBatch
from ktc.reports.rootcause import cause_of
from ktc.suites.selftest.mutants import BY_NAME

START = 1_700_000_000_000
WEEK = 604_800_000


def hunt_on(name: str) -> engine.Hunt:
    impl = BY_NAME[name]
    return engine.Hunt(impl, ("kafka-4",), explainer(impl, []), time.monotonic() + 60, 1, None)


def unexplained(hunt: engine.Hunt, history: History) -> list:
    return engine.unexplained(hunt, history, judge(hunt.impl, [history], hunt.clauses(history.profile))[0])


def at_after_bound() -> History:
    """One record exactly at now + message.timestamp.after.max.ms: accepted, both bounds being inclusive."""
    config = TopicConfig(before_max_ms=1000, after_max_ms=86_400_000)
    ops = (CreateTopic("t", config), Produce("t", KBatch((Record(START + 86_400_000),))))
    return History(ops=ops, start_ms=START, profile="kafka-4")


def after_retention(*reads) -> History:
    """A record a week old, deleted by retention; then ``reads``."""
    ops = (
        CreateTopic("t", TopicConfig()),
        Produce("t", KBatch((Record(START),))),
        Advance(WEEK + 1),
        RetentionPass("t"),
        *reads,
    )
    return History(ops=ops, start_ms=START, profile="kafka-4")


def test_a_finding_is_named_after_the_clause_its_first_divergence_breaks():
    """A produce refused with 32 where 0 is due: the bound's clause, not the clause that sees no base offset."""
    hunt = hunt_on("after_bound_exclusive")
    found = engine.Finding(unexplained(hunt, at_after_bound()), at_after_bound())
    clauses = {v.clause for v in found.verdicts}
    assert {"KIP-937.bounds-inclusive", "KIP-32.offsets-contiguous"} <= clauses
    assert found.verdicts[0].clause == "KIP-937.bounds-inclusive"
    assert found.verdicts[0].divergence.field == "error_code"


def test_every_fail_row_has_its_counterexample_and_its_reproducer(tmp_path, capsys):
    """The search saw EARLIEST and the read invariant over it fail; the minimal history breaks only the first.
    Both rows carry a counterexample whose reproducer exists, and the root causes name their clauses whole."""
    hunt = hunt_on("earliest_ignores_retention")
    minimal = after_retention(ListOffsets("t", target=-2))
    # the log reads empty, so EARLIEST must answer its end, as LATEST does: the invariant over reads judges it
    searched = after_retention(Fetch("t"), ListOffsets("t", target=-2), ListOffsets("t", target=-1))
    seen = unexplained(hunt, searched)
    assert "KIP-33.read-log-start" in {v.clause for v in seen}
    hunt.tally.add(searched, judge(hunt.impl, [searched], hunt.clauses("kafka-4"))[0], [])
    finding = engine.Finding(unexplained(hunt, minimal), minimal)
    assert "KIP-33.read-log-start" not in {v.clause for v in finding.verdicts}
    spec = "ktc.suites.selftest.mutants:earliest_ignores_retention"
    assert command.finish(tmp_path, hunt, engine.Outcome(finding, "a failure nothing explains"), 1.0, spec) == 1
    rows = [r for r in json.loads((tmp_path / "results.json").read_text())["rows"] if r["verdict"] == "fail"]
    assert {r["clause"] for r in rows} >= {"KIP-33.list-offsets-earliest", "KIP-33.read-log-start"}
    findings = {f["clause"]: f for f in json.loads((tmp_path / "hunt.json").read_text())["findings"]}
    for r in rows:
        assert r["counterexample"], f"{r['clause']}: a fail row without a counterexample"
        found = findings[r["counterexample"]["clause"]]
        assert r["clause"] in found["clauses"] and Path(found["script"]).is_file()
        assert r["replay"] == f"python3 {found['script']} --bootstrap HOST:PORT"
    earliest = findings["KIP-33.list-offsets-earliest"]  # a lookup diverged: UnifiedLogTest's style
    assert Path(earliest["test"]).name.startswith("UnifiedLog"), earliest["test"]
    assert "assertEquals(List.of(1L, -1L), listOffsets(log, -2L))" in Path(earliest["test"]).read_text()
    if shutil.which("javac") is not None:
        assert all(f["test_check"].startswith("compiles with javac") for f in findings.values()), findings
    shown = capsys.readouterr().out
    assert "KIPN" not in shown and "explained: see hunt.json" not in shown, shown


def test_a_root_cause_without_a_divergence_keeps_the_clause_s_digits():
    row = {"clause": "KIP-33.read-log-start", "reason": None, "counterexample": None}
    assert cause_of(row) == "KIP-33.read-log-start"


def folder_for(tmp_path: Path, implementation: str) -> Path:
    """A finding's folder as a hunt writes it (after_bound_exclusive's), said to be found on ``implementation``."""
    hunt = hunt_on("after_bound_exclusive")
    finding = engine.Finding(unexplained(hunt, at_after_bound()), at_after_bound())
    folder = tmp_path / finding.verdicts[0].clause
    report.evidence(folder, hunt, finding, hunt.impl.run([at_after_bound()])[0])
    cx = json.loads((folder / "counterexample.json").read_text())
    (folder / "counterexample.json").write_text(json.dumps({**cx, "implementation": implementation}))
    return folder


def filled(text: str, section: str) -> bool:
    """The section's heading or field is there and something follows it before the next heading."""
    for line in text.splitlines():
        if line.startswith("| ") and line.split("|")[1].strip() == section:
            return bool(line.split("|")[2].strip())
    if "Title:" in text and section == "Title":
        return bool(text.split("Title:", 1)[1].splitlines()[0].strip())
    marks = [f"# {section}", f"## {section}", f"### {section}", f"**{section}**"]
    for mark in marks:
        if mark in text:
            rest = text.split(mark, 1)[1].split("\n#", 1)[0].split("\n**", 1)[0]
            return bool(rest.strip())
    return False


def test_a_kfake_finding_is_an_issue_with_a_go_test_that_builds(tmp_path):
    if shutil.which("go") is None:
        pytest.skip("unexercised: go is not on PATH, so the kfake test cannot be built")
    from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION

    folder = folder_for(tmp_path, "kfake")
    script = folder / "reproduce.py"  # as found on the kfake ktc builds
    script.write_text(script.read_text().replace("after_bound_exclusive mutant", f"kfake {KFAKE_VERSION}"))
    written = draft.write(folder)
    text = Path(written["draft"]).read_text()
    assert Path(written["draft"]).name == "ISSUE.md"
    missing = [s for s in draft.SECTIONS["kfake"] if not filled(text, s)]
    assert not missing, text
    assert written["test_check"].startswith("builds with go vet in kfake"), written["test_check"]
    assert "ktc" not in text.lower() and "ktc" not in Path(written["test"]).read_text().lower()


def test_the_setup_warm_up_imports_what_a_finding_s_test_does_and_builds():
    """``./run setup`` fills Go's caches with this test's build; it must import every package a finding's test does
    (else the hunt's first check still compiles one cold) and build in the kfake ktc pins."""
    if shutil.which("go") is None:
        pytest.skip("unexercised: go is not on PATH, so the warm-up test cannot be built")
    from ktc.hunt import go_test
    from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION

    assert go_test.WARM_TEST.startswith(go_test.HEADER)  # Go refuses an unused import: the build checks each is used
    assert go_test.warm(KFAKE_VERSION).startswith("builds with go vet in kfake")


def test_a_tansu_finding_is_an_issue_in_its_bug_report_form(tmp_path):
    folder = folder_for(tmp_path, "tansu")
    text = Path(draft.write(folder)["draft"]).read_text()
    missing = [s for s in draft.SECTIONS["tansu"] if not filled(text, s)]
    assert not missing, text
    assert "ktc" not in text.lower()


def test_triage_relaxes_the_configs_an_older_release_refuses_and_says_why(tmp_path, monkeypatch):
    """A release that knows neither bound refuses the first it meets; each is relaxed in turn, and the verdict says
    which and why the history as it is could not run."""
    folder = folder_for(tmp_path, "after_bound_exclusive")
    unknown = ["message.timestamp.before.max.ms", "message.timestamp.after.max.ms"]
    runs = []

    def fake_run(script, version, defaults=()):
        runs.append(defaults)
        refused = [name for name in unknown if name not in defaults]
        if refused:
            return 3, f"COULD NOT RUN: InvalidConfigurationError: Unknown topic config name: {refused[0]}\n"
        return 0, "...\nNOT REPRODUCED: the broker answers step [0] otherwise than the finding records\n"

    monkeypatch.setattr(triage, "run_on", fake_run)
    verdicts = triage.triage(folder, ["3.5.2"])
    assert runs == [(), (unknown[0],), tuple(sorted(unknown))]
    said = verdicts["3.5.2"]
    assert said.startswith(f"not affected (with {', '.join(sorted(unknown))} at Kafka 3.5.2's defaults"), said
    assert said.endswith(f"could not run (exit 3): COULD NOT RUN: InvalidConfigurationError: Unknown topic config "
                         f"name: {unknown[0]})")  # fmt: skip
    assert "3.5.2" in (folder / "JIRA.md").read_text()


def test_triage_gives_up_when_every_config_is_relaxed_and_says_why(tmp_path, monkeypatch):
    folder = folder_for(tmp_path, "after_bound_exclusive")
    monkeypatch.setattr(triage, "run_on", lambda script, version, defaults=(): (3, "COULD NOT RUN: OSError: down\n"))
    said = triage.triage(folder, ["3.5.2"])["3.5.2"]
    assert said.startswith("could not run (exit 3): COULD NOT RUN: OSError: down (with ") and "as the history" in said


def test_the_reproducer_leaves_a_config_at_the_broker_s_default_when_asked(tmp_path):
    folder = folder_for(tmp_path, "after_bound_exclusive")
    done = subprocess.run(
        [sys.executable, str(folder / "reproduce.py"), "--bootstrap", "127.0.0.1:1", "--default-config", "x.y"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3 and "Topic configs left at this broker's defaults: x.y" in done.stdout, done.stdout


def test_the_java_test_asserts_the_kip_s_answer_for_the_produce_that_diverged(tmp_path):
    folder = folder_for(tmp_path, "after_bound_exclusive")
    cx = json.loads((folder / "counterexample.json").read_text())
    from ktc.hunt import java_test
    from ktc.specs.clauses import all_clauses

    text = java_test.source(from_data(cx["history"]), 1, "LogValidatorXTest", all_clauses()[cx["clause"]])
    assert "long afterMaxMs = 86400000L;" in text and f"builder.append({START + 86_400_000}L, null" in text
    assert f"long now = {START}L;" in text and "assertEquals(" in text and "assertThrows" not in text.split("@Test")[1]
