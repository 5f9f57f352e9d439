"""A finding's report draft, in the form of the project it is for, generated from what its folder holds: the
counterexample (``counterexample.json``: the history, the first divergence, the clause), the answers the reproducer
compares (``reproduce.py``'s data: each step's answer from the broker it was found on and the KIP's), and the triage
(``triage.json``, once ``python -m ktc.hunt.triage`` has run).  Apache Kafka gets a JIRA (its fields, then the
description: steps, expected, actual, root cause hint, proposed test) with a ``LogValidatorTest``-style test compiled
against a release's jars (java_test.py); franz-go's kfake a GitHub issue with a Go test in ``pkg/kfake``'s style
built with ``go vet`` (go_test.py); tansu a GitHub issue in its repository's form (steps, expected, actual, the
standalone reproducer).  The drafts speak of the broker, the KIP and the reproducer only."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from ktc.hunt import go_test, java_test, steps, unified_log_test
from ktc.hunt.under_test import under_test
from ktc.judge.serialize import from_data
from ktc.reference.types import History, ListOffsets
from ktc.specs.clauses import Clause, all_clauses

DRAFTS = {"kafka": "JIRA.md", "kfake": "ISSUE.md", "tansu": "ISSUE.md"}
TRACKERS = {
    "kafka": "https://issues.apache.org/jira/projects/KAFKA (and https://github.com/apache/kafka/pulls)",
    "kfake": "https://github.com/twmb/franz-go/issues and its pull requests",
    "tansu": "https://github.com/nisshi-io/nisshi/issues and its pull requests (tansu-io/tansu's history is there)",
}
# the sections a draft must fill, per project (suites/selftest/test_hunt_draft.py checks each is non-empty)
SECTIONS = {
    "kafka": ("Summary", "Component/s", "Affects Version/s", "Description", "Steps to reproduce", "Expected",
              "Actual", "Root cause hint", "Proposed test", "Before filing"),
    "kfake": ("Title", "What happens", "Steps to reproduce", "Expected", "Actual", "Where", "Test", "Before filing"),
    "tansu": ("Title", "Describe the bug", "To Reproduce", "Expected behavior", "Actual behavior", "Where",
              "Before filing"),
}  # fmt: skip


@dataclass(frozen=True)
class Material:
    """What a draft is generated from: the folder's counterexample, reproducer data and triage."""

    folder: Path
    clause: Clause
    history: History
    divergence: dict  # the first divergence, or the clause's own mismatch when it has none
    script: dict  # reproduce.py's DATA
    triage: dict[str, str]
    implementation: str


def project(implementation: str) -> str:
    """Whose conventions a finding on ``implementation`` is written in (a mutant or the reference: Kafka's)."""
    return implementation if implementation in ("kfake", "tansu") else "kafka"


def script_data(path: Path) -> dict:
    """reproduce.py's DATA, read without running it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DATA":
            assert isinstance(node.value, ast.Call), "DATA = json.loads(...)"
            return json.loads(ast.literal_eval(node.value.args[0]))
    raise ValueError(f"{path} holds no DATA")


def load(folder: Path) -> Material:
    cx = json.loads((folder / "counterexample.json").read_text())
    triage = folder / "triage.json"
    m = cx["mismatch"]
    divergence = cx.get("first_divergence") or {
        "op_index": m["op_index"], "op_kind": "", "field": m["what"], "expected": m["expected"],
        "observed": m["observed"],
    }  # fmt: skip
    return Material(
        folder,
        all_clauses()[cx["clause"]],
        from_data(cx["history"]),
        divergence,
        script_data(folder / "reproduce.py"),
        json.loads(triage.read_text()) if triage.is_file() else {},
        cx["implementation"],
    )


def write(folder: Path) -> dict[str, str]:
    """The draft (and its test) written into ``folder``: {draft, test, test_check}."""
    material = load(folder)
    kind = project(material.implementation)
    test, check = write_test(kind, material)
    text = RENDER[kind](material, test, check)
    (folder / DRAFTS[kind]).write_text(text)
    return {"draft": str(folder / DRAFTS[kind]), "test": str(test or ""), "test_check": check}


def write_test(kind: str, m: Material) -> tuple[Path | None, str]:
    at = m.divergence["op_index"]
    if kind == "kafka" and isinstance(m.history.ops[at], ListOffsets):
        return unified_log_test.write(m.folder, m.history, at, m.clause)
    if kind == "kafka":
        return java_test.write(m.folder, m.history, at, m.clause)
    if kind == "kfake":
        return go_test.write(m.folder, m.script, m.clause)
    return None, "none: tansu's issues carry the standalone reproducer"


# The parts every draft shares ----------------------------------------------------------------------------


def quote(clause: Clause) -> str:
    text = " ".join(clause.quote.split())
    if clause.quote_kind == "kip":
        return f'{clause.kip} says: "{text}"'
    return f"Apache Kafka's reference implementation ({clause.quote_url}) does: `{text}`"


def found_on(m: Material) -> str:
    return m.script["found_on"]


def affected(m: Material) -> str:
    """From the triage when it ran, else the version it was found on."""
    if not m.triage:
        return f"{found_on(m)} (the version it was found on; no other version tried yet)"
    hit = [v for v, verdict in m.triage.items() if verdict.startswith("affected")]
    rest = [f"{v} ({verdict})" for v, verdict in m.triage.items() if not verdict.startswith("affected")]
    return (
        ", ".join(hit) + (f"; not: {', '.join(rest)}" if rest else "") if hit else "none reproduced: " + ", ".join(rest)
    )


def symptom(m: Material) -> str:
    d = m.divergence
    op = m.history.ops[d["op_index"]]
    observed, expected = steps.value(d["field"], d["observed"]), steps.value(d["field"], d["expected"])
    return f"{steps.what(op)} answers {d['field']} {observed} where {expected} is due"


def before_filing(kind: str, m: Material, heading: str) -> list[str]:
    """Where to search, and for what, before calling it new: the draft claims no search it did not make."""
    words = [
        m.clause.kip,
        m.divergence["field"].split(".")[-1].split("[")[0],
        steps.what(m.history.ops[m.divergence["op_index"]]),
    ]
    return [
        heading,
        "",
        f"Not searched yet. Search {TRACKERS[kind]} for {', '.join(f'`{w}`' for w in words)} and the symptom's own",
        "words, say here what was found, and drop this finding if a report or fix already covers it.",
        "",
    ]


def reproducer_lines() -> list[str]:
    return [
        "The attached `reproduce.py` (Python 3 and kafka-python) replays the steps against any broker:",
        "`python3 reproduce.py --bootstrap HOST:PORT`. It prints each step's answer next to the expected one and",
        "ends with REPRODUCED (exit 1) only when the broker answers every step as described here; a broker that",
        "answers as the KIP does prints NOT REPRODUCED (exit 0).",
    ]


# Apache Kafka: a JIRA -------------------------------------------------------------------------------------


def kafka(m: Material, test: Path | None, check: str) -> str:
    test_class, cls, method = under_test(m.clause.id)
    summary = f"{m.clause.kip}: {symptom(m)}"[:250]
    return "\n".join(
        [
            f"# {summary}",
            "",
            "| Field | Value |",
            "|---|---|",
            "| Project | KAFKA |",
            "| Issue Type | Bug |",
            f"| Summary | {summary} |",
            "| Component/s | core |",
            f"| Affects Version/s | {affected(m)} |",
            "",
            "## Description",
            "",
            f"{m.clause.statement} {quote(m.clause)}",
            "",
            f"On {found_on(m)} this does not hold: {symptom(m)}.",
            "",
            "### Steps to reproduce",
            "",
            *steps.numbered(m.history),
            "",
            "### Expected",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "expected"),
            "",
            "### Actual",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "found"),
            "",
            "### Root cause hint",
            "",
            f"The answer is decided in `{cls.rsplit('.', 1)[-1]}#{method}` ({cls}); its test class is `{test_class}`.",
            f"The first answer that departs is step {steps.step_number(m.history, m.divergence['op_index'])}, "
            f"field `{m.divergence['field']}`: every later difference follows from it.",
            *([f"Kafka's code for this rule: {m.clause.quote_url}"] if m.clause.quote_url else []),
            "",
            "### Proposed test",
            "",
            f"`{test.name if test else 'none'}`, {style(test, test_class)} ({check}).",
            "",
            "```java",
            test.read_text().split("\n", 17)[-1].strip() if test else "",
            "```",
            "",
            "### Reproducer",
            "",
            *reproducer_lines(),
            "",
            *before_filing("kafka", m, "### Before filing"),
        ]
    )


def style(test: Path | None, test_class: str) -> str:
    """Whose style the test is in, and what it pins when the answer is a read's but the test validates a produce."""
    if test is not None and test.name.startswith("UnifiedLog"):
        return "in `UnifiedLogTest`'s style"
    if test_class == "LogValidatorTest":
        return "in `LogValidatorTest`'s style"
    return f"in `LogValidatorTest`'s style: it pins the batches as validated, which `{test_class}`'s read answers from"


# kfake: a GitHub issue of franz-go ------------------------------------------------------------------------


def kfake(m: Material, test: Path | None, check: str) -> str:
    title = f"kfake: {symptom(m)}"[:200]
    return "\n".join(
        [
            f"# Title: {title}",
            "",
            "## What happens",
            "",
            f"{m.clause.statement} {quote(m.clause)} On kfake {found_on(m)}, {symptom(m)}.",
            "",
            "## Steps to reproduce",
            "",
            *steps.numbered(m.history),
            "",
            "## Expected",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "expected"),
            "",
            "## Actual",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "found"),
            "",
            "## Where",
            "",
            f"The step that departs first is step {steps.step_number(m.history, m.divergence['op_index'])} "
            f"(`{m.divergence['field']}`), answered by pkg/kfake's handler of that request.",
            "",
            "## Test",
            "",
            f"`{test.name if test else 'none'}` for pkg/kfake ({check}):",
            "",
            "```go",
            test.read_text().strip() if test else "",
            "```",
            "",
            *reproducer_lines(),
            "",
            *before_filing("kfake", m, "## Before filing"),
        ]
    )


# tansu: a GitHub issue in its bug report template ---------------------------------------------------------


def tansu(m: Material, test: Path | None, check: str) -> str:
    return "\n".join(
        [
            f"# Title: {symptom(m)}"[:200],
            "",
            "**Describe the bug**",
            "",
            f"{m.clause.statement} {quote(m.clause)} On tansu {found_on(m)}, {symptom(m)}.",
            "",
            "**To Reproduce**",
            "",
            *steps.numbered(m.history),
            "",
            *reproducer_lines(),
            "",
            "**Expected behavior**",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "expected"),
            "",
            "**Actual behavior**",
            "",
            *steps.answer_lines(m.history, m.script, m.divergence, "found"),
            "",
            "**Where**",
            "",
            f"The step that departs first is step {steps.step_number(m.history, m.divergence['op_index'])} "
            f"(`{m.divergence['field']}`).",
            "",
            *before_filing("tansu", m, "**Before filing**"),
        ]
    )


RENDER = {"kafka": kafka, "kfake": kfake, "tansu": tansu}
